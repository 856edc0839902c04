//! The breaking-change rules of `cargo xtask api-compat`: one row each, with the id a finding
//! prints and the promise the rule keeps.

use std::fmt;

/// Declares [`Rule`] from one table, so a rule's variant, id and description cannot drift
/// apart.
macro_rules! rules {
    ($($variant:ident => $id:literal, $description:literal;)*) => {
        /// One kind of breaking change (see the table of the module docs).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub(crate) enum Rule {
            $($variant,)*
        }

        impl Rule {
            /// Every rule, in the order of the module's table.
            #[cfg(test)]
            pub(crate) const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// The kebab-case name a finding prints, modelled on oasdiff's check ids.
            pub(crate) fn id(self) -> &'static str {
                match self {
                    $(Rule::$variant => $id,)*
                }
            }

            /// What the rule forbids, in one line.
            pub(crate) fn description(self) -> &'static str {
                match self {
                    $(Rule::$variant => $description,)*
                }
            }
        }
    };
}

rules! {
    PathRemoved => "path-removed",
        "a path under /api/v1 is gone (renamed counts as gone)";
    OperationRemoved => "operation-removed",
        "a method of a path is gone";
    OperationIdChanged => "operation-id-changed",
        "an operationId changed or vanished: generated clients' method names break";
    SecurityChanged => "security-changed",
        "an operation now wants credentials that the released document did not accept";
    RequestParameterRemoved => "request-parameter-removed",
        "a parameter is gone: clients that send it may be refused";
    NewRequiredRequestParameter => "new-required-request-parameter",
        "a new parameter is required";
    RequestParameterBecameRequired => "request-parameter-became-required",
        "an optional parameter became required";
    RequestBodyBecameRequired => "request-body-became-required",
        "a request body is now required";
    RequestMediaTypeRemoved => "request-media-type-removed",
        "a request body media type is no longer accepted";
    NewRequiredRequestProperty => "new-required-request-property",
        "a request body has a new required property";
    RequestPropertyBecameRequired => "request-property-became-required",
        "an optional request body property became required";
    RequestEnumValueRemoved => "request-enum-value-removed",
        "a request input accepts fewer enum values (or an enum now restricts it)";
    RequestUnionBranchRemoved => "request-union-branch-removed",
        "a request input lost a oneOf/anyOf branch";
    TypeChanged => "type-changed",
        "a type changed: a request accepts fewer types, or a response may send new ones";
    FormatChanged => "format-changed",
        "a format was added or changed on a request input, or changed or dropped on a response";
    PatternChanged => "pattern-changed",
        "a pattern was added or changed on a request input, or changed or dropped on a response";
    MaxLengthDecreased => "max-length-decreased",
        "a request input's maxLength was added or lowered";
    MinLengthIncreased => "min-length-increased",
        "a request input's minLength was raised";
    MaximumDecreased => "maximum-decreased",
        "a request input's maximum (or exclusiveMaximum) was added or lowered";
    MinimumIncreased => "minimum-increased",
        "a request input's minimum (or exclusiveMinimum) was added or raised";
    MaxItemsDecreased => "max-items-decreased",
        "a request input's maxItems was added or lowered";
    MinItemsIncreased => "min-items-increased",
        "a request input's minItems was raised";
    ResponseStatusRemoved => "response-status-removed",
        "a documented status of an operation is gone";
    ResponseMediaTypeRemoved => "response-media-type-removed",
        "a response media type is gone";
    ResponsePropertyRemoved => "response-property-removed",
        "a response body property is gone (at any depth, in arrays too)";
    ResponsePropertyNoLongerRequired => "response-property-no-longer-required",
        "a response property that was always sent may now be left out";
    ResponsePropertyBecameNullable => "response-property-became-nullable",
        "a response value may now be null";
    ResponseBoundLoosened => "response-bound-loosened",
        "a response bound (maxLength, minLength, maximum, minimum, maxItems, minItems) was \
         loosened or dropped";
    ResponseUnionBranchAdded => "response-union-branch-added",
        "a response oneOf/anyOf gained a branch: clients may get a shape they do not know";
    ResponseHeaderRemoved => "response-header-removed",
        "a documented response header is gone";
    ResponseHeaderNoLongerRequired => "response-header-no-longer-required",
        "a response header that was always sent may now be left out";
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}
