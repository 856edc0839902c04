//! The `RateLimit` and `RateLimit-Policy` response headers (IETF
//! draft-ietf-httpapi-ratelimit-headers), declared by [`super::finish`] on the answers the
//! server announces its limits on.
//!
//! The server sends them while a limit is on, and a limit can be switched off, so they are
//! declared optional (never `required`). Which limit an answer announces depends on how far the
//! request got:
//!
//! - an answer to an authenticated request (the operation's statuses, 304, 413, 429 and 503)
//!   carries the per-key policy, for example `RateLimit-Policy: "per-key";q=1000;w=1` and
//!   `RateLimit: "per-key";r=998;t=1`;
//! - a 401 carries the policy of failed authentications per client address, for example
//!   `RateLimit-Policy: "auth-failures";q=600;w=60` and `RateLimit: "auth-failures";r=599;t=1`;
//! - a 429 carries whichever of the two was reached, with `r=0`.
//!
//! 500 and the `default` response declare neither: a panic's 500 is answered before the
//! limits' headers are added.

use serde_json::{json, Map, Value};

use crate::headers::{AUTH_FAILURES_POLICY, PER_KEY_POLICY};

/// The name of the `RateLimit` header as the document spells it (`headers::RATE_LIMIT` is the
/// lowercase wire form).
pub(super) const RATE_LIMIT: &str = "RateLimit";

/// The name of the `RateLimit-Policy` header as the document spells it.
pub(super) const RATE_LIMIT_POLICY: &str = "RateLimit-Policy";

/// A policy name: a structured-field string of the names this service uses and may add.
const POLICY_NAME: &str = r#""[a-z0-9-]{1,64}""#;

/// A structured-field list of one or more items, each `item` (the draft allows several
/// policies in one header; the server sends one today).
fn list_pattern(item: &str) -> String {
    format!("^{item}(,[ ]*{item})*$")
}

/// Which limit the headers of one response describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Announced {
    /// The caller's key: any answer given once the key is accepted.
    PerKey,
    /// Failed authentications from the client's address: a 401.
    AuthFailures,
    /// Either one, whichever was reached: a 429.
    Reached,
}

impl Announced {
    /// The limit a response with `status` announces, or `None` for a response the server sends
    /// without the headers (or before it has counted the request against a limit).
    fn of(status: &str) -> Option<Self> {
        match status {
            "200" | "201" | "204" | "304" | "400" | "403" | "404" | "409" | "413" | "422"
            | "503" => Some(Announced::PerKey),
            "401" => Some(Announced::AuthFailures),
            "429" => Some(Announced::Reached),
            _ => None,
        }
    }

