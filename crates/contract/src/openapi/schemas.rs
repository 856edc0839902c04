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
                 replaced by a new id (26 characters), as a missing header is."
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
    ListingCacheControl,
    IdempotencyKey,
    IdempotentReplayed
);
