//! Request ids, authentication before validation on every operation, and the error codes of
//! the listings and routes.

use appzone_contract::headers::{is_valid_request_id, REQUEST_ID};
use appzone_contract::paths;
use http::Method;

use crate::support::{done, encode, skip, Walk, MALFORMED_ID, WRONG_KEY};
use crate::wire::{Kit, Req};
use crate::Outcome;

pub(crate) async fn request_ids(kit: &mut Kit) {
    let key = kit.config.api_key.clone();
    let path = paths::LIST_PROVIDERS;
    let mine = "conformance-42:a.b_c";
    let outcome = match kit
        .send(
            Req::new(Method::GET, path)
                .key(&key)
                .header("x-request-id", mine)
                .operation(path),
        )
        .await
    {
        Ok(ex) if ex.header(REQUEST_ID.as_str()) == Some(mine) => Outcome::Pass,
        Ok(ex) => ex.fail(
            format!("X-Request-Id: {mine}"),
            format!("{:?}", ex.header(REQUEST_ID.as_str())),
        ),
        Err(outcome) => outcome,
    };
    kit.record(
        "caller_request_id_is_echoed",
        "A caller's own value is kept when it is 1 to 128 characters of `A-Z a-z 0-9 . _ : -`",
        outcome,
    );
    let mut outcome = Outcome::Pass;
    let long = "x".repeat(200);
    for bad in [long.as_str(), "has space"] {
        let req = Req::new(Method::GET, path)
            .key(&key)
            .header("x-request-id", bad)
            .operation(path);
        let answered = match kit.send(req).await {
            Ok(ex) => ex,
            Err(failure) => {
                outcome = failure;
                break;
            }
        };
        let got = answered.header(REQUEST_ID.as_str());
        if got.is_none_or(|id| id == bad || !is_valid_request_id(id)) {
            outcome = answered.fail(
                format!(
                    "a new valid X-Request-Id instead of a {}-character {:?}…",
                    bad.len(),
                    &bad[..bad.len().min(9)]
                ),
                format!("{got:?}"),
            );
            break;
        }
    }
    kit.record(
        "invalid_request_id_is_replaced",
        "any other value is accepted and replaced, never refused",
        outcome,
    );
}

/// Every operation of the document (or of the contract), its path filled with a malformed id.
fn malformed_operations(kit: &Kit) -> Vec<(Method, String, String)> {
    let mut operations: Vec<(String, String)> = kit
        .operations()
        .into_iter()
        .filter(|(_, template, _)| template.starts_with(paths::API_PREFIX))
        .map(|(method, template, _)| (method, template))
        .collect();
    if operations.is_empty() {
        operations = vec![
            ("get".into(), paths::LIST_PROVIDERS.into()),
            ("get".into(), paths::LIST_REGIONS.into()),
            ("get".into(), paths::LIST_ZONES.into()),
            ("delete".into(), paths::DELETE_PROFILE.into()),
        ];
    }
    operations
        .into_iter()
        .filter_map(|(method, template)| {
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).ok()?;
            let path = malformed_path(&template);
            Some((method, path, template))
        })
        .filter(|(method, _, _)| *method != Method::DELETE || !kit.config.read_only)
        .collect()
}

