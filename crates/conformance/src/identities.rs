//! The zone identities and zone mappings of API 1.2 that any key may read: the identity
//! listing of aws/us-east-1 (its items, `mapping` and `source`; its `ETag`; the zone listing's
//! refusals; an unknown `?mapping=`), the organization's mapping listing, and an unknown
//! mapping's 404. The writes are `mappings.rs`'.
//!
//! aws/us-east-1 is the region asked for: the built-in catalog has it, with zone ids whatever
//! the account, and its names are per account, so no name is expected (they are `null`
//! without a mapping). The checks are skipped when the provider and region listings do not
//! name it (a catalog of its own).

use appzone_contract::headers::REQUEST_ID;
use appzone_contract::{paths, ErrorCode};
use http::Method;
use serde_json::Value;

use crate::support::{
    done, fresh_mapping_id, identities_path, mapping_path, skip, Walk, MALFORMED_ID, PROVIDER,
    REGION, WRONG_KEY,
};
use crate::wire::{Exchange, Kit, Req};
use crate::Outcome;

/// Runs the read-only checks; returns the zone ids of aws/us-east-1's identity listing when it
/// answered them, for the writes.
pub(crate) async fn run(kit: &mut Kit, walk: &Walk) -> Option<Vec<String>> {
    let zone_ids = if walk.has(PROVIDER, REGION) {
        listing(kit).await
    } else {
        let why = format!(
            "the provider and region listings do not name {PROVIDER}/{REGION}, which these \
             checks ask for"
        );
        for (name, promise) in IDENTITY_CHECKS {
            kit.record(name, promise, skip(why.clone()));
        }
        None
    };
    mapping_listing(kit).await;
    let path = mapping_path(&fresh_mapping_id());
    let key = kit.config.api_key.clone();
    let req = Req::new(Method::GET, path)
        .key(&key)
        .operation(paths::ZONE_MAPPING);
    let outcome = match kit.send(req).await {
        Ok(ex) => done(ex.expect_error(404, ErrorCode::ZONE_MAPPING_NOT_FOUND)),
        Err(failure) => failure,
    };
    kit.record(
        "unknown_zone_mapping_is_404_zone_mapping_not_found",
        "another organization's mapping, or an unknown one, 404 `zone_mapping_not_found`",
        outcome,
    );
    zone_ids
}

const ENVELOPE: (&str, &str) = (
    "zone_identities_envelope_has_items_mapping_and_source",
    "Each `data` item: `zone_id` (the identity), `zone_name` (what the caller deploys with, or \
     `null` when the catalog cannot know it for this caller), `name_scope`, `zone_type`, \
     `visibility` ... Top level also `mapping` (`null`, or the mapping applied) and `source` \
     (`compiled_on`, references).",
);
const ETAG: (&str, &str) = (
    "zone_identities_has_weak_etag_and_304_on_if_none_match",
    "any key, same checks, envelope and caching as the zone list: a weak `ETag`; a matching \
     `If-None-Match` gives 304 with no body.",
);
const KEY: (&str, &str) = (
    "zone_identities_without_a_valid_key_is_401",
    "any key, same checks ... as the zone list: no key 401 `missing_api_key`, an unknown one \
     401 `invalid_api_key`",
);
const UNKNOWN_PROVIDER: (&str, &str) = (
    "zone_identities_unknown_provider_is_400_invalid_provider",
    "same checks ... as the zone list: 400 `invalid_provider` for a malformed or unknown provider",
);
const MALFORMED_REGION: (&str, &str) = (
    "zone_identities_malformed_region_is_400_invalid_region",
    "same checks ... as the zone list: `regionId` malformed, 400 `invalid_region`",
);
const UNKNOWN_REGION: (&str, &str) = (
    "zone_identities_unknown_region_is_404_region_not_found",
    "same checks ... as the zone list: not a region of that provider, 404 `region_not_found`",
);
const UNKNOWN_MAPPING: (&str, &str) = (
    "zone_identities_unknown_mapping_is_404_zone_mapping_not_found",
    "`?mapping={mappingId}` ... another organization's mapping, or an unknown one, 404 \
     `zone_mapping_not_found`",
);

