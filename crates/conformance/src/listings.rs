//! The read-only checks of the catalog's listings: the OpenAPI document, the walk of
//! providers → regions → zones, each listing's envelope, its caching headers and `HEAD`.

use appzone_contract::headers::{LISTING_CACHE_CONTROL, REQUEST_ID};
use appzone_contract::paths;
use http::Method;
use serde_json::Value;

use crate::support::{done, encode, skip, Walk};
use crate::wire::{fill, Exchange, Kit, Req};
use crate::Outcome;

/// Runs the checks of the listings, in order; returns what the walk of the catalog found, for
/// the checks that ask for its ids.
pub(crate) async fn run(kit: &mut Kit) -> Walk {
    let outcome = document(kit).await;
    kit.record(
        "openapi_document_lists_the_operations",
        "`openapi.json` states the same per operation",
        outcome,
    );
    let mut walk = Walk::default();
    let outcome = done(walk_catalog(kit, &mut walk).await);
    kit.record(
        "providers_regions_zones_walk_agrees",
        "A caller who does not know which ids to ask for lists the providers, then a provider's \
         regions, then a region's zones.",
        outcome,
    );
    let listings = listings(kit, &walk);
    let (envelope, same_id) = envelope(kit, &listings).await;
    kit.record(
        "listing_envelope_has_data_id_message_status",
        "Otherwise 200 with {\"data\": [zone ids in catalog order], \"id\": \"<request id>\", \
         \"message\": \"<summary>\", \"status\": \"success\"}.",
        envelope,
    );
    kit.record(
        "listing_id_equals_x_request_id_header",
        "The same id is the listing's `id`, appears in the server's log line for the request \
         and in the audit record of a deletion.",
        same_id,
    );
    let cached: Vec<Listing> = listings.iter().filter(|l| l.cached).cloned().collect();
    let (etag, cache) = caching(kit, &cached).await;
    kit.record(
        "listing_has_weak_etag_and_304_on_if_none_match",
        "The answer carries a weak `ETag` ... A matching `If-None-Match` gets 304 with no body.",
        etag,
    );
    kit.record(
        "listing_cache_control_is_private_max_age_60",
        "`Cache-Control: private, max-age=60`: browsers may reuse it for a minute, shared caches \
         must not keep it (it is behind a key).",
        cache,
    );
    let outcome = done(head(kit, &listings).await);
    kit.record(
        "head_answers_like_get_without_body",
        "list zones: `GET .../zones` (and `HEAD`)",
        outcome,
    );
    walk
}

/// Fetches `/openapi.json`; the checks that follow read their operations from it.
/// The operations every implementation of the API serves, as `(method, path template)`.
const CONTRACT_OPERATIONS: [(&str, &str); 4] = [
    ("get", paths::LIST_PROVIDERS),
    ("get", paths::LIST_REGIONS),
    ("get", paths::LIST_ZONES),
    ("delete", paths::DELETE_PROFILE),
];

async fn document(kit: &mut Kit) -> Outcome {
    let exchange = match kit.send(Req::new(Method::GET, "/openapi.json")).await {
        Ok(exchange) => exchange,
        Err(outcome) => return outcome,
    };
    match exchange.json() {
        Some(document) if exchange.status == 200 && document.get("paths").is_some() => {
            kit.document = Some(document);
            let listed = kit.operations();
            let missing: Vec<String> = CONTRACT_OPERATIONS
                .iter()
                .filter(|(method, template)| {
                    !listed.iter().any(|(m, t, _)| m == method && t == template)
                })
                .map(|(method, template)| format!("{} {template}", method.to_uppercase()))
                .collect();
            if missing.is_empty() {
                Outcome::Pass
            } else {
                exchange.fail(
                    "an OpenAPI document listing the API's four operations",
                    format!("missing: {}", missing.join(", ")),
                )
            }
        }
        _ => exchange.fail(
            "200 with an OpenAPI document (a JSON object with `paths`)",
            exchange.describe(),
        ),
    }
}

/// The ids of a listing's body: `data`, an array of strings.
fn ids(exchange: &Exchange) -> Option<Vec<String>> {
    exchange
        .json()?
        .get("data")?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(ToOwned::to_owned))
        .collect()
}

