//! What runs where (API 1.3): a mapping of the kit's own stored with instance-type offerings
//! (AWS `describe-instance-type-offerings` by zone id, for aws/us-east-1), read back as counts,
//! served by `?offers=` and the `instance-types` listing, and refused as the contract says.
//! Whatever it stored it deletes at the end, whichever checks failed.

use appzone_contract::{paths, ErrorCode};
use http::Method;
use serde_json::{json, Value};

use crate::support::{done, skip, writer_key_or_skip};
use crate::support::{fresh_mapping_id, identities_path, mapping_path, PROVIDER, REGION};
use crate::wire::{Exchange, Kit, Req};
use crate::Outcome;

/// The pairs (zone name, zone id) of the kit's mapping.
const PAIRS: [(&str, &str); 2] = [("us-east-1a", "use1-az2"), ("us-east-1b", "use1-az4")];

/// The offerings stored: (instance type, zone id). p5.48xlarge in one zone only.
const OFFERED: [(&str, &str); 3] = [
    ("m7i.large", "use1-az2"),
    ("m7i.large", "use1-az4"),
    ("p5.48xlarge", "use1-az2"),
];

const STORED: (&str, &str) = (
    "zone_mapping_put_with_offerings_answers_counts_per_region",
    "A zone mapping may carry `offerings` in its `PUT` body ... a mapping's answers and \
     listings give counts per region (`offerings: [{region, instance_types, offerings}]`)",
);
const OFFERS: (&str, &str) = (
    "zone_identities_offers_keeps_the_zones_offering_every_type",
    "`GET .../zone-identities?mapping=A[&mapping=B]&offers=T1,T2` keeps the zones where every \
     mapping asked offers every type listed",
);
const LISTED: (&str, &str) = (
    "instance_types_lists_each_type_with_its_zone_ids",
    "`GET /api/v1/providers/{providerId}/regions/{regionId}/instance-types?mapping=A[&zone_id=Z]`: \
     `data` `[{instance_type, zone_ids}]` sorted by type ... `zone_id` keeps the types offered \
     in that zone",
);
const NOT_STORED: (&str, &str) = (
    "mapping_without_offerings_is_422_offerings_not_stored",
    "a mapping without offerings for that region: 422 `offerings_not_stored` naming it",
);
const WITHOUT_MAPPING: (&str, &str) = (
    "offers_without_a_mapping_is_400_invalid_query",
    "`offers` keeps the zones where every mapping asked offers every type: without a mapping \
     there is nothing to ask, 400 `invalid_query` naming the parameter",
);

/// Every check here, in the order they are reported.
pub(crate) const CHECKS: [(&str, &str); 5] = [STORED, OFFERS, LISTED, NOT_STORED, WITHOUT_MAPPING];

/// A mapping's `PUT` body: the pairs as `aws ec2 describe-availability-zones` prints them,
/// with `offerings` as `describe-instance-type-offerings --location-type availability-zone-id`
/// prints them, when given.
fn body(offerings: Option<&[(&str, &str)]>) -> Vec<u8> {
    let zones: Vec<Value> = PAIRS
        .iter()
        .map(|(name, id)| {
            json!({"RegionName": REGION, "ZoneName": name, "ZoneId": id,
                   "ZoneType": "availability-zone", "State": "available",
                   "OptInStatus": "opt-in-not-required"})
        })
        .collect();
    let mut body = json!({
        "provider": PROVIDER,
        "label": "appzone conformance kit",
        "output": {"AvailabilityZones": zones},
    });
    if let Some(offered) = offerings {
        let offerings: Vec<Value> = offered
            .iter()
            .map(|(instance_type, zone)| {
                json!({"InstanceType": instance_type, "LocationType": "availability-zone-id",
                       "Location": zone})
            })
            .collect();
        body["offerings"] = json!({"InstanceTypeOfferings": offerings});
    }
    body.to_string().into_bytes()
}

fn instance_types_path(query: &str) -> String {
    format!("/api/v1/providers/{PROVIDER}/regions/{REGION}/instance-types?{query}")
}

async fn get(
    kit: &mut Kit,
    key: &str,
    path: String,
    operation: &'static str,
) -> Result<Exchange, Outcome> {
    kit.send(Req::new(Method::GET, path).key(key).operation(operation))
        .await
}

async fn put(kit: &mut Kit, key: &str, id: &str, body: Vec<u8>) -> Result<Exchange, Outcome> {
    let req = Req::new(Method::PUT, mapping_path(id))
        .key(key)
        .header("content-type", "application/json")
        .body(body)
        .operation(paths::ZONE_MAPPING);
    kit.send(req).await
}

