//! What storing a mapping answers about the parts it did not take: the refusal of the whole
//! (an output that is not the cloud's shape, or contradicts the catalog) and a zone skipped
//! (named in `skipped`, the rest stored). Both the zones (`parse.rs`) and the offerings
//! (`offerings.rs`) are read into these.

use appzone_contract::SkippedZone;

/// Why an output was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingError {
    /// Not the shape of the cloud's output (400 `invalid_body`).
    Shape(String),
    /// It contradicts itself or the catalog's sourced pairs, or nothing of it is held by the
    /// catalog (422 `invalid_zone_mapping`).
    Catalog(String),
}

/// Text of the output as `skipped` shows it: printable ASCII (anything else as `?`), at most
/// 512 characters, as the document states; the clouds' names and ids are ASCII.
fn shown(text: &str) -> String {
    text.chars()
        .take(512)
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// A skipped zone (or a location, without `zone_id`/`zone_name`), its texts as [`shown`].
pub(crate) fn skip(
    region: &str,
    zone_id: Option<&str>,
    zone_name: Option<&str>,
    reason: String,
) -> SkippedZone {
    SkippedZone::new(
        shown(region),
        zone_id.map(shown),
        zone_name.map(shown),
        shown(&reason),
    )
}
