//! Schema-only types: the schemas of the headers the document declares, named after the type.

use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::PartialSchema;

use crate::headers::{IDEMPOTENCY_KEY_MAX_LEN, LISTING_CACHE_CONTROL, REQUEST_ID_MAX_LEN};

/// Schema of the `Idempotency-Key` request header.
#[derive(Debug)]
pub struct IdempotencyKey;

impl PartialSchema for IdempotencyKey {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(
                "A key of the caller's choosing, unique per deletion (a UUID, say): 1 to 255 \
                 visible ASCII characters, optionally in double quotes (the draft's \
                 structured-field form; the quotes are not part of the key).",
            ))
            .pattern(Some(format!(
                "^(\"[!#-\\[\\]-~]{{1,{IDEMPOTENCY_KEY_MAX_LEN}}}\"|[!#-\\[\\]-~]{{1,{IDEMPOTENCY_KEY_MAX_LEN}}})$"
            )))
            .min_length(Some(1))
            .max_length(Some(IDEMPOTENCY_KEY_MAX_LEN + 2))
            .examples([serde_json::json!("8e03978e-40d5-43e8-bc93-6894a57f9324")])
            .into()
    }
}

/// Schema of the `Idempotent-Replayed` response header.
#[derive(Debug)]
pub struct IdempotentReplayed;

impl PartialSchema for IdempotentReplayed {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .enum_values(Some(["true"]))
            .into()
    }
}

/// Schema of the `X-Request-Id` response header: always a valid request id.
#[derive(Debug)]
pub struct RequestId;

impl PartialSchema for RequestId {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(
                "A request id: 1 to 128 letters, digits, '.', '_', ':' or '-'. The service \
                 echoes a valid one it receives, and makes a new one (26 characters) otherwise.",
            ))
            .pattern(Some(format!("^[A-Za-z0-9._:-]{{1,{REQUEST_ID_MAX_LEN}}}$")))
            .min_length(Some(1))
            .max_length(Some(REQUEST_ID_MAX_LEN))
            .into()
    }
}

/// Schema of the `X-Request-Id` request header: any value is accepted (none is refused), and
/// only a valid request id ([`crate::headers::is_valid_request_id`]) is echoed.
#[derive(Debug)]
pub struct CallerRequestId;

impl PartialSchema for CallerRequestId {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(format!(
                "A request id of the caller's choosing. Any value is accepted: one of 1 to \
                 {REQUEST_ID_MAX_LEN} letters, digits, '.', '_', ':' or '-' is echoed in the \
                 `X-Request-Id` response header (and the listing's `id`); any other value is \
                 replaced by a new id (26 characters), as a missing header is. Its length is \
                 bounded only by the request head's limit (32 KiB by default, set by the \
                 operator), beyond which the HTTP layer answers 431."
            )))
            .examples([serde_json::json!("checkout-7f3a")])
            .into()
    }
}

/// Schema of the `ETag` and `If-None-Match` headers of the zone listing.
#[derive(Debug)]
pub struct EntityTag;

/// Longest `If-None-Match` value a client should send.
pub const ENTITY_TAG_MAX_LEN: usize = 1024;

/// One entity tag, a comma-separated list of them, or `*` (HTTP's `If-None-Match` grammar).
const ENTITY_TAGS_PATTERN: &str =
    r#"^(\*|(W/)?"[\x21\x23-\x7e]*"([ \t]*,[ \t]*(W/)?"[\x21\x23-\x7e]*")*)$"#;

impl PartialSchema for EntityTag {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(
                "An entity tag as HTTP defines it, for example W/\"6c1e0f7a2b9d4e11\". The \
                 service's tags are weak; send one back unchanged in If-None-Match (several \
                 may be listed, separated by commas, or *).",
            ))
            .pattern(Some(ENTITY_TAGS_PATTERN))
            .min_length(Some(1))
            .max_length(Some(ENTITY_TAG_MAX_LEN))
            .examples([serde_json::json!("W/\"0a1b2c3d4e5f60718293a4b5\"")])
            .into()
    }
}

/// Schema of the `If-None-Match` request header of the listings: what the server accepts,
/// which is any value (the server never refuses one; see [`IfNoneMatch`]'s description). Only
/// the response's `ETag` ([`EntityTag`]) promises the entity-tag grammar.
#[derive(Debug)]
pub struct IfNoneMatch;

impl PartialSchema for IfNoneMatch {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(
                "Entity tags from earlier answers, for example W/\"6c1e0f7a2b9d4e11\" (several \
                 may be listed, separated by commas), or *. A listed tag equal to the current \
                 ETag (weak comparison) or * gives 304. Any other value is accepted, not \
                 refused: an empty, malformed, unmatched or long value gets the listing (200), \
                 as a missing header does. Its length is bounded only by the request head \
                 limit (32 KiB by default, set by the operator), past which the request is \
                 refused with 431.",
            ))
            .examples([serde_json::json!("W/\"0a1b2c3d4e5f60718293a4b5\"")])
            .into()
    }
}

/// Where a caller's kept request id shows besides the response header: the answer's body.
pub(super) const ECHOED_IN_BODY: &str = "the body's `id`";
/// Where a caller's kept request id shows besides the response header: the audit record.
pub(super) const ECHOED_IN_AUDIT_LOG: &str = "recorded in the audit log";

/// The description of an operation's `X-Request-Id` parameter, the same rule worded once:
/// `example` a request id, `echoed_in` where else a kept id shows.
pub(super) fn request_id_parameter(example: &str, echoed_in: &str) -> String {
    format!(
        "Optional request id of your own, for example `{example}`. A value of 1 to \
         {REQUEST_ID_MAX_LEN} characters of `[A-Za-z0-9._:-]` is echoed in the `X-Request-Id` \
         response header and {echoed_in}; any other value is not refused but replaced by a new \
         id. Leave it out to get a fresh one."
    )
}

/// The description of a listing's `If-None-Match` parameter: `example` an `ETag` of that
/// listing, `what` what the listing returns.
pub(super) fn if_none_match_parameter(example: &str, what: &str) -> String {
    format!(
        "An `ETag` from an earlier answer, for example `{example}`; a match (or `*`) gives 304. \
         Leave it out to get the {what}. Any other value, empty or malformed included, is not \
         refused: it gets the {what} (200)."
    )
}

/// Schema-only type: the `Cache-Control` of the zone listing.
#[derive(Debug)]
pub struct ListingCacheControl;

impl PartialSchema for ListingCacheControl {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .enum_values(Some([LISTING_CACHE_CONTROL]))
            .into()
    }
}

schema_named_after_type!(
    RequestId,
    CallerRequestId,
    EntityTag,
    IfNoneMatch,
    ListingCacheControl,
    IdempotencyKey,
    IdempotentReplayed
);