const ZONE_ID_FILTER: (&str, &str) = (
    "zone_identities_zone_id_filter_keeps_that_zone_only",
    "**Filters** on `GET .../zone-identities`: ... `zone_id` and `zone_name` (comma-separated, \
     exact)",
);
const FILTER_MATCHING_NOTHING: (&str, &str) = (
    "zone_identities_filter_matching_nothing_is_200_with_empty_data",
    "a filter that matches nothing answers 200 with `[]`",
);
const UNKNOWN_PARAMETER: (&str, &str) = (
    "zone_identities_unknown_query_parameter_is_400_invalid_query",
    "An unknown query parameter, a repeated one that may not repeat, or a malformed value \
     answers 400 `invalid_query` naming the parameter",
);

/// The checks of the identity listing, skipped together when the catalog has no aws/us-east-1.
const IDENTITY_CHECKS: [(&str, &str); 10] = [
    ENVELOPE,
    ETAG,
    KEY,
    UNKNOWN_PROVIDER,
    MALFORMED_REGION,
    UNKNOWN_REGION,
    UNKNOWN_MAPPING,
    ZONE_ID_FILTER,
    FILTER_MATCHING_NOTHING,
    UNKNOWN_PARAMETER,
];

/// The identity listing's checks; returns its zone ids when it answered them.
async fn listing(kit: &mut Kit) -> Option<Vec<String>> {
    let path = identities_path(PROVIDER, REGION);
    let (outcome, zone_ids) = match kit.get(&path, paths::LIST_ZONE_IDENTITIES).await {
        Ok(ex) => match identity_envelope(&ex) {
            Ok(zone_ids) => (Outcome::Pass, Some(zone_ids)),
            Err(failure) => (failure, None),
        },
        Err(failure) => (failure, None),
    };
    kit.record(ENVELOPE.0, ENVELOPE.1, outcome);

    let outcome = done(etag(kit, &path).await);
    kit.record(ETAG.0, ETAG.1, outcome);

    let mut outcome = Outcome::Pass;
    for (key, code) in [
        (None, "missing_api_key"),
        (Some(WRONG_KEY), "invalid_api_key"),
    ] {
        let mut req = Req::new(Method::GET, path.as_str()).operation(paths::LIST_ZONE_IDENTITIES);
        if let Some(key) = key {
            req = req.key(key);
        }
        if let Err(failure) = kit
            .send(req)
            .await
            .and_then(|ex| ex.expect_error(401, code))
        {
            outcome = failure;
            break;
        }
    }
    kit.record(KEY.0, KEY.1, outcome);

    let mapping = format!("{path}?{}={}", paths::MAPPING_QUERY, fresh_mapping_id());
    for ((name, promise), path, status, code) in [
        (
            UNKNOWN_PROVIDER,
            identities_path("conformance-no-such-provider", REGION),
            400,
            "invalid_provider",
        ),
        (
            MALFORMED_REGION,
            identities_path(PROVIDER, MALFORMED_ID),
            400,
            "invalid_region",
        ),
        (
            UNKNOWN_REGION,
            identities_path(PROVIDER, "conformance-no-such-region"),
            404,
            "region_not_found",
        ),
        (
            UNKNOWN_MAPPING,
            mapping,
            404,
            ErrorCode::ZONE_MAPPING_NOT_FOUND,
        ),
    ] {
        let outcome = match kit.get(&path, paths::LIST_ZONE_IDENTITIES).await {
            Ok(ex) => done(ex.expect_error(status, code)),
            Err(failure) => failure,
        };
        kit.record(name, promise, outcome);
    }
    filters(kit, &path, zone_ids.as_deref()).await;
    zone_ids
}

