//! Schema comparison: a baseline schema against the current one, for a request input or for a
//! response, at any depth.
//!
//! The direction decides what breaks. A request input must accept everything it accepted
//! before: a narrower type, a new or changed pattern, a tighter bound, a lost enum value or a
//! newly required property breaks clients. A response must promise everything it promised:
//! a wider type, null, a changed or dropped pattern, a looser bound, a removed or no longer
//! required property breaks clients.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{pointer, Comparer, Rule, MAX_DEPTH};

/// Who sends the value the schema describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dir {
    /// The client sends it (parameters, request bodies): it may only accept more.
    Request,
    /// The server sends it (response bodies and headers): it may only promise more.
    Response,
}

/// The bound keywords: the keyword, whether it bounds from above, and the rule when a request
/// input tightens it. (A response loosening any of them is `response-bound-loosened`.)
const BOUNDS: [(&str, bool, Rule); 8] = [
    ("maxLength", true, Rule::MaxLengthDecreased),
    ("minLength", false, Rule::MinLengthIncreased),
    ("maximum", true, Rule::MaximumDecreased),
    ("exclusiveMaximum", true, Rule::MaximumDecreased),
    ("minimum", false, Rule::MinimumIncreased),
    ("exclusiveMinimum", false, Rule::MinimumIncreased),
    ("maxItems", true, Rule::MaxItemsDecreased),
    ("minItems", false, Rule::MinItemsIncreased),
];

/// One schema with its `$ref` followed and its `allOf` members merged: the keywords this
/// checker compares, whichever member states them.
#[derive(Default)]
struct View<'v> {
    /// `None`: any type.
    types: Option<BTreeSet<&'v str>>,
    format: Option<&'v str>,
    pattern: Option<&'v str>,
    /// `enum`, or `const` as an enum of one.
    values: Option<Vec<&'v Value>>,
    bounds: BTreeMap<&'static str, f64>,
    properties: BTreeMap<&'v str, &'v Value>,
    required: BTreeSet<&'v str>,
    items: Option<&'v Value>,
    /// `oneOf` and `anyOf` together: either way a value matches one of them.
    branches: Vec<&'v Value>,
}

impl<'v> View<'v> {
    fn of(doc: &'v Value, schema: &'v Value) -> Self {
        let mut view = View::default();
        let mut nullable = false;
        view.collect(doc, schema, &mut nullable, 0);
        // OpenAPI 3.0's `nullable: true` is 3.1's `"null"` in the type list.
        if nullable {
            if let Some(types) = &mut view.types {
                types.insert("null");
            }
        }
        view
    }

    /// Adds one schema's keywords: its `$ref` target's first, then its `allOf` members', then
    /// its own (3.1 allows keywords beside `$ref`, e.g. a `description`; they all apply).
    /// Where several state a bound, the tightest holds, as every member must match.
    fn collect(&mut self, doc: &'v Value, schema: &'v Value, nullable: &mut bool, depth: usize) {
        let Some(obj) = schema.as_object() else {
            return; // `true`, `{}` or an absent schema: anything goes.
        };
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(target) = obj
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| pointer(doc, r))
        {
            self.collect(doc, target, nullable, depth + 1);
        }
        for member in obj
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.collect(doc, member, nullable, depth + 1);
        }
        let types: Option<BTreeSet<&str>> = match obj.get("type") {
            Some(Value::String(t)) => Some(BTreeSet::from([t.as_str()])),
            Some(Value::Array(ts)) => Some(ts.iter().filter_map(Value::as_str).collect()),
            _ => None,
        };
        if let Some(types) = types {
            self.types = Some(match self.types.take() {
                Some(known) => known.intersection(&types).copied().collect(),
                None => types,
            });
        }
        *nullable |= obj.get("nullable").and_then(Value::as_bool) == Some(true);
        let text = |key: &str| obj.get(key).and_then(Value::as_str);
        self.format = text("format").or(self.format);
        self.pattern = text("pattern").or(self.pattern);
        if let Some(values) = obj.get("enum").and_then(Value::as_array) {
            self.values = Some(values.iter().collect());
        } else if let Some(value) = obj.get("const") {
            self.values = Some(vec![value]);
        }
        for (keyword, upper, _) in BOUNDS {
            let Some(n) = obj.get(keyword).and_then(Value::as_f64) else {
                continue;
            };
            let bound = self.bounds.entry(keyword).or_insert(n);
            *bound = if upper { bound.min(n) } else { bound.max(n) };
        }
        for (name, property) in obj
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            self.properties.insert(name, property);
        }
        let required = obj.get("required").and_then(Value::as_array);
        self.required
            .extend(required.into_iter().flatten().filter_map(Value::as_str));
        if let Some(items) = obj.get("items") {
            self.items = Some(items);
        }
        for key in ["oneOf", "anyOf"] {
            let branches = obj.get(key).and_then(Value::as_array);
            self.branches.extend(branches.into_iter().flatten());
        }
    }
}

