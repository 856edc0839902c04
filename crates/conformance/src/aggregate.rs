//! The checks over every answer the run saw: request ids, error bodies, codes and their
//! statuses, the statuses the document lists, `Retry-After`, `RateLimit` headers.

use appzone_contract::headers::{is_valid_request_id, RATE_LIMIT, RATE_LIMIT_POLICY, REQUEST_ID};
use appzone_contract::ErrorCode;
use serde_json::Value;

use crate::support::skip;
use crate::wire::{Exchange, Kit};
use crate::Outcome;

pub(crate) fn run(kit: &mut Kit) {
    let exchanges = kit.exchanges.clone();
    // Over no answer at all a check proves nothing: it is skipped, not passed.
    let outcome = if exchanges.is_empty() {
        skip("no answer was seen")
    } else {
        first_failure(&exchanges, |ex| match ex.header(REQUEST_ID.as_str()) {
            Some(id) if is_valid_request_id(id) => Ok(()),
            other => Err(ex.fail("a valid X-Request-Id", format!("{other:?}"))),
        })
    };
    kit.record(
        "every_answer_carries_a_valid_request_id",
        "Every answer of the service carries `X-Request-Id`",
        outcome,
    );
    let errors: Vec<&Exchange> = exchanges
        .iter()
        .filter(|ex| ex.status >= 400 && !ex.request.starts_with("HEAD "))
        .collect();
    let no_errors = || skip("no error answer was seen");
    let outcome = if errors.is_empty() {
        no_errors()
    } else {
        first_failure(errors.iter().copied(), error_body)
    };
    kit.record(
        "error_answers_are_json_with_error_and_error_code",
        "Every error answer ... is `application/json` with the body `{\"error\": \"<message for humans>\", \"error_code\": \"<code>\"}`",
        outcome,
    );
    let with_codes: Vec<&Exchange> = errors
        .iter()
        .copied()
        .filter(|ex| ex.error_code().is_some())
        .collect();
    let outcome = if with_codes.is_empty() {
        no_errors()
    } else {
        first_failure(with_codes.iter().copied(), |ex| {
            let Some(code) = ex.error_code() else {
                return Ok(());
            };
            let Ok(known) = serde_json::from_value::<ErrorCode>(Value::String(code.clone())) else {
                return Ok(());
            };
            let documented = match &known {
                ErrorCode::Other(other) => ErrorCode::ADDED
                    .iter()
                    .find(|added| added.code == other)
                    .map(|added| added.status),
                code => Some(code.status().as_u16()),
            };
            match documented {
                Some(status) if status != ex.status => Err(ex.fail(
                    format!("{code} with {status}"),
                    format!("{code} with {}", ex.status),
                )),
                _ => Ok(()),
            }
        })
    };
    kit.record(
        "error_codes_come_with_their_status",
        "| code | status | meaning |",
        outcome,
    );
    let outcome = documented_statuses(kit);
    kit.record(
        "answer_statuses_are_documented_for_their_operation",
        "`openapi.json` states the same per operation",
        outcome,
    );
    let busy: Vec<&Exchange> = exchanges
        .iter()
        .filter(|ex| ex.status == 429 || ex.status == 503)
        .collect();
    let outcome = if busy.is_empty() {
        skip("no 429 or 503 was seen")
    } else {
        first_failure(busy.iter().copied(), |ex| match ex.header("retry-after") {
            Some(wait) if wait.trim().parse::<u64>().is_ok() || wait.contains("GMT") => Ok(()),
            other => Err(ex.fail("Retry-After", format!("{other:?}"))),
        })
    };
    kit.record(
        "retry_after_on_429_and_503",
        "429 `rate_limited` with `Retry-After`; 503 `unavailable` with `Retry-After`",
        outcome,
    );
    let limited: Vec<&Exchange> = exchanges
        .iter()
        .filter(|ex| {
            ex.headers.contains_key(RATE_LIMIT) || ex.headers.contains_key(RATE_LIMIT_POLICY)
        })
        .collect();
    let outcome = if limited.is_empty() {
        skip("no answer carried RateLimit or RateLimit-Policy (the limits may be off)")
    } else {
        first_failure(limited.iter().copied(), rate_limit_headers)
    };
    kit.record(
        "ratelimit_headers_are_well_formed",
        "both structured-field lists whose items are a quoted policy name with parameters",
        outcome,
    );
}

fn first_failure<'a>(
    exchanges: impl IntoIterator<Item = &'a Exchange>,
    check: impl Fn(&Exchange) -> Result<(), Outcome>,
) -> Outcome {
    exchanges
        .into_iter()
        .find_map(|ex| check(ex).err())
        .unwrap_or(Outcome::Pass)
}

fn error_body(ex: &Exchange) -> Result<(), Outcome> {
    let content_type = ex.header("content-type").unwrap_or_default();
    let body = ex.json();
    let has = |field: &str| {
        body.as_ref()
            .and_then(|b| b.get(field))
            .is_some_and(Value::is_string)
    };
    if content_type.starts_with("application/json") && has("error") && has("error_code") {
        Ok(())
    } else {
        let excerpt: String = String::from_utf8_lossy(&ex.body).chars().take(80).collect();
        Err(ex.fail(
            "application/json {\"error\", \"error_code\"}",
            format!("{} {content_type:?} {excerpt:?}", ex.status),
        ))
    }
}

/// Fails on an answer whose status the document does not list for its operation. `default`
/// stands only for 5xx: the document lists every 2xx, 3xx and 4xx an operation answers.
fn documented_statuses(kit: &Kit) -> Outcome {
    let operations = kit.operations();
    if operations.is_empty() {
        return skip("the server's /openapi.json could not be read");
    }
    if kit.exchanges.iter().all(|ex| ex.operation.is_none()) {
        return skip("no operation of the document answered");
    }
    first_failure(&kit.exchanges, |ex| {
        let Some((method, template)) = &ex.operation else {
            return Ok(());
        };
        let Some((_, _, statuses)) = operations
            .iter()
            .find(|(m, t, _)| m == method && t == template)
        else {
            return Err(ex.fail(
                format!("{} {template} in the document", method.to_ascii_uppercase()),
                "no such operation in it",
            ));
        };
        let status = ex.status.to_string();
        let listed = statuses.contains(&status)
            || (ex.status >= 500 && statuses.iter().any(|s| s == "default"));
        if listed {
            Ok(())
        } else {
            Err(ex.fail(
                format!(
                    "one of the statuses the document lists: {}",
                    statuses.join(", ")
                ),
                ex.describe(),
            ))
        }
    })
}

/// `"name";k=N;k=N` items, comma-separated, with `q` and `w` in the policy and `r` and `t` in
/// `RateLimit`.
fn rate_limit_headers(ex: &Exchange) -> Result<(), Outcome> {
    for (name, needed) in [(RATE_LIMIT_POLICY, ["q", "w"]), (RATE_LIMIT, ["r", "t"])] {
        let value = ex.header(name.as_str());
        let ok = value.is_some_and(|value| {
            value.split(',').all(|item| {
                let mut parts = item.trim().split(';');
                let quoted = parts
                    .next()
                    .is_some_and(|n| n.len() >= 2 && n.starts_with('"') && n.ends_with('"'));
                let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
                quoted
                    && needed.iter().all(|k| {
                        params
                            .iter()
                            .any(|(n, v)| n == k && v.parse::<u64>().is_ok())
                    })
            })
        });
        if !ok {
            return Err(ex.fail(
                format!("{name}: \"<policy>\";{}=N;{}=N", needed[0], needed[1]),
                format!("{name}: {value:?}"),
            ));
        }
    }
    Ok(())
}
