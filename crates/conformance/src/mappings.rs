//! The zone-mapping writes: a mapping of the kit's own (`conformance-<uuid>`, an id no
//! organization has) stored from an AWS `describe-availability-zones` output for aws/us-east-1,
//! replaced, read back, applied to the identity listing, refused, and deleted; a member's
//! change refused. Whatever it stored it deletes at the end, whichever checks failed.
//!
//! The pairs are two zone ids of aws/us-east-1 that the identity listing answered; the names
//! are the account's own (any letter of the region fits), so no catalog name is assumed.

use appzone_contract::{paths, ErrorCode};
use http::Method;
use serde_json::{json, Value};

use crate::support::{done, skip, writer_key_or_skip};
use crate::support::{fresh_mapping_id, identities_path, mapping_path, PROVIDER, REGION};
use crate::wire::{Exchange, Kit, Req};
use crate::Outcome;

/// The pairs (zone name, zone id) the kit stores, as in the document's example.
const STORED: [(&str, &str); 2] = [("us-east-1a", "use1-az2"), ("us-east-1b", "use1-az4")];

/// A refused output, contradicting itself: a known zone id, then the same id again.
const REFUSED: [(&str, &str); 2] = [("us-east-1c", "use1-az1"), ("us-east-1d", "use1-az1")];

/// The second mapping of the side-by-side check: the stored zone ids with their names swapped
/// (another account's letters).
const SWAPPED: [(&str, &str); 2] = [("us-east-1b", "use1-az2"), ("us-east-1a", "use1-az4")];

/// A zone id us-east-1 does not have (AWS ids of us-east-1 are `use1-az1` to `use1-az6`).
const UNKNOWN: (&str, &str) = ("us-east-1g", "use1-az9");

const NON_JSON: (&str, &str) = (
    "non_json_zone_mapping_put_is_400_invalid_body",
    "Refused: malformed JSON 400",
);
const MEMBER: (&str, &str) = (
    "member_zone_mapping_put_and_delete_are_403_forbidden",
    "`PUT /api/v1/zone-mappings/{mappingId}` (admin key ...) ... `DELETE \
     /api/v1/zone-mappings/{mappingId}` (admin, 204). Refused: ... member key 403",
);
const PUT: (&str, &str) = (
    "zone_mapping_put_is_201_then_200",
    "`PUT /api/v1/zone-mappings/{mappingId}` (admin key; body `{\"provider\": \"aws\", \
     \"label\": \"...\", \"output\": <the cloud CLI's JSON as it printed it>}` ...); 201 \
     created, 200 replaced",
);
const READ_BACK: (&str, &str) = (
    "stored_zone_mapping_is_read_back_and_listed",
    "`GET /api/v1/zone-mappings` and `GET /api/v1/zone-mappings/{mappingId}` (any key of the \
     organization)",
);
const APPLIED: (&str, &str) = (
    "zone_identities_with_mapping_show_its_names",
    "A name is never guessed: `null` unless a source pairs it (uniform regions) or the caller's \
     mapping does; top level `mapping` (the mapping applied: id, provider, label, imported_at).",
);
const SIDE_BY_SIDE: (&str, &str) = (
    "zone_identities_with_two_mappings_name_each_accounts_zone",
    "`?mapping=a&mapping=b&zone_name=us-east-1a` answers \"which zone in account b is account \
     a's us-east-1a\" in one request",
);
const REFUSED_422: (&str, &str) = (
    "contradicted_zone_mapping_put_is_422_invalid_zone_mapping_and_changes_nothing",
    "422 `invalid_zone_mapping` is for contradictions only: within the output (an id or a name \
     twice, a name outside its region) ... naming the first offenders (every refusal leaves the \
     stored mapping unchanged)",
);
const SKIPPED: (&str, &str) = (
    "unknown_zone_id_is_skipped_and_named_and_the_rest_stored",
    "What the catalog does not hold (a zone id unknown for its region, ...) is stored nowhere \
     and named in the answer's `skipped: [{region, zone_id, zone_name, reason}]`",
);
const DELETE: (&str, &str) = (
    "zone_mapping_delete_is_204_then_404",
    "`DELETE /api/v1/zone-mappings/{mappingId}` (admin, 204) ... an unknown one, 404 \
     `zone_mapping_not_found`",
);

