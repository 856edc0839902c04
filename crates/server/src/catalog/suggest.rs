//! "Did you mean ...?" for an unknown provider or region id.
//!
//! Closeness is the optimal string alignment distance (`strsim`): insertions, deletions,
//! substitutions and swaps of two neighbouring characters, the typos people make in ids
//! (`awz`, `gpc`, `us-eats-1`). An id is suggested only when it is the one closest candidate
//! within [`max_distance`]: when two are equally close (`us-east-9` is one edit from both
//! `us-east-1` and `us-east-2`), naming either would be a guess, and the caller points to the
//! listing instead.
//!
//! The cost is bounded: callers pass ids that passed validation (at most 63 characters), the
//! catalog holds at most `MAX_PROVIDERS` providers and `MAX_REGIONS_PER_PROVIDER` regions per
//! provider, and candidates whose length alone rules them out are skipped before any distance
//! is computed.

/// The most edits for an id of `len` characters to count as close: one up to 7 characters,
/// two up to 11, three beyond. Short ids allow few edits, or every short id would be "close".
pub fn max_distance(len: usize) -> usize {
    (len / 4).clamp(1, 3)
}

/// The candidate closest to `typed` when exactly one is within [`max_distance`] of it and
/// closer than every other; `None` otherwise.
///
/// ```
/// use appzone_server::catalog::suggest::closest;
/// let providers = ["aws", "gcp", "azure"];
/// assert_eq!(closest("awz", providers), Some("aws"));
/// assert_eq!(closest("gpc", providers), Some("gcp"));
/// assert_eq!(closest("oracle", providers), None);
/// // Equally close to two regions: no guess.
/// assert_eq!(closest("us-east-9", ["us-east-1", "us-east-2"]), None);
/// ```
pub fn closest<'c>(typed: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let limit = max_distance(typed.len());
    let mut best: Option<(usize, &str)> = None;
    let mut tied = false;
    for candidate in candidates {
        if candidate.len().abs_diff(typed.len()) > limit {
            continue; // each edit changes the length by at most one
        }
        let distance = strsim::osa_distance(typed, candidate);
        if distance > limit {
            continue;
        }
        match best {
            Some((d, _)) if d < distance => {}
            Some((d, _)) if d == distance => tied = true,
            _ => {
                best = Some((distance, candidate));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_one_closest_id_within_the_limit() {
        let aws = [
            "us-east-1",
            "us-east-2",
            "us-west-1",
            "us-west-2",
            "eu-west-1",
        ];
        let cases: [(&str, &[&str], Option<&str>); 12] = [
            ("awz", &["aws", "gcp", "azure"], Some("aws")),
            ("aws2", &["aws", "gcp", "azure"], Some("aws")),
            ("azrue", &["aws", "gcp", "azure"], Some("azure")),
            ("gpc", &["aws", "gcp", "azure"], Some("gcp")),
            ("oracle", &["aws", "gcp", "azure"], None),
            ("a", &["aws", "gcp", "azure"], None),
            ("us-eats-1", &aws, Some("us-east-1")),
            ("useast-1", &aws, Some("us-east-1")),
            // Two candidates at the same distance: no guess.
            ("us-east-9", &aws, None),
            ("us-est-1", &aws, None),
            ("eu-west-1x", &aws, Some("eu-west-1")),
            ("ap-south-1", &aws, None),
        ];
        for (typed, candidates, expected) in cases {
            assert_eq!(
                closest(typed, candidates.iter().copied()),
                expected,
                "{typed}"
            );
        }
    }

    #[test]
    fn a_closer_candidate_breaks_a_tie_found_before_it() {
        // "abcd" is two edits from both "abxy" and "xycd", then one from "abce".
        assert_eq!(
            closest("abcdefgh", ["abcdefxy", "xycdefgh", "abcdefgx"]),
            Some("abcdefgx")
        );
        assert_eq!(closest("abcdefgh", ["abcdefxy", "xycdefgh"]), None);
    }

    #[test]
    fn the_limit_grows_with_the_length_and_stops_at_three() {
        let limits: Vec<usize> = [1, 3, 4, 7, 8, 11, 12, 63]
            .into_iter()
            .map(max_distance)
            .collect();
        assert_eq!(limits, [1, 1, 1, 1, 2, 2, 3, 3]);
    }
}
