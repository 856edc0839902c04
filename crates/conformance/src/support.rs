//! What the checks share: the ids they send, the walk of the catalog they start from, and the
//! small helpers that turn results into outcomes. A leaf: it imports no check module, so that
//! the check modules and the order of the run (`checks`) can all import it.

use appzone_contract::paths;

use crate::wire::Kit;
use crate::Outcome;

/// A malformed id, for every path parameter: a space and a `!` are never part of an id.
pub(crate) const MALFORMED_ID: &str = "Bad%20id%21";

/// A well-formed key that no server issued.
pub(crate) const WRONG_KEY: &str = "apz_AAAAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

/// What the providers → regions → zones walk found: the ids the other checks ask for.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    pub provider: Option<String>,
    pub region: Option<String>,
    /// Every provider the walk listed the regions of, with those regions.
    pub regions: Vec<(String, Vec<String>)>,
}

impl Walk {
    /// Whether the provider and region listings named `region` of `provider`.
    pub fn has(&self, provider: &str, region: &str) -> bool {
        self.regions
            .iter()
            .any(|(p, regions)| p == provider && regions.iter().any(|r| r == region))
    }

    /// The path parameters the walk can fill: `providerId` and `regionId`, encoded.
    pub fn values(&self) -> Vec<(&'static str, String)> {
        let mut values = Vec::new();
        if let Some(p) = &self.provider {
            values.push(("providerId", encode(p)));
        }
        if let Some(r) = &self.region {
            values.push(("regionId", encode(r)));
        }
        values
    }
}

/// Percent-encodes one path segment (everything but RFC 3986 unreserved characters).
pub(crate) fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// `Ok(())` is a pass.
pub(crate) fn done(result: Result<(), Outcome>) -> Outcome {
    result.err().unwrap_or(Outcome::Pass)
}

pub(crate) fn skip(why: impl Into<String>) -> Outcome {
    Outcome::Skip { why: why.into() }
}

/// The provider and region the zone-identity and zone-mapping checks ask for.
pub(crate) const PROVIDER: &str = "aws";
pub(crate) const REGION: &str = "us-east-1";

/// The identity listing of `region` of `provider` (ids as they go in a path).
pub(crate) fn identities_path(provider: &str, region: &str) -> String {
    format!(
        "{}/providers/{provider}/regions/{region}/zone-identities",
        paths::API_PREFIX
    )
}

/// The path of zone mapping `id` (an id of the kit's, which needs no escaping).
pub(crate) fn mapping_path(id: &str) -> String {
    format!("{}/{id}", paths::ZONE_MAPPINGS)
}

/// A zone-mapping id no organization has: the kit's prefix and 128 random bits.
pub(crate) fn fresh_mapping_id() -> String {
    format!("conformance-{}", random_hex())
}

/// An `Idempotency-Key` of the kit's own: its prefix and 128 random bits.
pub(crate) fn idempotency_key() -> String {
    format!("conformance-{}", random_hex())
}

/// 128 random bits as 32 hex digits.
fn random_hex() -> String {
    use rand::RngExt;
    format!("{:032x}", rand::rng().random::<u128>())
}

/// The admin key the zone-mapping writes send; `None` when they cannot run, after recording
/// every check of `checks` as skipped with the reason: `--read-only`, no `--admin-key`, or the
/// identity listing of [`PROVIDER`]/[`REGION`] did not answer every zone id of `stored` (the
/// pairs a check stores), from `zone_ids`.
pub(crate) fn writer_key_or_skip(
    kit: &mut Kit,
    zone_ids: Option<&[String]>,
    stored: &[(&str, &str)],
    checks: &[(&'static str, &'static str)],
) -> Option<String> {
    match writer_key(kit, zone_ids, stored) {
        Ok(admin) => Some(admin),
        Err(why) => {
            for (name, promise) in checks {
                kit.record(name, promise, skip(why.clone()));
            }
            None
        }
    }
}

/// The admin key, or why the writes cannot run (see [`writer_key_or_skip`]).
fn writer_key(
    kit: &Kit,
    zone_ids: Option<&[String]>,
    stored: &[(&str, &str)],
) -> Result<String, String> {
    let listed = |id: &str| zone_ids.is_some_and(|ids| ids.iter().any(|z| z == id));
    match kit.config.admin_key.clone() {
        _ if kit.config.read_only => Err("--read-only: no PUT or DELETE is sent".to_owned()),
        None => Err("needs --admin-key (and --member-key)".to_owned()),
        Some(_) if !stored.iter().all(|(_, id)| listed(id)) => Err(format!(
            "the identity listing of {PROVIDER}/{REGION} did not answer zones {}",
            stored
                .iter()
                .map(|(_, id)| *id)
                .collect::<Vec<_>>()
                .join(" and ")
        )),
        Some(admin) => Ok(admin),
    }
}