/// Every check here, in the order they are reported.
const CHECKS: [(&str, &str); 9] = [
    NON_JSON,
    PUT,
    READ_BACK,
    APPLIED,
    SIDE_BY_SIDE,
    REFUSED_422,
    SKIPPED,
    MEMBER,
    DELETE,
];

/// The body of a `PUT`: `pairs` as `aws ec2 describe-availability-zones --output json` prints
/// them.
fn body(pairs: &[(&str, &str)]) -> Vec<u8> {
    let zones: Vec<Value> = pairs
        .iter()
        .map(|(name, id)| {
            json!({
                "State": "available",
                "OptInStatus": "opt-in-not-required",
                "Messages": [],
                "RegionName": REGION,
                "ZoneName": name,
                "ZoneId": id,
                "GroupName": REGION,
                "NetworkBorderGroup": REGION,
                "ZoneType": "availability-zone",
            })
        })
        .collect();
    json!({
        "provider": PROVIDER,
        "label": "appzone conformance kit",
        "output": {"AvailabilityZones": zones},
    })
    .to_string()
    .into_bytes()
}

/// A run's mapping: its id and path, the keys.
struct Mapping {
    path: String,
    id: String,
    admin: String,
    member: Option<String>,
}

impl Mapping {
    async fn put(&self, kit: &mut Kit, key: &str, body: Vec<u8>) -> Result<Exchange, Outcome> {
        let req = Req::new(Method::PUT, self.path.as_str())
            .key(key)
            .header("content-type", "application/json")
            .body(body)
            .operation(paths::ZONE_MAPPING);
        kit.send(req).await
    }

    async fn send(&self, kit: &mut Kit, method: Method, key: &str) -> Result<Exchange, Outcome> {
        let req = Req::new(method, self.path.as_str())
            .key(key)
            .operation(paths::ZONE_MAPPING);
        kit.send(req).await
    }

    /// `GET` of the mapping with the admin's key: its `data` when 200.
    async fn read(&self, kit: &mut Kit) -> Result<(Exchange, Value), Outcome> {
        let admin = self.admin.clone();
        let ex = self.send(kit, Method::GET, &admin).await?;
        match ex.json().and_then(|b| b.get("data").cloned()) {
            Some(data) if ex.status == 200 => Ok((ex, data)),
            _ => Err(ex.fail("200 with the mapping in `data`", ex.describe())),
        }
    }
}

pub(crate) async fn run(kit: &mut Kit, zone_ids: Option<&[String]>) {
    let Some(admin) = writer_key_or_skip(kit, zone_ids, &STORED, &CHECKS) else {
        return;
    };
    let id = fresh_mapping_id();
    let mapping = Mapping {
        path: mapping_path(&id),
        id,
        admin,
        member: kit.config.member_key.clone(),
    };
    let stored = writes(kit, &mapping).await;
    // The kit leaves no mapping behind, whatever failed.
    if stored {
        let admin = mapping.admin.clone();
        let _ = mapping.send(kit, Method::DELETE, &admin).await;
    }
}

