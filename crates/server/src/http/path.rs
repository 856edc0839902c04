//! Path parameters, decoded but not yet validated.
//!
//! axum's `Path` extractor answers malformed percent-encoding with its own plain-text 400, but
//! the contract wants each operation's own JSON answer for a malformed id (400
//! `invalid_provider`, 404 `profile_not_found`, ...). So this extractor never fails: it takes
//! the parameters the router already decoded, and when one of them is not UTF-8 it takes the
//! raw parameters from the route table (`routes`, the router's own matcher) and marks that
//! segment. The
//! handler validates, with its own error code.

use std::convert::Infallible;

use appzone_contract::paths::decode_segment;
use axum::extract::{FromRequestParts, RawPathParams};
use http::request::Parts;

/// The route's path parameters in template order.
#[derive(Debug)]
pub enum RawParams {
    /// All parameters decoded to UTF-8 by the router (the usual case: nothing to copy).
    Decoded(RawPathParams),
    /// Some parameter is not UTF-8 after percent-decoding: `None` in its place.
    Split(Vec<Option<String>>),
}

impl RawParams {
    /// The `index`th parameter, `None` when missing or not UTF-8.
    pub fn get(&self, index: usize) -> Option<&str> {
        match self {
            Self::Decoded(params) => params.iter().nth(index).map(|(_, value)| value),
            Self::Split(segments) => segments.get(index).and_then(|s| s.as_deref()),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RawParams {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Infallible> {
        if let Ok(params) = RawPathParams::from_request_parts(parts, state).await {
            return Ok(Self::Decoded(params));
        }
        let segments = super::routes::find(parts.uri.path()).map_or_else(Vec::new, |found| {
            found
                .raw_params()
                .map(|raw| decode_segment(raw).map(|s| s.into_owned()))
                .collect()
        });
        Ok(Self::Split(segments))
    }
}
