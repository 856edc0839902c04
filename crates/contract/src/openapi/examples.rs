//! The example values the document shows: path parameters that name what the demo server
//! holds, and the bodies of the responses every operation shares, worded as the service words
//! them.
//!
//! The messages are the server's (`crates/server/src/http/error.rs`, `limits.rs`); the
//! server's test `documented_error_examples_are_the_servers_answers` asks the server for each
//! example of the document and compares the answers word for word, so a message changed on one
//! side only fails it.

use serde_json::{json, Value};

use crate::ids::EXAMPLE_PROFILE_ID;
use crate::mappings::{EXAMPLE_ZONE_MAPPING_ID, MAX_ZONE_MAPPING_BYTES};
use crate::paths;
use crate::ErrorCode;

/// Example value of each path parameter: a provider and region of the built-in catalog, the
/// demo's deletable profile, and the demo's zone mapping.
pub(super) const PATH_PARAMETERS: [(&str, &str); 4] = [
    ("providerId", "aws"),
    ("regionId", "us-east-1"),
    ("profileId", EXAMPLE_PROFILE_ID),
    ("mappingId", EXAMPLE_ZONE_MAPPING_ID),
];

/// The body limit of every path but a zone mapping's when the operator has not set one: the
/// server's `HttpConfig::DEFAULT_MAX_BODY_BYTES` (the examples test compares the answers).
const DEFAULT_BODY_LIMIT: usize = 64 * 1024;

/// 413: the message of the body limit of the path `template`, which names that limit: a zone
/// mapping's path takes [`MAX_ZONE_MAPPING_BYTES`], every other the default.
pub(super) fn payload_too_large(template: &str) -> String {
    let limit = if template == paths::ZONE_MAPPING {
        MAX_ZONE_MAPPING_BYTES
    } else {
        DEFAULT_BODY_LIMIT
    };
    format!("the request body is larger than this route's limit of {limit} bytes")
}
/// 429: the message of the per-key and per-address limits.
pub(super) const RATE_LIMITED: &str = "rate limit exceeded, retry later";
/// 500: the message of every internal error (the detail goes to the log only).
pub(super) const INTERNAL_ERROR: &str = "internal error; quote the request id when reporting it";
/// 503: the message of every transient failure (overload, timeout, database unreachable).
pub(super) const UNAVAILABLE: &str = "service temporarily unavailable, retry later";
/// 405: the message of a method the path does not have.
pub(super) const METHOD_NOT_ALLOWED: &str =
    "method not allowed on this route; see the Allow header";

/// The 404 `not_found` message for `path` followed by a slash: the service names the route.
pub(super) fn not_found_with_trailing_slash(path: &str) -> String {
    format!("no such route; did you mean {path} (no trailing slash)?")
}

/// `template` with its parameters replaced by their example values.
pub(super) fn concrete_path(template: &str) -> String {
    PATH_PARAMETERS
        .iter()
        .fold(template.to_owned(), |path, (name, value)| {
            path.replace(&format!("{{{name}}}"), value)
        })
}

/// An error body as the service sends it.
pub(super) fn error_body(code: &ErrorCode, message: &str) -> Value {
    json!({"error": message, "error_code": code.as_str()})
}