    /// The `RateLimit-Policy` and `RateLimit` header objects of a response.
    fn headers(self) -> [(&'static str, Value); 2] {
        let (policy_description, policy_example, state_description, state_example) = match self {
            Announced::PerKey => (
                format!(
                    "The request quota of your API key (IETF draft-ietf-httpapi-ratelimit-headers, \
                     a structured-field list): the policy name `\"{PER_KEY_POLICY}\"`, then `q`, \
                     the requests allowed per window, and `w`, the window in seconds. For \
                     example `\"{PER_KEY_POLICY}\";q=1000;w=1`: 1000 requests per second per key. \
                     Absent when the service runs without a per-key limit, and on an answer given \
                     before the key was checked (such as a 503 of an overloaded service)."
                ),
                format!("\"{PER_KEY_POLICY}\";q=1000;w=1"),
                format!(
                    "What is left of your API key's quota (IETF \
                     draft-ietf-httpapi-ratelimit-headers): the policy name, then `r`, the \
                     requests left in the current window, and `t`, the seconds until the quota is \
                     whole again (0 when it is). For example `\"{PER_KEY_POLICY}\";r=998;t=1`. \
                     Sent with `RateLimit-Policy` and absent when it is. A client may slow down \
                     as `r` nears 0 rather than wait for a 429."
                ),
                format!("\"{PER_KEY_POLICY}\";r=998;t=1"),
            ),
            Announced::AuthFailures => (
                format!(
                    "The limit on failed authentications from your client address (IETF \
                     draft-ietf-httpapi-ratelimit-headers, a structured-field list): the policy \
                     name `\"{AUTH_FAILURES_POLICY}\"`, then `q`, the failed authentications \
                     allowed per window, and `w`, the window in seconds. For example \
                     `\"{AUTH_FAILURES_POLICY}\";q=600;w=60`: 600 per minute. Past it, requests \
                     from the address answer 429. Absent when the service runs without this \
                     limit or cannot tell the client's address."
                ),
                format!("\"{AUTH_FAILURES_POLICY}\";q=600;w=60"),
                format!(
                    "What is left of the failed-authentication limit of your client address \
                     (IETF draft-ietf-httpapi-ratelimit-headers): the policy name, then `r`, the \
                     failed authentications left in the current window, and `t`, the seconds \
                     until the quota is whole again (0 when it is). For example \
                     `\"{AUTH_FAILURES_POLICY}\";r=599;t=1`. Sent with `RateLimit-Policy` and \
                     absent when it is."
                ),
                format!("\"{AUTH_FAILURES_POLICY}\";r=599;t=1"),
            ),
            Announced::Reached => (
                format!(
                    "The limit that was reached (IETF draft-ietf-httpapi-ratelimit-headers, a \
                     structured-field list): `\"{PER_KEY_POLICY}\";q=1000;w=1` when your API key \
                     sent too many requests, `\"{AUTH_FAILURES_POLICY}\";q=600;w=60` when your \
                     client address had too many failed authentications; `q` is what the policy \
                     allows per window of `w` seconds."
                ),
                format!("\"{PER_KEY_POLICY}\";q=1000;w=1"),
                format!(
                    "The state of the limit that was reached (IETF \
                     draft-ietf-httpapi-ratelimit-headers): the policy name, `r=0` (nothing \
                     left), and `t`, the seconds until the quota is whole again. For example \
                     `\"{PER_KEY_POLICY}\";r=0;t=1`, or `\"{AUTH_FAILURES_POLICY}\"` with `r=0`. \
                     Sent with `RateLimit-Policy`. `Retry-After` says when to retry."
                ),
                format!("\"{PER_KEY_POLICY}\";r=0;t=1"),
            ),
        };
        [
            (
                RATE_LIMIT,
                json!({
                    "schema": {
                        "type": "string",
                        "pattern": list_pattern(&format!("{POLICY_NAME};r=[0-9]{{1,10}};t=[0-9]{{1,10}}")),
                        "minLength": 1,
                        "maxLength": 512
                    },
                    "description": state_description,
                    "example": state_example
                }),
            ),
            (
                RATE_LIMIT_POLICY,
                json!({
                    "schema": {
                        "type": "string",
                        "pattern": list_pattern(&format!("{POLICY_NAME};q=[0-9]{{1,10}};w=[0-9]{{1,10}}")),
                        "minLength": 1,
                        "maxLength": 512
                    },
                    "description": policy_description,
                    "example": policy_example
                }),
            ),
        ]
    }
}

/// Declares `RateLimit` and `RateLimit-Policy` on each response of `operation` that announces a
/// limit (see the module docs). Only operations that take a key are limited; the headers go
/// after the ones already declared, so a response's own headers come first.
pub(super) fn add_rate_limit_headers(operation: &mut Value) {
    if operation.get("security").is_none() {
        return;
    }
    let responses = operation
        .get_mut("responses")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flat_map(Map::iter_mut);
    for (status, response) in responses {
        let Some(announced) = Announced::of(status) else {
            continue;
        };
        let Some(response) = response.as_object_mut() else {
            continue;
        };
        let headers = response
            .entry("headers")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(headers) = headers {
            for (name, header) in announced.headers() {
                headers.entry(name).or_insert(header);
            }
        }
        // `content` stays after `headers`, where utoipa puts it.
        if let Some(content) = response.remove("content") {
            response.insert("content".to_owned(), content);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_spells_the_contract_header_names() {
        assert!(crate::headers::RATE_LIMIT
            .as_str()
            .eq_ignore_ascii_case(RATE_LIMIT));
        assert!(crate::headers::RATE_LIMIT_POLICY
            .as_str()
            .eq_ignore_ascii_case(RATE_LIMIT_POLICY));
    }

    #[test]
    fn each_example_matches_its_pattern_and_names_a_policy_of_the_contract() {
        for announced in [
            Announced::PerKey,
            Announced::AuthFailures,
            Announced::Reached,
        ] {
            for (name, header) in announced.headers() {
                let example = header["example"].as_str().unwrap_or_default();
                let pattern = header["schema"]["pattern"].as_str().unwrap_or_default();
                assert!(
                    matches_list(example, pattern),
                    "{announced:?} {name}: {example} vs {pattern}"
                );
                assert!(
                    [PER_KEY_POLICY, AUTH_FAILURES_POLICY]
                        .iter()
                        .any(|policy| example.starts_with(&format!("\"{policy}\";"))),
                    "{example}"
                );
            }
        }
        assert_eq!(Announced::of("413"), Some(Announced::PerKey));
        assert_eq!(Announced::of("500"), None);
        assert_eq!(Announced::of("default"), None);
    }

    /// A small matcher for the two patterns above (no regex engine in this crate's
    /// dependencies): each comma-separated item is a quoted name and two `key=digits`
    /// parameters, with the keys the pattern names.
    fn matches_list(value: &str, pattern: &str) -> bool {
        let keys: Vec<&str> = ["r=", "t=", "q=", "w="]
            .into_iter()
            .filter(|key| pattern.contains(&format!(";{key}")))
            .collect();
        value.split(',').map(str::trim_start).all(|item| {
            let mut parts = item.split(';');
            let name_ok = parts.next().is_some_and(|name| {
                name.len() >= 3
                    && name.starts_with('"')
                    && name.ends_with('"')
                    && name[1..name.len() - 1]
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            });
            let params: Vec<&str> = parts.collect();
            name_ok
                && params.len() == keys.len()
                && params.iter().zip(&keys).all(|(param, key)| {
                    param.strip_prefix(key).is_some_and(|digits| {
                        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
                    })
                })
        })
    }
}
