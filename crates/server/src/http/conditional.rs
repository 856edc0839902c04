//! Conditional requests: the one `If-None-Match` comparison, for the zone listing and the docs
//! page's assets.

use http::HeaderValue;

/// Weak comparison (RFC 9110 §13.1.2): `*` or any listed tag equal to ours, `W/` ignored.
pub(crate) fn matches_etag<'h>(
    if_none_match: impl IntoIterator<Item = &'h HeaderValue>,
    etag: &HeaderValue,
) -> bool {
    let ours = etag
        .as_bytes()
        .strip_prefix(b"W/")
        .unwrap_or(etag.as_bytes());
    if_none_match
        .into_iter()
        .filter_map(|v| v.to_str().ok())
        .any(|list| {
            list.split(',')
                .map(str::trim)
                .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag).as_bytes() == ours)
        })
}