/// The filter checks: `?zone_id=` of the first zone gives that zone only, a zone id no zone
/// has gives `[]`, and an unknown parameter (the kit's own name) is 400 `invalid_query`
/// naming it.
async fn filters(kit: &mut Kit, path: &str, zone_ids: Option<&[String]>) {
    let outcome = match zone_ids.and_then(<[String]>::first) {
        None => skip("the listing gave no zone id to filter by"),
        Some(first) => {
            let filtered = format!("{path}?{}={first}", paths::ZONE_ID_QUERY);
            match kit.get(&filtered, paths::LIST_ZONE_IDENTITIES).await {
                Ok(ex) => done(shows_zones(&ex, &[first.as_str()])),
                Err(failure) => failure,
            }
        }
    };
    kit.record(ZONE_ID_FILTER.0, ZONE_ID_FILTER.1, outcome);

    let nothing = format!("{path}?{}=conformance-no-such-zone", paths::ZONE_ID_QUERY);
    let outcome = match kit.get(&nothing, paths::LIST_ZONE_IDENTITIES).await {
        Ok(ex) => done(shows_zones(&ex, &[])),
        Err(failure) => failure,
    };
    kit.record(
        FILTER_MATCHING_NOTHING.0,
        FILTER_MATCHING_NOTHING.1,
        outcome,
    );

    let parameter = "conformance-unknown";
    let unknown = format!("{path}?{parameter}=1");
    let outcome = match kit.get(&unknown, paths::LIST_ZONE_IDENTITIES).await {
        Ok(ex) => done(
            ex.expect_error(400, ErrorCode::INVALID_QUERY)
                .and_then(|()| {
                    let message = ex
                        .json()
                        .and_then(|b| b["error"].as_str().map(str::to_owned));
                    match message {
                        Some(message) if message.contains(parameter) => Ok(()),
                        other => Err(ex.fail(
                            format!("a message naming {parameter:?}"),
                            format!("{other:?}"),
                        )),
                    }
                }),
        ),
        Err(failure) => failure,
    };
    kit.record(UNKNOWN_PARAMETER.0, UNKNOWN_PARAMETER.1, outcome);
}