async fn walk_catalog(kit: &mut Kit, walk: &mut Walk) -> Result<(), Outcome> {
    let providers = kit
        .get(paths::LIST_PROVIDERS, paths::LIST_PROVIDERS)
        .await?;
    let provider_ids = ids(&providers)
        .filter(|_| providers.status == 200)
        .ok_or_else(|| providers.fail("200 with `data`, the provider ids", providers.describe()))?;
    for provider in &provider_ids {
        let path = format!(
            "{}/providers/{}/regions",
            paths::API_PREFIX,
            encode(provider)
        );
        let regions = kit.get(&path, paths::LIST_REGIONS).await?;
        let region_ids = ids(&regions)
            .filter(|_| regions.status == 200)
            .ok_or_else(|| {
                regions.fail(
                    format!("200 with `data`: {provider} is in the provider listing"),
                    regions.describe(),
                )
            })?;
        if walk.provider.is_none() {
            if let Some(region) = region_ids.first() {
                walk.provider = Some(provider.clone());
                walk.region = Some(region.clone());
            }
        }
        walk.regions.push((provider.clone(), region_ids));
    }
    let (Some(provider), Some(region)) = (walk.provider.clone(), walk.region.clone()) else {
        return Err(skip("no provider of the catalog has a region"));
    };
    let path = format!(
        "{}/providers/{}/regions/{}/zones",
        paths::API_PREFIX,
        encode(&provider),
        encode(&region)
    );
    let zones = kit.get(&path, paths::LIST_ZONES).await?;
    if zones.status == 200 && ids(&zones).is_some() {
        Ok(())
    } else {
        Err(zones.fail(
            format!("200 with `data`: {region} is in {provider}'s region listing"),
            zones.describe(),
        ))
    }
}

/// A listing to check: a `GET` of the API whose parameters the walk could fill.
#[derive(Debug, Clone)]
pub(crate) struct Listing {
    path: String,
    template: String,
    /// Whether the document says it answers 304 (it has an `ETag` and `Cache-Control`); the
    /// contract's three do. The zone-mapping listing, say, does not.
    cached: bool,
}

/// The templates of the listings of ids (`data` an array of strings): the catalog's.
const ID_LISTINGS: [&str; 3] = [
    paths::LIST_PROVIDERS,
    paths::LIST_REGIONS,
    paths::LIST_ZONES,
];

/// The listings to check: every `GET` of the document whose parameters the walk can fill (not
/// one with a required query parameter), or the contract's three when there is no document.
fn listings(kit: &Kit, walk: &Walk) -> Vec<Listing> {
    let values = walk.values();
    let values: Vec<(&str, &str)> = values.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let mut templates: Vec<(String, bool)> = kit
        .operations()
        .into_iter()
        .filter(|(method, template, _)| {
            method == "get" && template.starts_with(paths::API_PREFIX) && !kit.needs_query(template)
        })
        .map(|(_, template, statuses)| (template, statuses.iter().any(|s| s == "304")))
        .collect();
    if templates.is_empty() {
        templates = ID_LISTINGS.map(|t| (t.to_owned(), true)).to_vec();
    }
    templates
        .into_iter()
        .filter_map(|(template, cached)| {
            Some(Listing {
                path: fill(&template, &values)?,
                template,
                cached,
            })
        })
        .collect()
}

async fn envelope(kit: &mut Kit, listings: &[Listing]) -> (Outcome, Outcome) {
    if listings.is_empty() {
        return (skip("no listing to ask"), skip("no listing to ask"));
    }
    let mut envelope = Ok(());
    let mut same_id = Ok(());
    for Listing { path, template, .. } in listings {
        let exchange = match kit.get(path, template).await {
            Ok(exchange) => exchange,
            Err(outcome) => return (outcome.clone(), outcome),
        };
        if envelope.is_ok() {
            envelope = check_envelope(&exchange, ID_LISTINGS.contains(&template.as_str()));
        }
        if same_id.is_ok() {
            let body_id = exchange.json().and_then(|b| b.get("id").cloned());
            let header = exchange.header(REQUEST_ID.as_str());
            if body_id.as_ref().and_then(Value::as_str) != header || header.is_none() {
                same_id = Err(exchange.fail(
                    format!("`id` equal to X-Request-Id {header:?}"),
                    format!("`id` {}", body_id.unwrap_or(Value::Null)),
                ));
            }
        }
    }
    (done(envelope), done(same_id))
}

