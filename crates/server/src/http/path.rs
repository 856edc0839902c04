//! Path parameters, decoded but not yet validated.
//!
//! axum's `Path` extractor answers malformed percent-encoding with its own 400, but the
//! contract wants each operation's own answer for a malformed id (400 `invalid_provider`, 404
//! `profile_not_found`, ...). So this extractor never fails: it takes the segments of the raw
//! path where the matched route's template has a parameter, percent-decoded, and `None` for a
//! segment that is not UTF-8 once decoded. The handler validates, with its own error code.

use std::convert::Infallible;

use appzone_contract::paths::decode_segment;
use axum::extract::{FromRequestParts, MatchedPath};
use http::request::Parts;

/// The route's path parameters in template order.
#[derive(Debug)]
pub struct PathParams(Vec<Option<String>>);

impl PathParams {
    /// The `index`th parameter, `None` when missing or not UTF-8.
    pub fn get(&self, index: usize) -> Option<&str> {
        self.0.get(index).and_then(Option::as_deref)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for PathParams {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        let template = parts
            .extensions
            .get::<MatchedPath>()
            .map(MatchedPath::as_str);
        // The API routes' parameters are whole segments, so the template and the path split
        // into the same number of segments.
        let params = template
            .unwrap_or_default()
            .split('/')
            .zip(parts.uri.path().split('/'))
            .filter(|(part, _)| part.starts_with('{'))
            .map(|(_, raw)| decode_segment(raw).map(|s| s.into_owned()))
            .collect();
        Ok(Self(params))
    }
}