/// The checks in order; whether the mapping may still be stored (to be deleted).
async fn writes(kit: &mut Kit, mapping: &Mapping) -> bool {
    let admin = mapping.admin.clone();
    let outcome = match mapping.put(kit, &admin, b"this is not JSON".to_vec()).await {
        Ok(ex) => done(ex.expect_error(400, ErrorCode::INVALID_BODY)),
        Err(failure) => failure,
    };
    kit.record(NON_JSON.0, NON_JSON.1, outcome);

    // Before the admin's PUT, so that a member's that went through shows as a 201 (and the
    // admin's then as a 200).
    let member_put = match &mapping.member {
        Some(member) => Some(
            mapping
                .put(kit, member, body(&STORED))
                .await
                .and_then(|ex| ex.expect_error(403, "forbidden")),
        ),
        None => None,
    };

    let (outcome, stored) = put_twice(kit, mapping).await;
    kit.record(PUT.0, PUT.1, outcome);
    if !stored {
        // Deleted all the same at the end: a 404 there is harmless.
        let why = "the zone mapping could not be stored";
        for (name, promise) in [READ_BACK, APPLIED, SIDE_BY_SIDE, REFUSED_422, SKIPPED] {
            kit.record(name, promise, skip(why));
        }
        record_member(kit, member_put, None);
        kit.record(DELETE.0, DELETE.1, skip(why));
        return true;
    }

    let outcome = done(read_back(kit, mapping).await);
    kit.record(READ_BACK.0, READ_BACK.1, outcome);
    let outcome = done(applied(kit, mapping).await);
    kit.record(APPLIED.0, APPLIED.1, outcome);
    let outcome = done(side_by_side(kit, mapping).await);
    kit.record(SIDE_BY_SIDE.0, SIDE_BY_SIDE.1, outcome);
    let outcome = done(refused(kit, mapping).await);
    kit.record(REFUSED_422.0, REFUSED_422.1, outcome);
    let outcome = done(skipped(kit, mapping).await);
    kit.record(SKIPPED.0, SKIPPED.1, outcome);

    // While the mapping is there, so that the member's DELETE meets it (403), not an
    // unknown one (404).
    let member_delete = match &mapping.member {
        Some(member) => Some(
            mapping
                .send(kit, Method::DELETE, member)
                .await
                .and_then(|ex| ex.expect_error(403, "forbidden")),
        ),
        None => None,
    };
    record_member(kit, member_put, member_delete);

    let (outcome, deleted) = match delete(kit, mapping).await {
        Ok(()) => (Outcome::Pass, true),
        Err((failure, deleted)) => (failure, deleted),
    };
    kit.record(DELETE.0, DELETE.1, outcome);
    !deleted
}

fn record_member(
    kit: &mut Kit,
    put: Option<Result<(), Outcome>>,
    delete: Option<Result<(), Outcome>>,
) {
    let outcome = match put {
        None => skip("needs --member-key (of the admin's organization)"),
        Some(put) => done(put.and(delete.unwrap_or(Ok(())))),
    };
    kit.record(MEMBER.0, MEMBER.1, outcome);
}

/// 201 for the first `PUT`, 200 for the same again; and whether either stored it.
async fn put_twice(kit: &mut Kit, mapping: &Mapping) -> (Outcome, bool) {
    let admin = mapping.admin.clone();
    let first = match mapping.put(kit, &admin, body(&STORED)).await {
        Ok(ex) => ex,
        Err(failure) => return (failure, true),
    };
    let second = match mapping.put(kit, &admin, body(&STORED)).await {
        Ok(ex) => ex,
        Err(failure) => return (failure, true),
    };
    let stored = [&first, &second]
        .iter()
        .any(|ex| (200..300).contains(&ex.status));
    let outcome = if first.status != 201 {
        first.fail("201 (a mapping of a fresh id is created)", first.describe())
    } else if second.status != 200 {
        second.fail(
            "200 (the same mapping again replaces it)",
            second.describe(),
        )
    } else {
        Outcome::Pass
    };
    (outcome, stored)
}

/// The (region, zone id, zone name) triples of a mapping's `data`, sorted.
fn pairs(data: &Value) -> Vec<(String, String, String)> {
    let text = |v: &Value, field: &str| {
        v.get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut pairs: Vec<_> = data
        .get("regions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|region| {
            let name = text(region, "region");
            region
                .get("zones")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(move |zone| (name.clone(), text(zone, "zone_id"), text(zone, "zone_name")))
        })
        .collect();
    pairs.sort();
    pairs
}

fn stored_pairs() -> Vec<(String, String, String)> {
    let mut pairs: Vec<_> = STORED
        .iter()
        .map(|(name, id)| (REGION.to_owned(), (*id).to_owned(), (*name).to_owned()))
        .collect();
    pairs.sort();
    pairs
}