impl<'a> Comparer<'a> {
    /// Compares `base` (of the baseline) with `cur` (of the current document) at `location`;
    /// `field` is the property path inside the body (`data[].id`), empty at its root.
    pub(super) fn schema(
        &mut self,
        dir: Dir,
        location: &str,
        field: &str,
        base: &'a Value,
        cur: &'a Value,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        // A pair of refs met again while it is being compared is a recursive schema: its
        // first comparison covers it.
        let guard = match (ref_of(base), ref_of(cur)) {
            (Some(b), Some(c)) => Some((b, c)),
            _ => None,
        };
        if let Some(pair) = guard {
            if self.in_progress.contains(&pair) {
                return;
            }
            self.in_progress.push(pair);
        }
        let b = View::of(self.base, base);
        let c = View::of(self.cur, cur);
        let at = subject(field);
        self.types(dir, location, field, &b, &c);
        self.text(
            dir,
            location,
            &at,
            Rule::FormatChanged,
            [b.format, c.format],
        );
        self.text(
            dir,
            location,
            &at,
            Rule::PatternChanged,
            [b.pattern, c.pattern],
        );
        self.bounds(dir, location, &at, &b, &c);
        if dir == Dir::Request {
            self.enum_values(location, &at, &b, &c);
        }
        self.properties(dir, location, field, &b, &c, depth);
        if let (Some(bi), Some(ci)) = (b.items, c.items) {
            self.schema(dir, location, &format!("{field}[]"), bi, ci, depth + 1);
        }
        self.branches(dir, location, field, &b, &c, depth);
        if guard.is_some() {
            self.in_progress.pop();
        }
    }

    fn types(&mut self, dir: Dir, location: &str, field: &str, b: &View<'_>, c: &View<'_>) {
        let at = subject(field);
        let from = show_types(b.types.as_ref());
        let to = show_types(c.types.as_ref());
        let detail = format!("{at}type changed from {from} to {to}");
        match (dir, &b.types, &c.types) {
            (_, None, None) => {}
            // A request input now restricted to some types, or a response no longer
            // restricted to its own.
            (Dir::Request, None, Some(_)) | (Dir::Response, Some(_), None) => {
                self.report(Rule::TypeChanged, location, detail);
            }
            (Dir::Request, Some(_), None) | (Dir::Response, None, Some(_)) => {}
            (Dir::Request, Some(before), Some(now)) => {
                if before.iter().any(|t| !accepts(now, t)) {
                    self.report(Rule::TypeChanged, location, detail);
                }
            }
            (Dir::Response, Some(before), Some(now)) => {
                let new: Vec<&str> = now
                    .iter()
                    .copied()
                    .filter(|t| !accepts(before, t))
                    .collect();
                if new == ["null"] {
                    let what = match field {
                        "" => "the value".to_owned(),
                        field => format!("property \"{field}\""),
                    };
                    let detail = format!("{what} may now be null");
                    self.report(Rule::ResponsePropertyBecameNullable, location, detail);
                } else if !new.is_empty() {
                    self.report(Rule::TypeChanged, location, detail);
                }
            }
        }
    }

    /// `format` and `pattern` (`rule` says which): a request input must not gain or change
    /// one (fewer values pass), a response must not change or drop one (clients may rely on
    /// it). Two patterns cannot be compared as languages, so any change counts.
    fn text(&mut self, dir: Dir, location: &str, at: &str, rule: Rule, values: [Option<&str>; 2]) {
        let [before, now] = values;
        let breaks = match dir {
            Dir::Request => now.is_some(),
            Dir::Response => before.is_some(),
        };
        if before == now || !breaks {
            return;
        }
        let keyword = if rule == Rule::FormatChanged {
            "format"
        } else {
            "pattern"
        };
        let show = |v: Option<&str>| v.map_or_else(|| "none".to_owned(), |s| format!("{s:?}"));
        let (from, to) = (show(before), show(now));
        self.report(
            rule,
            location,
            format!("{at}{keyword} changed from {from} to {to}"),
        );
    }

    fn bounds(&mut self, dir: Dir, location: &str, at: &str, b: &View<'_>, c: &View<'_>) {
        for (keyword, upper, request_rule) in BOUNDS {
            // No minLength or minItems is the same as 0.
            let floor = matches!(keyword, "minLength" | "minItems").then_some(0.0);
            let before = b.bounds.get(keyword).copied().or(floor);
            let now = c.bounds.get(keyword).copied().or(floor);
            let (rule, breaks) = match dir {
                Dir::Request => (request_rule, tighter(upper, before, now)),
                Dir::Response => (Rule::ResponseBoundLoosened, tighter(upper, now, before)),
            };
            if breaks {
                let (from, to) = (show_number(before), show_number(now));
                self.report(
                    rule,
                    location,
                    format!("{at}{keyword} changed from {from} to {to}"),
                );
            }
        }
    }

    /// Request inputs only: responses keep their enums open on purpose (see the module docs).
    fn enum_values(&mut self, location: &str, at: &str, b: &View<'_>, c: &View<'_>) {
        let Some(now) = &c.values else { return };
        let detail = match &b.values {
            None => format!(
                "{at}an enum now restricts the values to {}",
                show_values(now)
            ),
            Some(before) => {
                let lost: Vec<&Value> = before
                    .iter()
                    .copied()
                    .filter(|v| !now.contains(v))
                    .collect();
                if lost.is_empty() {
                    return;
                }
                format!("{at}value(s) {} are no longer accepted", show_values(&lost))
            }
        };
        self.report(Rule::RequestEnumValueRemoved, location, detail);
    }