pub(crate) async fn run(kit: &mut Kit, zone_ids: Option<&[String]>) {
    let Some(admin) = writer_key_or_skip(kit, zone_ids, &PAIRS, &CHECKS) else {
        return;
    };
    let with = fresh_mapping_id();
    let without = format!("{with}-bare");
    let stored = put(kit, &admin, &with, body(Some(&OFFERED))).await;
    let outcome = match &stored {
        Ok(ex) => done(counts(ex)),
        Err(failure) => failure.clone(),
    };
    let stored_ok = outcome == Outcome::Pass;
    kit.record(STORED.0, STORED.1, outcome);
    if stored_ok {
        let outcome = done(offers(kit, &admin, &with).await);
        kit.record(OFFERS.0, OFFERS.1, outcome);
        let outcome = done(listing(kit, &admin, &with).await);
        kit.record(LISTED.0, LISTED.1, outcome);
    } else {
        for (name, promise) in [OFFERS, LISTED] {
            kit.record(
                name,
                promise,
                skip("the mapping with offerings could not be stored"),
            );
        }
    }
    let outcome = done(not_stored(kit, &admin, &without).await);
    kit.record(NOT_STORED.0, NOT_STORED.1, outcome);
    let path = format!("{}?offers=p5.48xlarge", identities_path(PROVIDER, REGION));
    let outcome = match get(kit, &admin, path, paths::LIST_ZONE_IDENTITIES).await {
        Ok(ex) => done(ex.expect_error(400, ErrorCode::INVALID_QUERY)),
        Err(failure) => failure,
    };
    kit.record(WITHOUT_MAPPING.0, WITHOUT_MAPPING.1, outcome);
    // The kit leaves no mapping behind, whatever failed.
    for id in [with, without] {
        let req = Req::new(Method::DELETE, mapping_path(&id))
            .key(&admin)
            .operation(paths::ZONE_MAPPING);
        let _ = kit.send(req).await;
    }
}

/// 201 with the counts of the offerings stored: 2 types, 3 offerings in us-east-1.
fn counts(ex: &Exchange) -> Result<(), Outcome> {
    let want = json!([{"region": REGION, "instance_types": 2, "offerings": 3}]);
    let body = ex.json().unwrap_or_default();
    if ex.status == 201 && body["data"]["offerings"] == want {
        return Ok(());
    }
    Err(ex.fail(format!("201 with data.offerings {want}"), ex.describe()))
}

/// `?offers=p5.48xlarge` keeps use1-az2 only; `?offers=m7i.large` both zones.
async fn offers(kit: &mut Kit, key: &str, id: &str) -> Result<(), Outcome> {
    for (types, want) in [
        ("p5.48xlarge", &["use1-az2"][..]),
        ("m7i.large", &["use1-az2", "use1-az4"][..]),
        ("m7i.large,p5.48xlarge", &["use1-az2"][..]),
    ] {
        let path = format!(
            "{}?mapping={id}&zone_id=use1-az2,use1-az4&offers={types}",
            identities_path(PROVIDER, REGION)
        );
        let ex = get(kit, key, path, paths::LIST_ZONE_IDENTITIES).await?;
        let body = ex.json().unwrap_or_default();
        let zones: Vec<&str> = body["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|z| z["zone_id"].as_str())
            .collect();
        if ex.status != 200 || zones != want {
            return Err(ex.fail(
                format!("200 with zones {want:?} for offers={types}"),
                format!("zones {zones:?}: {}", ex.describe()),
            ));
        }
    }
    Ok(())
}

/// The listing: both types with their zones, sorted; `zone_id=use1-az4` keeps m7i.large.
async fn listing(kit: &mut Kit, key: &str, id: &str) -> Result<(), Outcome> {
    for (query, want) in [
        (
            format!("mapping={id}"),
            json!([
                {"instance_type": "m7i.large", "zone_ids": ["use1-az2", "use1-az4"]},
                {"instance_type": "p5.48xlarge", "zone_ids": ["use1-az2"]}
            ]),
        ),
        (
            format!("mapping={id}&zone_id=use1-az4"),
            json!([{"instance_type": "m7i.large", "zone_ids": ["use1-az2", "use1-az4"]}]),
        ),
    ] {
        let ex = get(
            kit,
            key,
            instance_types_path(&query),
            paths::LIST_INSTANCE_TYPES,
        )
        .await?;
        let body = ex.json().unwrap_or_default();
        if ex.status != 200 || body["data"] != want || !body["id"].is_string() {
            return Err(ex.fail(format!("200 with data {want} and an id"), ex.describe()));
        }
    }
    Ok(())
}

/// A mapping stored without offerings: the listing is 422 `offerings_not_stored`.
async fn not_stored(kit: &mut Kit, key: &str, id: &str) -> Result<(), Outcome> {
    let ex = put(kit, key, id, body(None)).await?;
    if ex.status != 201 {
        return Err(ex.fail("201 for a mapping of a fresh id", ex.describe()));
    }
    let ex = get(
        kit,
        key,
        instance_types_path(&format!("mapping={id}")),
        paths::LIST_INSTANCE_TYPES,
    )
    .await?;
    ex.expect_error(422, ErrorCode::OFFERINGS_NOT_STORED)
}
