//! The bodies of the discovery listings: the catalog's providers, and a provider's regions.
//!
//! They use the zone listing's envelope on purpose (`data`, `id`, `message`, `status`, with
//! `data` an array of id strings): a client reads all three listings with one code path, and
//! each id in `data` is exactly what the next request's path needs. The catalog's display
//! names are operator data and stay out of the answers, as they do for zones.

use crate::{ProviderId, RegionId};

/// Most providers a catalog may hold: the catalog refuses more, so a listing never holds more.
pub const MAX_PROVIDERS: usize = 1000;

/// Most regions a provider may have: the catalog refuses more, so a listing never holds more.
pub const MAX_REGIONS_PER_PROVIDER: usize = 1000;

envelope! {
    /// The providers of the catalog, in catalog order.
    ///
    /// Decoded as tolerantly as [`crate::ZoneList`]: `id`, `message` and `status` default to
    /// empty strings when absent.
    ///
    /// ```
    /// use appzone_contract::ProviderList;
    /// let list: ProviderList = serde_json::from_str(r#"{"data":["aws","gcp"]}"#).unwrap();
    /// assert_eq!(list.data, ["aws", "gcp"]);
    /// ```
    #[schema(
        description = "The providers of the catalog, in catalog order, with the request id. The \
    same envelope as `ZoneList`, so one code path reads every listing; each entry of `data` is a \
    `providerId` to use in the next request's path."
    )]
    #[schema(example = json!({
        "data": ["aws", "gcp", "azure"],
        "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
        "message": "3 providers",
        "status": "success"
    }))]
    pub struct ProviderList {
        /// The provider ids in catalog order (the order of the catalog the operator imported).
        #[schema(max_items = 1000, value_type = Vec<ProviderId>)]
        pub data: Vec<String>,
        message(256): "Human-readable summary such as `3 providers`. Do not parse it.",
    }
}

envelope! {
    /// The regions of one provider, in catalog order.
    ///
    /// Decoded as tolerantly as [`crate::ZoneList`]: `id`, `message` and `status` default to
    /// empty strings when absent.
    ///
    /// ```
    /// use appzone_contract::RegionList;
    /// let list: RegionList = serde_json::from_str(r#"{"data":["us-east-1"]}"#).unwrap();
    /// assert_eq!(list.data, ["us-east-1"]);
    /// ```
    #[schema(
        description = "The regions of one provider, in catalog order, with the request id. The \
    same envelope as `ZoneList`, so one code path reads every listing; each entry of `data` is a \
    `regionId` to use in the zone listing's path."
    )]
    #[schema(example = json!({
        "data": ["us-east-1", "us-east-2", "us-west-1", "us-west-2"],
        "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
        "message": "4 regions in aws",
        "status": "success"
    }))]
    pub struct RegionList {
        /// The provider's region ids in catalog order. Empty (still 200) for a provider without
        /// regions.
        #[schema(max_items = 1000, value_type = Vec<RegionId>)]
        pub data: Vec<String>,
        message(256): "Human-readable summary such as `4 regions in aws`. Do not parse it.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema attributes spell the limits as literals (utoipa needs them there).
    #[test]
    fn documented_limits_are_the_catalog_limits() {
        let doc = crate::openapi::document();
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["ProviderList"]["properties"]["data"]["maxItems"],
            MAX_PROVIDERS
        );
        assert_eq!(
            schemas["RegionList"]["properties"]["data"]["maxItems"],
            MAX_REGIONS_PER_PROVIDER
        );
        assert_eq!(
            schemas["ZoneList"]["properties"]["data"]["maxItems"],
            crate::MAX_ZONES_PER_REGION
        );
    }
}