/// A 200 identity listing whose items are the zones `ids`, in that order.
fn shows_zones(ex: &Exchange, ids: &[&str]) -> Result<(), Outcome> {
    let shown: Option<Vec<String>> = ex.json().and_then(|body| {
        body["data"].as_array().map(|items| {
            items
                .iter()
                .map(|item| item["zone_id"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
    });
    match shown {
        Some(shown) if ex.status == 200 && shown == ids => Ok(()),
        _ => Err(ex.fail(format!("200 with the zones {ids:?}"), ex.describe())),
    }
}

/// The identity listing's body without a mapping; its zone ids when it is right.
fn identity_envelope(ex: &Exchange) -> Result<Vec<String>, Outcome> {
    let expected = "200 application/json {\"data\": [{\"zone_id\", \"zone_name\" (string or \
                    null), \"name_scope\", \"zone_type\", \"visibility\"}], \"id\", \"mapping\": \
                    null, \"message\", \"source\": {\"compiled_on\", \"references\": []}, \
                    \"status\": \"success\"}";
    let content_type = ex.header("content-type").unwrap_or_default();
    if ex.status != 200 || !content_type.starts_with("application/json") {
        return Err(ex.fail(expected, format!("{} {content_type:?}", ex.status)));
    }
    let body = ex.json().unwrap_or(Value::Null);
    let mut zone_ids = Vec::new();
    let wrong = match body.get("data").and_then(Value::as_array) {
        None => Some("no `data` array".to_owned()),
        Some(items) => items.iter().enumerate().find_map(|(i, item)| {
            let problem = identity_item(item);
            if let Some(id) = item.get("zone_id").and_then(Value::as_str) {
                zone_ids.push(id.to_owned());
            }
            problem.map(|problem| format!("`data[{i}]` {problem}: {item}"))
        }),
    }
    .or_else(|| top_level(&body));
    match wrong {
        None => Ok(zone_ids),
        Some(wrong) => Err(ex.fail(expected, wrong)),
    }
}

/// What is wrong with an identity item, if anything.
fn identity_item(item: &Value) -> Option<String> {
    let string = |field: &str| {
        item.get(field)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    if !item.is_object() {
        return Some("is not an object".to_owned());
    }
    for field in ["zone_id", "name_scope", "zone_type", "visibility"] {
        if !string(field) {
            return Some(format!("has no `{field}` string"));
        }
    }
    match item.get("zone_name") {
        Some(Value::Null | Value::String(_)) => {}
        Some(_) => return Some("has a `zone_name` neither a string nor null".to_owned()),
        None => return Some("has no `zone_name` (null when not known, never left out)".to_owned()),
    }
    match item.get("note") {
        None | Some(Value::String(_)) => None,
        Some(_) => Some("has a `note` that is not a string".to_owned()),
    }
}

/// What is wrong with the identity listing's top level, if anything.
fn top_level(body: &Value) -> Option<String> {
    let string = |field: &str| body.get(field).is_some_and(Value::is_string);
    if !string("id") || !string("message") {
        return Some("no `id` or `message` string".to_owned());
    }
    if body.get("status").and_then(Value::as_str) != Some("success") {
        return Some(format!(
            "`status` {}",
            body.get("status").unwrap_or(&Value::Null)
        ));
    }
    if body.get("mapping") != Some(&Value::Null) {
        return Some(format!(
            "`mapping` {} where none was asked for",
            body.get("mapping")
                .map_or("absent".to_owned(), Value::to_string)
        ));
    }
    let source = body.get("source").unwrap_or(&Value::Null);
    let compiled_on = matches!(
        source.get("compiled_on"),
        Some(Value::Null | Value::String(_))
    );
    if !compiled_on || !source.get("references").is_some_and(Value::is_array) {
        return Some(format!(
            "`source` {source} (an object with `compiled_on`, a date or null, and `references`)"
        ));
    }
    None
}

/// A weak `ETag`, and a 304 with no body for it.
async fn etag(kit: &mut Kit, path: &str) -> Result<(), Outcome> {
    let first = kit.get(path, paths::LIST_ZONE_IDENTITIES).await?;
    let Some(etag) = first.header("etag").filter(|e| e.starts_with("W/\"")) else {
        return Err(first.fail(
            "200 with a weak ETag (W/\"...\")",
            format!("{} with ETag {:?}", first.status, first.header("etag")),
        ));
    };
    let etag = etag.to_owned();
    let key = kit.config.api_key.clone();
    let again = Req::new(Method::GET, path)
        .key(&key)
        .header("if-none-match", &etag)
        .operation(paths::LIST_ZONE_IDENTITIES);
    let second = kit.send(again).await?;
    if second.status == 304 && second.body.is_empty() {
        Ok(())
    } else {
        Err(second.fail(
            format!("304 with no body for If-None-Match: {etag}"),
            format!("{} with {} bytes", second.status, second.body.len()),
        ))
    }
}

/// `GET /api/v1/zone-mappings`: the envelope, each summary's fields, `id` the request id.
async fn mapping_listing(kit: &mut Kit) {
    let outcome = match kit.get(paths::ZONE_MAPPINGS, paths::ZONE_MAPPINGS).await {
        Ok(ex) => done(mapping_envelope(&ex)),
        Err(failure) => failure,
    };
    kit.record(
        "zone_mapping_listing_has_data_id_message_status",
        "`GET /api/v1/zone-mappings` (any key of the organization): `data`, the mappings by id \
         (`id`, `provider`, `label`, `imported_at`, `regions`), `id` the request id, `message`, \
         `status`.",
        outcome,
    );
}

fn mapping_envelope(ex: &Exchange) -> Result<(), Outcome> {
    let expected = "200 application/json {\"data\": [{\"id\", \"provider\", \"label\", \
                    \"imported_at\", \"regions\": []}], \"id\": X-Request-Id, \"message\", \
                    \"status\": \"success\"}";
    let content_type = ex.header("content-type").unwrap_or_default();
    if ex.status != 200 || !content_type.starts_with("application/json") {
        return Err(ex.fail(expected, format!("{} {content_type:?}", ex.status)));
    }
    let body = ex.json().unwrap_or(Value::Null);
    let summary_ok = |item: &Value| {
        ["id", "provider", "label", "imported_at"]
            .iter()
            .all(|field| item.get(field).is_some_and(Value::is_string))
            && item
                .get("regions")
                .and_then(Value::as_array)
                .is_some_and(|regions| regions.iter().all(Value::is_string))
    };
    let wrong = match body.get("data").and_then(Value::as_array) {
        None => Some(format!(
            "`data` {}",
            body.get("data")
                .map_or("absent".to_owned(), Value::to_string)
        )),
        Some(items) => items
            .iter()
            .find(|item| !summary_ok(item))
            .map(|item| format!("an item {item}")),
    }
    .or_else(|| {
        let id = body.get("id").and_then(Value::as_str);
        let header = ex.header(REQUEST_ID.as_str());
        (id.is_none() || id != header)
            .then(|| format!("`id` {id:?} where X-Request-Id is {header:?}"))
    })
    .or_else(|| {
        (!body.get("message").is_some_and(Value::is_string)
            || body.get("status").and_then(Value::as_str) != Some("success"))
        .then(|| "no `message` string, or `status` not \"success\"".to_owned())
    });
    match wrong {
        None => Ok(()),
        Some(wrong) => Err(ex.fail(expected, wrong)),
    }
}
