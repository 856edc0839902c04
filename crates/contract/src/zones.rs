//! The body of a successful zone listing.

use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::PartialSchema;

use crate::ids::PROVIDER_REGION_PATTERN;

/// Most zones a region may have: the catalog refuses more, so a listing never holds more.
pub const MAX_ZONES_PER_REGION: usize = 100;

/// Value of [`ZoneList::status`] on every successful listing.
pub const STATUS_SUCCESS: &str = "success";

envelope! {
    /// The zones of one region, in catalog order.
    ///
    /// All four fields are always present in the server's answers. Deserialization is tolerant:
    /// `id`, `message` and `status` default to empty strings when absent, so a client built on this
    /// type also works against other implementations of the seed interface.
    ///
    /// ```
    /// use appzone_contract::ZoneList;
    /// let list: ZoneList = serde_json::from_str(r#"{"data":["us-east-1a"]}"#).unwrap();
    /// assert_eq!(list.data, ["us-east-1a"]);
    /// assert_eq!(list.id, "");
    /// ```
    #[schema(description = "The zones of one region, in catalog order, with the request id.")]
    #[schema(example = json!({
        "data": ["us-east-1a", "us-east-1b", "us-east-1c"],
        "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
        "message": "3 zones in aws/us-east-1",
        "status": "success"
    }))]
    pub struct ZoneList {
        /// The region's zones in catalog order. Empty (still 200) for a region without zones.
        #[schema(max_items = 100, value_type = Vec<ZoneId>)]
        pub data: Vec<String>,
        message(256): "Human-readable summary such as `3 zones in aws/us-east-1`. Do not parse it.",
    }
}

/// Schema-only type: a zone id, with the same rules as region ids.
#[derive(Debug)]
pub struct ZoneId;

impl PartialSchema for ZoneId {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(
                "Zone identifier, for example `us-east-1a`. Case-sensitive.",
            ))
            .pattern(Some(PROVIDER_REGION_PATTERN))
            .min_length(Some(1))
            .max_length(Some(63))
            .into()
    }
}

/// Schema-only type: the `status` of a zone listing, always `success`.
#[derive(Debug)]
pub struct ListingStatus;

impl PartialSchema for ListingStatus {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some("Always `success` on a 200 answer."))
            .enum_values(Some([STATUS_SUCCESS]))
            .into()
    }
}

schema_named_after_type!(ZoneId, ListingStatus);