/// `GET` of the mapping gives its pairs; the listing names it.
async fn read_back(kit: &mut Kit, mapping: &Mapping) -> Result<(), Outcome> {
    let (ex, data) = mapping.read(kit).await?;
    let provider = data.get("provider").and_then(Value::as_str);
    let id = data.get("id").and_then(Value::as_str);
    if id != Some(mapping.id.as_str())
        || provider != Some(PROVIDER)
        || pairs(&data) != stored_pairs()
    {
        return Err(ex.fail(
            format!(
                "`data` with id {:?}, provider {PROVIDER:?} and the pairs {:?}",
                mapping.id,
                stored_pairs()
            ),
            data.to_string(),
        ));
    }
    let admin = mapping.admin.clone();
    let list = kit
        .send(
            Req::new(Method::GET, paths::ZONE_MAPPINGS)
                .key(&admin)
                .operation(paths::ZONE_MAPPINGS),
        )
        .await?;
    let listed = list
        .json()
        .and_then(|b| b.get("data").and_then(Value::as_array).cloned())
        .into_iter()
        .flatten()
        .any(|item| {
            item.get("id").and_then(Value::as_str) == Some(mapping.id.as_str())
                && item
                    .get("regions")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|r| r.as_str() == Some(REGION)))
        });
    if list.status == 200 && listed {
        Ok(())
    } else {
        Err(list.fail(
            format!("200 listing {:?} with region {REGION}", mapping.id),
            format!("{} {}", list.status, String::from_utf8_lossy(&list.body)),
        ))
    }
}

/// The identity listing with `?mapping=` names the mapped zones and says which mapping.
async fn applied(kit: &mut Kit, mapping: &Mapping) -> Result<(), Outcome> {
    let path = format!(
        "{}?{}={}",
        identities_path(PROVIDER, REGION),
        paths::MAPPING_QUERY,
        mapping.id
    );
    // The admin's key: the API key may be another organization's.
    let admin = mapping.admin.clone();
    let req = Req::new(Method::GET, path)
        .key(&admin)
        .operation(paths::LIST_ZONE_IDENTITIES);
    let ex = kit.send(req).await?;
    let body = ex.json().unwrap_or(Value::Null);
    let items = body
        .get("data")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let name_of = |zone_id: &str| {
        items
            .iter()
            .find(|item| item.get("zone_id").and_then(Value::as_str) == Some(zone_id))
            .and_then(|item| item.get("zone_name").and_then(Value::as_str))
    };
    let named = STORED.iter().all(|(name, id)| name_of(id) == Some(*name));
    let applied = body.get("mapping").unwrap_or(&Value::Null);
    let says = applied.get("id").and_then(Value::as_str) == Some(mapping.id.as_str())
        && applied.get("provider").and_then(Value::as_str) == Some(PROVIDER);
    if ex.status == 200 && named && says {
        return Ok(());
    }
    let shown: Vec<String> = STORED
        .iter()
        .map(|(_, id)| format!("{id}: {:?}", name_of(id)))
        .collect();
    Err(ex.fail(
        format!(
            "200 naming {} and `mapping` {{\"id\": {:?}, \"provider\": {PROVIDER:?}, ...}}",
            STORED
                .iter()
                .map(|(name, id)| format!("{id} {name}"))
                .collect::<Vec<_>>()
                .join(", "),
            mapping.id
        ),
        format!(
            "{} with {}, `mapping` {applied}",
            ex.status,
            shown.join(", ")
        ),
    ))
}

/// A second mapping (the same ids, names swapped) beside the first: the one request for the
/// first's `us-east-1a` answers its zone with both accounts' names, in the order asked. The
/// second mapping is deleted again, whatever the answer.
async fn side_by_side(kit: &mut Kit, mapping: &Mapping) -> Result<(), Outcome> {
    let second = Mapping {
        path: mapping_path(&format!("{}-b", mapping.id)),
        id: format!("{}-b", mapping.id),
        admin: mapping.admin.clone(),
        member: None,
    };
    let admin = mapping.admin.clone();
    let stored = second.put(kit, &admin, body(&SWAPPED)).await;
    let checked = match stored {
        Ok(ex) if ex.status == 201 => side_by_side_answer(kit, mapping, &second).await,
        Ok(ex) => Err(ex.fail("201 for a second mapping of a fresh id", ex.describe())),
        Err(failure) => Err(failure),
    };
    let _ = second.send(kit, Method::DELETE, &admin).await;
    checked
}