/// The envelope every listing shares; `data` an array of strings for a listing of ids
/// (`of_ids`), an array of objects otherwise (the zone identities, the zone mappings).
fn check_envelope(exchange: &Exchange, of_ids: bool) -> Result<(), Outcome> {
    let expected = if of_ids {
        "200 application/json {\"data\": [strings], \"id\", \"message\", \"status\": \"success\"}"
    } else {
        "200 application/json {\"data\": [objects], \"id\", \"message\", \"status\": \"success\"}"
    };
    let content_type = exchange.header("content-type").unwrap_or_default();
    let body = exchange.json().unwrap_or(Value::Null);
    let data_ok = if of_ids {
        ids(exchange).is_some()
    } else {
        body.get("data")
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().all(Value::is_object))
    };
    let ok = exchange.status == 200
        && content_type.starts_with("application/json")
        && data_ok
        && body.get("id").is_some_and(Value::is_string)
        && body.get("message").is_some_and(Value::is_string)
        && body.get("status").and_then(Value::as_str) == Some("success");
    if ok {
        return Ok(());
    }
    let mut shown = String::from_utf8_lossy(&exchange.body).into_owned();
    if shown.len() > 120 {
        let cut = (0..=120)
            .rev()
            .find(|i| shown.is_char_boundary(*i))
            .unwrap_or(0);
        shown.truncate(cut);
        shown.push('…');
    }
    Err(exchange.fail(
        expected,
        format!("{} {content_type:?} {shown}", exchange.status),
    ))
}

async fn caching(kit: &mut Kit, listings: &[Listing]) -> (Outcome, Outcome) {
    if listings.is_empty() {
        return (
            skip("no listing with an ETag to ask"),
            skip("no listing with an ETag to ask"),
        );
    }
    let mut etag_result = Ok(());
    let mut cache_result = Ok(());
    for Listing { path, template, .. } in listings {
        let first = match kit.get(path, template).await {
            Ok(exchange) => exchange,
            Err(outcome) => return (outcome.clone(), outcome),
        };
        if cache_result.is_ok() && first.header("cache-control") != Some(LISTING_CACHE_CONTROL) {
            cache_result = Err(first.fail(
                format!("Cache-Control: {LISTING_CACHE_CONTROL}"),
                format!("{:?}", first.header("cache-control")),
            ));
        }
        if etag_result.is_err() {
            continue;
        }
        let Some(etag) = first.header("etag").filter(|e| e.starts_with("W/\"")) else {
            etag_result = Err(first.fail(
                "a weak ETag (W/\"...\")",
                format!("{:?}", first.header("etag")),
            ));
            continue;
        };
        let etag = etag.to_owned();
        let key = kit.config.api_key.clone();
        let again = Req::new(Method::GET, path.as_str())
            .key(&key)
            .header("if-none-match", &etag)
            .operation(template);
        let second = match kit.send(again).await {
            Ok(exchange) => exchange,
            Err(outcome) => return (outcome.clone(), outcome),
        };
        if second.status != 304 || !second.body.is_empty() {
            etag_result = Err(second.fail(
                format!("304 with no body for If-None-Match: {etag}"),
                format!("{} with {} bytes", second.status, second.body.len()),
            ));
        } else if cache_result.is_ok()
            && second.header("cache-control") != Some(LISTING_CACHE_CONTROL)
        {
            cache_result = Err(second.fail(
                format!("Cache-Control: {LISTING_CACHE_CONTROL} on the 304 too"),
                format!("{:?}", second.header("cache-control")),
            ));
        }
    }
    (done(etag_result), done(cache_result))
}

async fn head(kit: &mut Kit, listings: &[Listing]) -> Result<(), Outcome> {
    let key = kit.config.api_key.clone();
    for Listing { path, template, .. } in listings {
        let get = kit.get(path, template).await?;
        let head = kit
            .send(
                Req::new(Method::HEAD, path.as_str())
                    .key(&key)
                    .operation(template),
            )
            .await?;
        if !head.body.is_empty() {
            return Err(head.fail("no body", format!("{} bytes", head.body.len())));
        }
        if head.status != get.status {
            return Err(head.fail(format!("{}, as GET", get.status), head.status.to_string()));
        }
        for name in ["content-type", "etag", "cache-control", "content-length"] {
            if head.header(name) != get.header(name) {
                return Err(head.fail(
                    format!("{name}: {:?}, as GET", get.header(name)),
                    format!("{:?}", head.header(name)),
                ));
            }
        }
    }
    Ok(())
}
