//! Path parameters, decoded but not yet validated.
//!
//! axum's `Path` extractor answers malformed percent-encoding with its own plain-text 400, but
//! the contract wants each operation's own JSON answer for a malformed id (400
//! `invalid_provider`, 404 `profile_not_found`, ...). So this extractor never fails: it splits
//! the request path along the matched template (the contract's), percent-decodes each segment,
//! and leaves validation, and its error code, to the handler.

use std::convert::Infallible;

use appzone_contract::paths::{decode_segment, match_template};
use axum::extract::{FromRequestParts, MatchedPath};
use http::request::Parts;

/// The route's path parameters in template order; `None` for a segment that is not UTF-8
/// after percent-decoding.
#[derive(Debug)]
pub struct RawParams(Vec<Option<String>>);

impl RawParams {
    /// The `index`th parameter, `None` when missing or not UTF-8.
    pub fn get(&self, index: usize) -> Option<&str> {
        self.0.get(index).and_then(|s| s.as_deref())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RawParams {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        let segments = parts
            .extensions
            .get::<MatchedPath>()
            .and_then(|template| match_template(template.as_str(), parts.uri.path()))
            .unwrap_or_default();
        Ok(Self(
            segments
                .into_iter()
                .map(|raw| decode_segment(raw).map(|s| s.into_owned()))
                .collect(),
        ))
    }
}