/// `template` with every parameter a malformed id.
fn malformed_path(template: &str) -> String {
    template
        .split('/')
        .map(|s| if s.starts_with('{') { MALFORMED_ID } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

pub(crate) async fn authentication(kit: &mut Kit) {
    for (name, promise, key, code) in [
        (
            "missing_key_is_401_missing_api_key_before_validation",
            "Key (before routes, methods and path parameters, so nothing about them leaks to a \
             caller without a key): no, empty or blank `X-API-KEY` gets 401 `missing_api_key`",
            None,
            "missing_api_key",
        ),
        (
            "wrong_key_is_401_invalid_api_key_before_validation",
            "an unknown, malformed or revoked key, or two `X-API-KEY` headers, gets 401 \
             `invalid_api_key`",
            Some(WRONG_KEY),
            "invalid_api_key",
        ),
    ] {
        let mut outcome = Outcome::Pass;
        for (method, path, template) in malformed_operations(kit) {
            let mut req = Req::new(method.clone(), path).operation(&template);
            if let Some(key) = key {
                req = req.key(key);
            }
            let answered = match kit.send(req).await {
                Ok(ex) => ex,
                Err(failure) => {
                    outcome = failure;
                    break;
                }
            };
            // A HEAD answer has no body to carry the code.
            let result = if method == Method::HEAD {
                if answered.status == 401 {
                    Ok(())
                } else {
                    Err(answered.fail("401", answered.describe()))
                }
            } else {
                answered.expect_error(401, code)
            };
            if let Err(failure) = result {
                outcome = failure;
                break;
            }
        }
        kit.record(name, promise, outcome);
    }
}

pub(crate) async fn errors(kit: &mut Kit, walk: &Walk) {
    let key = kit.config.api_key.clone();
    let regions = |provider: &str| format!("{}/providers/{provider}/regions", paths::API_PREFIX);
    let cases: Vec<(&'static str, &'static str, Req, u16, &str)> = vec![
        (
            "uppercase_provider_is_400_invalid_provider",
            "Path segments are percent-decoded, then matched exactly (ids are case-sensitive).",
            Req::new(Method::GET, regions("AWS")).operation(paths::LIST_REGIONS),
            400,
            "invalid_provider",
        ),
        (
            "unknown_provider_is_400_invalid_provider",
            "`providerId`: malformed or not in the catalog, 400 `invalid_provider`.",
            Req::new(Method::GET, regions("conformance-no-such-provider"))
                .operation(paths::LIST_REGIONS),
            400,
            "invalid_provider",
        ),
        (
            "unknown_route_is_404_not_found",
            "no route gets 404 `not_found` (a trailing slash is no route)",
            Req::new(
                Method::GET,
                format!("{}/conformance-no-such-route", paths::API_PREFIX),
            ),
            404,
            "not_found",
        ),
    ];
    for (name, promise, req, status, code) in cases {
        let outcome = match kit.send(req.key(&key)).await {
            Ok(ex) => done(ex.expect_error(status, code)),
            Err(failure) => failure,
        };
        kit.record(name, promise, outcome);
    }
    for (name, promise, region, status, code) in [
        (
            "malformed_region_is_400_invalid_region",
            "`regionId` malformed: 400 `invalid_region`",
            "Not_A_Region",
            400,
            "invalid_region",
        ),
        (
            "unknown_region_is_404_region_not_found",
            "well-formed but not a region of that provider: 404 `region_not_found`.",
            "conformance-no-such-region",
            404,
            "region_not_found",
        ),
    ] {
        let outcome = match &walk.provider {
            None => skip("the walk found no provider with regions"),
            Some(provider) => {
                let path = format!("{}/{region}/zones", regions(&encode(provider)));
                let req = Req::new(Method::GET, path)
                    .key(&key)
                    .operation(paths::LIST_ZONES);
                match kit.send(req).await {
                    Ok(ex) => done(ex.expect_error(status, code)),
                    Err(failure) => failure,
                }
            }
        };
        kit.record(name, promise, outcome);
    }
    let outcome =
        match kit
            .send(Req::new(Method::PUT, paths::LIST_PROVIDERS).key(&key))
            .await
        {
            Ok(ex) => done(ex.expect_error(405, "method_not_allowed").and_then(|()| {
                match ex.header("allow") {
                    Some(allow) if allow.split(',').any(|m| m.trim() == "GET") => Ok(()),
                    other => {
                        Err(ex.fail("an Allow header listing GET", format!("Allow: {other:?}")))
                    }
                }
            })),
            Err(failure) => failure,
        };
    kit.record(
        "wrong_method_is_405_method_not_allowed_with_allow",
        "a route without the method gets 405 `method_not_allowed` with `Allow`.",
        outcome,
    );
}
