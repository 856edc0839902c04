//! Path templates of the operations, and functions that build and parse concrete paths.
//!
//! Templates use the `{name}` syntax shared by OpenAPI and axum 0.8, so the server routes with the
//! same constants the document publishes.

use std::borrow::Cow;

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};

use crate::{ProfileId, ProviderId, RegionId};

/// Prefix of every versioned API path.
pub const API_PREFIX: &str = "/api/v1";

/// Path of the provider listing (`GET`); it has no parameters.
pub const LIST_PROVIDERS: &str = "/api/v1/providers";

/// Template of the region listing (`GET`).
pub const LIST_REGIONS: &str = "/api/v1/providers/{providerId}/regions";

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

/// The concrete path listing the regions of `provider`.
///
/// ```
/// use appzone_contract::paths;
/// assert_eq!(paths::list_regions(&"aws".parse()?), "/api/v1/providers/aws/regions");
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
pub fn list_regions(provider: &ProviderId) -> String {
    format!(
        "{API_PREFIX}/providers/{}/regions",
        encode(provider.as_str())
    )
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
    walk(literals(template), path, |segment| {
        captures.push(segment);
        true
    })
    .then_some(captures)
}

/// A route template split once at its placeholders, for matching many paths: the hot path's
/// matcher, which compares no byte of the template twice per request.
///
/// ```
/// use appzone_contract::paths::{Template, LIST_ZONES};
/// let listing = Template::new(LIST_ZONES);
/// let path = "/api/v1/providers/aws/regions/us-east-1/zones";
/// assert_eq!(listing.params::<2>(path), Some(["aws", "us-east-1"]));
/// assert_eq!(listing.params::<2>("/api/v1/providers//regions/r/zones"), None);
/// assert_eq!(listing.params::<1>(path), None);
/// ```
#[derive(Debug, Clone)]
pub struct Template<'t> {
    /// The literal text before the first placeholder, between each two, and after the last.
    literals: Vec<&'t str>,
}

impl<'t> Template<'t> {
    /// Splits `template` (placeholders are whole `/{name}` segments).
    pub fn new(template: &'t str) -> Self {
        Self {
            literals: literals(template).collect(),
        }
    }

    /// The raw segments filling the template's `N` placeholders, without allocating; `None`
    /// when the path does not have the template's shape, a placeholder segment is empty, or
    /// the template does not have exactly `N` placeholders.
    pub fn params<'p, const N: usize>(&self, path: &'p str) -> Option<[&'p str; N]> {
        let mut params = [""; N];
        let mut filled = 0;
        let shaped = walk(self.literals.iter().copied(), path, |segment| {
            let Some(slot) = params.get_mut(filled) else {
                return false;
            };
            *slot = segment;
            filled += 1;
            !segment.is_empty()
        });
        (shaped && filled == N).then_some(params)
    }
}

/// Walks `path` along a template given as its `literals` (see [`Template`]); `capture` sees
/// each segment filling a placeholder and may refuse it. True when the shapes match and no
/// capture was refused.
///
/// Literal text is compared in one go and a placeholder's segment found with one byte search:
/// this runs per request, and a segment-by-segment walk cost about 1,300 instructions on the
/// zone listing's path (BENCHMARKS.md).
fn walk<'t, 'p>(
    mut literals: impl Iterator<Item = &'t str>,
    path: &'p str,
    mut capture: impl FnMut(&'p str) -> bool,
) -> bool {
    let (Some(mut literal), mut path) = (literals.next(), path) else {
        return false;
    };
    loop {
        let Some(next) = literals.next() else {
            return literal == path;
        };
        let Some(rest) = path.strip_prefix(literal) else {
            return false;
        };
        let taken = position(rest, b'/').unwrap_or(rest.len());
        if !capture(&rest[..taken]) {
            return false;
        }
        (literal, path) = (next, &rest[taken..]);
    }
}

/// The literal texts of `template` around its placeholders: before the first, between each
/// two, after the last (one more than there are placeholders).
fn literals(template: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(template);
    std::iter::from_fn(move || {
        let t = rest.take()?;
        match next_placeholder(t) {
            Some((start, end)) => {
                rest = Some(&t[end..]);
                Some(&t[..start])
            }
            None => Some(t),
        }
    })
}

/// Where the next placeholder segment of `template` starts (its `{`) and ends (the next `/`,
/// or the end). A `{` elsewhere than at a segment's start, or a segment not ending with `}`,
/// is literal text.
fn next_placeholder(template: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    loop {
        let start = from + position(&template[from..], b'{')?;
        let end = position(&template[start..], b'/').map_or(template.len(), |slash| start + slash);
        if template[..start].ends_with('/') && template[start..end].ends_with('}') {
            return Some((start, end));
        }
        from = start + 1;
    }
}

/// Where `byte` first occurs in `s`. A plain loop: for strings this short, `str::find`'s
/// searcher costs several times more.
fn position(s: &str, byte: u8) -> Option<usize> {
    s.bytes().position(|b| b == byte)
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
    walk(literals(template), path, |segment| !segment.is_empty())
}
