//! The body of a successful zone listing.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Value of [`ZoneList::status`] on every successful listing.
pub const STATUS_SUCCESS: &str = "success";

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({
    "data": ["us-east-1a", "us-east-1b", "us-east-1c"],
    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
    "message": "3 zones in aws/us-east-1",
    "status": "success"
}))]
pub struct ZoneList {
    /// The region's zones in catalog order. Empty (still 200) for a region without zones.
    pub data: Vec<String>,
    /// The request id: the same value as the `X-Request-Id` response header. Quote it when
    /// reporting a problem.
    #[serde(default)]
    #[schema(required = true)]
    pub id: String,
    /// Human-readable summary such as `3 zones in aws/us-east-1`. Do not parse it.
    #[serde(default)]
    #[schema(required = true)]
    pub message: String,
    /// Always `success` on a 200 answer.
    #[serde(default)]
    #[schema(required = true, example = "success")]
    pub status: String,
}