    fn properties(
        &mut self,
        dir: Dir,
        location: &str,
        field: &str,
        b: &View<'a>,
        c: &View<'a>,
        depth: usize,
    ) {
        for (name, property) in &b.properties {
            let path = join(field, name);
            let Some(cur_property) = c.properties.get(name) else {
                // A request property that disappears is ignored (see the module docs).
                if dir == Dir::Response {
                    let detail = format!("property \"{path}\" was removed");
                    self.report(Rule::ResponsePropertyRemoved, location, detail);
                }
                continue;
            };
            if dir == Dir::Response && b.required.contains(name) && !c.required.contains(name) {
                let detail = format!("property \"{path}\" is no longer required");
                self.report(Rule::ResponsePropertyNoLongerRequired, location, detail);
            }
            self.schema(dir, location, &path, property, cur_property, depth + 1);
        }
        if dir == Dir::Request {
            for name in c.required.difference(&b.required) {
                let path = join(field, name);
                if b.properties.contains_key(name) {
                    let detail = format!("property \"{path}\" became required");
                    self.report(Rule::RequestPropertyBecameRequired, location, detail);
                } else {
                    let detail = format!("new required property \"{path}\"");
                    self.report(Rule::NewRequiredRequestProperty, location, detail);
                }
            }
        }
    }

    /// `oneOf`/`anyOf` branches, paired by `$ref` first and then by position. A request input
    /// must keep every branch; a response must not gain one.
    fn branches(
        &mut self,
        dir: Dir,
        location: &str,
        field: &str,
        b: &View<'a>,
        c: &View<'a>,
        depth: usize,
    ) {
        let mut unpaired: Vec<&'a Value> = c.branches.clone();
        let mut lost = Vec::new();
        let mut pairs = Vec::new();
        for &branch in &b.branches {
            let same = ref_of(branch)
                .and_then(|r| unpaired.iter().position(|other| ref_of(other) == Some(r)));
            match same {
                Some(i) => pairs.push((branch, unpaired.remove(i))),
                None => lost.push(branch),
            }
        }
        // What is left is paired in order: an inline branch edited in place stays a pair.
        let leftover = unpaired.len().min(lost.len());
        let gained: Vec<&'a Value> = unpaired.split_off(leftover);
        let lost_rest = lost.split_off(leftover);
        pairs.extend(lost.into_iter().zip(unpaired));
        let at = subject(field);
        match dir {
            Dir::Request => {
                for branch in lost_rest {
                    let detail = format!(
                        "{at}the oneOf/anyOf branch {} was removed",
                        describe(branch)
                    );
                    self.report(Rule::RequestUnionBranchRemoved, location, detail);
                }
            }
            Dir::Response => {
                for branch in gained {
                    let detail =
                        format!("{at}the oneOf/anyOf branch {} was added", describe(branch));
                    self.report(Rule::ResponseUnionBranchAdded, location, detail);
                }
            }
        }
        for (before, now) in pairs {
            self.schema(dir, location, field, before, now, depth + 1);
        }
    }
}

fn ref_of(schema: &Value) -> Option<&str> {
    schema.get("$ref").and_then(Value::as_str)
}

/// Whether a type list lets a value of type `t` through (`number` includes `integer`).
fn accepts(types: &BTreeSet<&str>, t: &str) -> bool {
    types.contains(t) || (t == "integer" && types.contains("number"))
}

/// Whether bound `b` is tighter than bound `a` (`None`: unbounded).
fn tighter(upper: bool, a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, Some(_)) => true,
        (Some(a), Some(b)) => {
            if upper {
                b < a
            } else {
                b > a
            }
        }
        (_, None) => false,
    }
}

/// `property "data[].id": ` for a property, nothing for the body or parameter itself.
fn subject(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("property \"{field}\": ")
    }
}

fn join(field: &str, name: &str) -> String {
    if field.is_empty() {
        name.to_owned()
    } else {
        format!("{field}.{name}")
    }
}

fn show_types(types: Option<&BTreeSet<&str>>) -> String {
    match types {
        None => "any".to_owned(),
        Some(types) if types.len() == 1 => format!("{:?}", types.iter().next().unwrap_or(&"")),
        Some(types) => format!("{types:?}"),
    }
}

fn show_number(n: Option<f64>) -> String {
    match n {
        None => "none".to_owned(),
        Some(n) => n.to_string(),
    }
}

fn show_values(values: &[&Value]) -> String {
    let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("[{}]", shown.join(", "))
}

/// A branch as a finding names it: its schema name, else its type.
fn describe(branch: &Value) -> String {
    if let Some(reference) = ref_of(branch) {
        return reference.rsplit('/').next().unwrap_or(reference).to_owned();
    }
    match branch.get("type") {
        Some(t) => format!("of type {t}"),
        None => "(an inline schema)".to_owned(),
    }
}