async fn side_by_side_answer(
    kit: &mut Kit,
    first: &Mapping,
    second: &Mapping,
) -> Result<(), Outcome> {
    let query = paths::MAPPING_QUERY;
    let path = format!(
        "{}?{query}={}&{query}={}&zone_name=us-east-1a",
        identities_path(PROVIDER, REGION),
        first.id,
        second.id
    );
    let req = Req::new(Method::GET, path)
        .key(&first.admin)
        .operation(paths::LIST_ZONE_IDENTITIES);
    let ex = kit.send(req).await?;
    let body = ex.json().unwrap_or(Value::Null);
    let names: Vec<(String, String)> = body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|item| item["names"].as_array().cloned().unwrap_or_default())
        .map(|n| {
            let text = |field: &str| n[field].as_str().unwrap_or("null").to_owned();
            (text("mapping"), text("zone_name"))
        })
        .collect();
    let zone_ids: Vec<&str> = body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["zone_id"].as_str())
        .collect();
    let want = [
        (first.id.clone(), "us-east-1a".to_owned()),
        (second.id.clone(), "us-east-1b".to_owned()),
    ];
    if ex.status == 200 && zone_ids == ["use1-az2"] && names == want {
        return Ok(());
    }
    Err(ex.fail(
        format!("200 with one zone, use1-az2, named {want:?} (mapping, zone_name)"),
        format!("zones {zone_ids:?} named {names:?}: {}", ex.describe()),
    ))
}

/// A `PUT` whose output names one zone id twice is 422, and the mapping is as it was.
async fn refused(kit: &mut Kit, mapping: &Mapping) -> Result<(), Outcome> {
    let (_, before) = mapping.read(kit).await?;
    let admin = mapping.admin.clone();
    let ex = mapping.put(kit, &admin, body(&REFUSED)).await?;
    ex.expect_error(422, ErrorCode::INVALID_ZONE_MAPPING)?;
    let (after_ex, after) = mapping.read(kit).await?;
    if after == before {
        Ok(())
    } else {
        Err(after_ex.fail(
            format!("the mapping as before the refused PUT: {before}"),
            after.to_string(),
        ))
    }
}

/// A `PUT` of the stored pairs and a zone id the region does not have replaces the mapping
/// with the stored pairs (200) and names the unknown zone in `skipped`.
async fn skipped(kit: &mut Kit, mapping: &Mapping) -> Result<(), Outcome> {
    let admin = mapping.admin.clone();
    let mut sent = STORED.to_vec();
    sent.push(UNKNOWN);
    let ex = mapping.put(kit, &admin, body(&sent)).await?;
    let answer = ex.json().unwrap_or_default();
    let named = answer
        .get("skipped")
        .and_then(Value::as_array)
        .is_some_and(|skipped| {
            skipped.iter().any(|s| {
                s.get("zone_id").and_then(Value::as_str) == Some(UNKNOWN.1)
                    && s.get("region").and_then(Value::as_str) == Some(REGION)
                    && s.get("reason")
                        .and_then(Value::as_str)
                        .is_some_and(|r| !r.is_empty())
            })
        });
    let kept = answer.get("data").map(pairs) == Some(stored_pairs());
    if ex.status == 200 && named && kept {
        Ok(())
    } else {
        Err(ex.fail(
            format!(
                "200 with the pairs {:?} and {} in `skipped` (with its region and a reason)",
                stored_pairs(),
                UNKNOWN.1
            ),
            ex.describe(),
        ))
    }
}

/// The admin's `DELETE` is 204, then the mapping is gone: 404 for another `DELETE` and for a
/// `GET`. On failure, whether the first `DELETE` deleted it.
async fn delete(kit: &mut Kit, mapping: &Mapping) -> Result<(), (Outcome, bool)> {
    let admin = mapping.admin.clone();
    let first = mapping
        .send(kit, Method::DELETE, &admin)
        .await
        .map_err(|failure| (failure, false))?;
    if first.status != 204 || !first.body.is_empty() {
        let deleted = (200..300).contains(&first.status);
        return Err((first.fail("204 with no body", first.describe()), deleted));
    }
    for method in [Method::DELETE, Method::GET] {
        mapping
            .send(kit, method, &admin)
            .await
            .and_then(|ex| ex.expect_error(404, ErrorCode::ZONE_MAPPING_NOT_FOUND))
            .map_err(|failure| (failure, true))?;
    }
    Ok(())
}
