//! Path templates of the two operations, and functions that build and parse concrete paths.
//!
//! Templates use the `{name}` syntax shared by OpenAPI and axum 0.8, so the server routes with the
//! same constants the document publishes.

use std::borrow::Cow;

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};

use crate::{ProfileId, ProviderId, RegionId};

/// Prefix of every versioned API path.
pub const API_PREFIX: &str = "/api/v1";

/// Template of the zone listing (`GET`).
pub const LIST_ZONES: &str = "/api/v1/providers/{providerId}/regions/{regionId}/zones";

/// Template of the profile deletion (`DELETE`).
pub const DELETE_PROFILE: &str = "/api/v1/applications/profiles/{profileId}";

/// Characters escaped inside one path segment: everything but RFC 3986 unreserved characters.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'!')
    .add(b'"')
    .add(b'#')
    .add(b'$')
    .add(b'%')
    .add(b'&')
    .add(b'\'')
    .add(b'(')
    .add(b')')
    .add(b'*')
    .add(b'+')
    .add(b',')
    .add(b'/')
    .add(b':')
    .add(b';')
    .add(b'<')
    .add(b'=')
    .add(b'>')
    .add(b'?')
    .add(b'@')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

fn encode(segment: &str) -> impl std::fmt::Display + '_ {
    utf8_percent_encode(segment, SEGMENT)
}

/// The concrete path listing the zones of `provider`/`region`.
///
/// ```
/// use appzone_contract::paths;
/// let p = paths::list_zones(&"gcp".parse()?, &"europe-west1".parse()?);
/// assert_eq!(p, "/api/v1/providers/gcp/regions/europe-west1/zones");
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
pub fn list_zones(provider: &ProviderId, region: &RegionId) -> String {
    format!(
        "{API_PREFIX}/providers/{}/regions/{}/zones",
        encode(provider.as_str()),
        encode(region.as_str())
    )
}

/// The concrete path deleting profile `id`.
///
/// ```
/// use appzone_contract::paths;
/// assert_eq!(
///     paths::delete_profile(&"prof_1".parse()?),
///     "/api/v1/applications/profiles/prof_1"
/// );
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
pub fn delete_profile(id: &ProfileId) -> String {
    format!("{API_PREFIX}/applications/profiles/{}", encode(id.as_str()))
}

/// Percent-decodes one raw path segment. `None` when the bytes are not valid UTF-8 (`%FF`), which
/// callers treat as a malformed identifier.
///
/// ```
/// use appzone_contract::paths::decode_segment;
/// assert_eq!(decode_segment("a%2Fb").as_deref(), Some("a/b"));
/// assert_eq!(decode_segment("%FF"), None);
/// ```
pub fn decode_segment(raw: &str) -> Option<Cow<'_, str>> {
    percent_decode_str(raw).decode_utf8().ok()
}

/// Splits a concrete path into the raw (still percent-encoded) segments that fill `template`'s
/// `{placeholders}`, in order. `None` when the path does not have the template's shape.
///
/// ```
/// use appzone_contract::paths::{match_template, LIST_ZONES};
/// let raw = match_template(LIST_ZONES, "/api/v1/providers/aws/regions/us-east-1/zones");
/// assert_eq!(raw, Some(vec!["aws", "us-east-1"]));
/// ```
pub fn match_template<'p>(template: &str, path: &'p str) -> Option<Vec<&'p str>> {
    let mut captures = Vec::new();
    walk(template, path, |segment| {
        captures.push(segment);
        true
    })
    .then_some(captures)
}

/// The raw segments filling `template`'s `N` placeholders, without allocating; `None` when the
/// path does not have the template's shape, a placeholder segment is empty, or the template
/// does not have exactly `N` placeholders.
///
/// ```
/// use appzone_contract::paths::{template_params, LIST_ZONES};
/// let path = "/api/v1/providers/aws/regions/us-east-1/zones";
/// assert_eq!(template_params::<2>(LIST_ZONES, path), Some(["aws", "us-east-1"]));
/// assert_eq!(template_params::<2>(LIST_ZONES, "/api/v1/providers//regions/r/zones"), None);
/// assert_eq!(template_params::<1>(LIST_ZONES, path), None);
/// ```
pub fn template_params<'p, const N: usize>(template: &str, path: &'p str) -> Option<[&'p str; N]> {
    let mut params = [""; N];
    let mut filled = 0;
    let shaped = walk(template, path, |segment| {
        let Some(slot) = params.get_mut(filled) else {
            return false;
        };
        *slot = segment;
        filled += 1;
        !segment.is_empty()
    });
    (shaped && filled == N).then_some(params)
}

/// Walks `path` along `template`, segment by segment; `capture` sees each segment filling a
/// `{placeholder}` and may refuse it. True when the shapes match and no capture was refused.
fn walk<'p>(template: &str, path: &'p str, mut capture: impl FnMut(&'p str) -> bool) -> bool {
    let (mut wanted, mut given) = (Some(template), Some(path));
    loop {
        match (next_segment(&mut wanted), next_segment(&mut given)) {
            (None, None) => return true,
            (Some(w), Some(g)) if w.starts_with('{') && w.ends_with('}') => {
                if !capture(g) {
                    return false;
                }
            }
            (Some(w), Some(g)) if w == g => {}
            _ => return false,
        }
    }
}

/// `str::split('/')` one segment at a time, by a plain byte scan: paths are short, and the
/// general splitter's searcher cost more than the rest of the walk (this runs per request).
fn next_segment<'a>(rest: &mut Option<&'a str>) -> Option<&'a str> {
    let s = rest.take()?;
    match s.bytes().position(|b| b == b'/') {
        Some(slash) => {
            *rest = Some(&s[slash + 1..]);
            Some(&s[..slash])
        }
        None => Some(s),
    }
}

/// Whether `path` has the shape of `template`, with every `{placeholder}` segment non-empty.
/// Allocation-free, for labelling requests on the hot path.
///
/// ```
/// use appzone_contract::paths::{matches_template, DELETE_PROFILE};
/// assert!(matches_template(DELETE_PROFILE, "/api/v1/applications/profiles/p1"));
/// assert!(!matches_template(DELETE_PROFILE, "/api/v1/applications/profiles/"));
/// ```
pub fn matches_template(template: &str, path: &str) -> bool {
    // The literal start (up to the first placeholder segment) is compared in one go: most paths
    // are told apart by their first bytes, and this runs per request.
    let literal = template.find("/{").map_or(template, |i| &template[..=i]);
    match path.strip_prefix(literal) {
        Some(rest) if literal.len() < template.len() => {
            walk(&template[literal.len()..], rest, |segment| {
                !segment.is_empty()
            })
        }
        Some(rest) => rest.is_empty(),
        None => false,
    }
}
