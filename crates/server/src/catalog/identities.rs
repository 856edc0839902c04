//! A region's zone identities as the snapshot holds them: the items, the answer without a
//! mapping (built at the region's first request and kept, so start-up does not grow with the
//! identities of every region), and what an answer with the caller's mapping is built from.
//!
//! The message of every answer says how many names are known and, where some are `null`, how
//! the caller learns them: a name is never guessed (in an `account` or `subscription` region
//! only the caller's own mapping can give one).

use appzone_contract::{
    paths, AppliedMapping, CatalogSource, MappedName, NameScope, OptIn, SourceReference,
    Visibility, ZoneIdentity, ZoneIdentityList, ZoneIdentityQuery, ZoneMapping, ZoneType,
    ZoneTypes,
};

use std::sync::OnceLock;

use super::Answer;
use crate::model::catalog_file::{CatalogFile, RegionEntry};

/// Longest message of an identity listing, as the document promises (characters).
const MAX_MESSAGE_CHARS: usize = 512;

/// One region's identities.
#[derive(Debug)]
pub struct RegionIdentities {
    /// `aws/us-east-1`, for messages.
    at: String,
    /// How many zones the zone listing serves (a region without identities still has them).
    zone_count: usize,
    /// `None` for a region the catalog holds no identities for (a 1.1 catalog).
    scope: Option<NameScope>,
    /// The items with the catalog's names.
    items: Vec<ZoneIdentity>,
    /// The region's sources.
    source: CatalogSource,
    /// What the catalog says of the whole region.
    note: Option<String>,
    /// The answer without a mapping, once a request asked for it.
    plain: OnceLock<Answer>,
}

impl RegionIdentities {
    /// The identities of `region` of `provider` in `catalog`.
    pub fn build(catalog: &CatalogFile, provider: &str, region: &RegionEntry) -> Self {
        let scope = region.name_scope.as_deref().map(NameScope::from_wire);
        let items: Vec<ZoneIdentity> = match &scope {
            None => Vec::new(),
            Some(scope) => region
                .identities
                .iter()
                .map(|entry| {
                    let mut item = ZoneIdentity::new(
                        entry.zone_id.clone(),
                        entry.zone_name.clone(),
                        entry
                            .name_scope
                            .as_deref()
                            .map_or_else(|| scope.clone(), NameScope::from_wire),
                        ZoneType::from_wire(&entry.zone_type),
                        Visibility::from_wire(&entry.visibility),
                        entry.note.clone(),
                    );
                    item.parent_zone_id = entry.parent_zone_id.clone();
                    item.network_border_group = entry.network_border_group.clone();
                    item.opt_in = OptIn::from_wire(entry.opt_in());
                    item
                })
                .collect(),
        };
        let references = catalog
            .source
            .iter()
            .flat_map(|source| &source.references)
            .filter(|r| region.sources.contains(&r.id))
            .map(|r| {
                SourceReference::new(
                    r.id.clone(),
                    r.what.clone(),
                    r.location.clone(),
                    r.date.clone(),
                )
            })
            .collect();
        let compiled_on = catalog.source.as_ref().and_then(|s| s.compiled_on.clone());
        Self {
            at: format!("{provider}/{}", region.id),
            zone_count: region.zones.len(),
            scope,
            items,
            source: CatalogSource::new(compiled_on, references)
                .refreshed_on(region.refreshed_on.clone()),
            note: region.note.clone(),
            plain: OnceLock::new(),
        }
    }

    /// The answer without a mapping or filter: built by the first request, then kept.
    pub fn plain_answer(&self) -> &Answer {
        self.plain
            .get_or_init(|| self.answer_to(&ZoneIdentityQuery::default(), &[], None))
    }

    /// The answer to `query` with `mappings` (the ones it names, resolved, each with its
    /// stored version) applied, around the request id like the precomputed one.
    ///
    /// The first mapping's names replace the catalog's where it pairs the zone, and each
    /// mapping's fill `names`; then the filters keep the zones of the types asked (availability
    /// zones when not asked) whose id and shown name are among those asked. The weak `ETag`
    /// covers the body, the filters and each mapping's id and version: a 304 is never given
    /// for another filter, mapping or version of a mapping. `offered`, with `offers` in the
    /// query, is the zones where every mapping offers every type asked.
    pub fn answer_to(
        &self,
        query: &ZoneIdentityQuery,
        mappings: &[(&ZoneMapping, i64)],
        offered: Option<&[&str]>,
    ) -> Answer {
        let region = self.region();
        let first = mappings.first().map(|(mapping, _)| *mapping);
        let items: Vec<ZoneIdentity> = self
            .items
            .iter()
            .filter(|item| query.zone_types.admits(&item.zone_type))
            .map(|item| {
                let mut item = item.clone();
                item.names = mappings
                    .iter()
                    .map(|(mapping, _)| {
                        let zone = mapping.zone_of(region, &item.zone_id);
                        MappedName::new(
                            mapping.id.clone(),
                            zone.map(|z| z.zone_name.clone())
                                .or_else(|| item.zone_name.clone()),
                            zone.and_then(|z| z.state.clone()),
                            zone.and_then(|z| z.opt_in_status.clone()),
                        )
                    })
                    .collect();
                if let Some(name) = first.and_then(|m| m.name_of(region, &item.zone_id)) {
                    item.zone_name = Some(name.to_owned());
                    // The catalog's note says how to learn the name; the mapping gave it.
                    if matches!(
                        item.name_scope,
                        NameScope::Account | NameScope::Subscription
                    ) {
                        item.note = None;
                    }
                }
                item
            })
            .filter(|item| {
                offered.is_none_or(|zones| zones.contains(&item.zone_id.as_str()))
                    && (query.zone_ids.is_empty() || query.zone_ids.contains(&item.zone_id))
                    && (query.zone_names.is_empty()
                        || item
                            .zone_name
                            .as_ref()
                            .is_some_and(|name| query.zone_names.contains(name)))
            })
            .collect();
        let applied: Vec<AppliedMapping> = mappings
            .iter()
            .map(|(mapping, _)| {
                AppliedMapping::new(
                    mapping.id.clone(),
                    mapping.provider.clone(),
                    mapping.label.clone(),
                    mapping.imported_at.clone(),
                )
            })
            .collect();
        let mut message = self.message(first, &query.zone_types);
        if mappings.len() > 1 {
            let ids: Vec<&str> = mappings.iter().map(|(m, _)| m.id.as_str()).collect();
            message.push_str(&format!(
                "; names of zone mappings {} side by side",
                ids.join(", ")
            ));
        }
        if !query.offers.is_empty() {
            let ids: Vec<&str> = mappings.iter().map(|(m, _)| m.id.as_str()).collect();
            message.push_str(&format!(
                "; offers {} in zone {} {}",
                query.offers.join(", "),
                if ids.len() == 1 {
                    "mapping"
                } else {
                    "mappings"
                },
                ids.join(", ")
            ));
        }
        if query.filters() {
            message.push_str(&format!(
                "; {} shown by the filters",
                super::count(items.len(), "zone", "zones")
            ));
        }
        let message = super::at_most(message, MAX_MESSAGE_CHARS);
        let mut covers = String::new();
        push_covers(&mut covers, query, mappings);
        Answer::over_body(&covers, |id| {
            ZoneIdentityList::new(
                items.clone(),
                id,
                applied.clone(),
                message.clone(),
                self.source.clone(),
            )
        })
    }

    /// The region as messages name it: `aws/us-east-1`.
    pub fn at(&self) -> &str {
        &self.at
    }

    /// The region's id (`us-east-1` of `aws/us-east-1`).
    fn region(&self) -> &str {
        self.at.split_once('/').map_or("", |(_, r)| r)
    }

    /// The summary: how many zones, how many names are known, and how to learn the others
    /// (not yet cut to [`MAX_MESSAGE_CHARS`]).
    fn message(&self, mapping: Option<&ZoneMapping>, types: &ZoneTypes) -> String {
        let at = &self.at;
        // The zones of the types asked, before the other filters.
        let shown: Vec<&ZoneIdentity> = self
            .items
            .iter()
            .filter(|i| types.admits(&i.zone_type))
            .collect();
        let n = shown.len();
        let Some(scope) = &self.scope else {
            return format!(
                "{} in {at}; the catalog holds no zone identities for this region (it was \
                 imported without them)",
                super::count(self.zone_count, "zone", "zones")
            );
        };
        let region = self.region();
        let from_mapping = mapping.map_or(0, |m| {
            shown
                .iter()
                .filter(|i| m.name_of(region, &i.zone_id).is_some())
                .count()
        });
        let known = shown
            .iter()
            .filter(|i| {
                i.zone_name.is_some()
                    || mapping.is_some_and(|m| m.name_of(region, &i.zone_id).is_some())
            })
            .count();
        let zones = super::count(n, "zone", "zones");
        let mut message = if n == 0 {
            match types {
                ZoneTypes::AvailabilityZones => {
                    format!("0 zones in {at}: the region has no availability zones")
                }
                _ => format!("0 zones of the types asked in {at}"),
            }
        } else {
            match (scope, mapping) {
                (NameScope::Global, _) => {
                    format!("{zones} in {at}; zone names are the same in every project")
                }
                (_, Some(m)) if from_mapping == 0 => format!(
                    "{zones} in {at}; zone mapping {} pairs no zone of this region, so {known} \
                     of {n} names are known: add this region's output to the mapping",
                    m.id
                ),
                (_, Some(m)) if known < n => format!(
                    "{zones} in {at}; {from_mapping} names from zone mapping {}, {known} of {n} \
                     known: the zones without a name are not in the mapping (the account may \
                     not see them)",
                    m.id
                ),
                (_, Some(m)) => format!(
                    "{zones} in {at}; {from_mapping} names from zone mapping {}",
                    m.id
                ),
                (_, None) if known == n => format!(
                    "{zones} in {at}; {} known, the same for every account",
                    super::count(n, "name", "names")
                ),
                (NameScope::Uniform, None) => format!(
                    "{zones} in {at}; {known} of {n} names known, the same for every account; \
                     no public source pairs the others yet: store your aws ec2 \
                     describe-availability-zones output as a zone mapping and ask again with \
                     ?mapping="
                ),
                (NameScope::Account, None) if known == 0 => format!(
                    "{zones} in {at}; 0 names known: names here are per account, so store \
                     your account's aws ec2 describe-availability-zones output as a zone \
                     mapping and ask again with ?mapping="
                ),
                // Local Zones: one name for every account, beside per-account AZ names.
                (NameScope::Account, None) => format!(
                    "{zones} in {at}; {known} of {n} names known: the others are per account, \
                     so store your account's aws ec2 describe-availability-zones \
                     --all-availability-zones output as a zone mapping and ask again with \
                     ?mapping="
                ),
                (NameScope::Subscription, None) if known > 0 => format!(
                    "{zones} in {at}; {known} of {n} names known: the others are logical zones \
                     1, 2, 3, mapped per subscription: store your az account list-locations \
                     output as a zone mapping and ask again with ?mapping="
                ),
                (NameScope::Subscription, None) => format!(
                    "{zones} in {at}; deployments name logical zones 1, 2, 3, mapped per \
                     subscription: store your az account list-locations output as a zone \
                     mapping and ask again with ?mapping="
                ),
                (_, None) => format!("{zones} in {at}; {known} of {n} names known"),
            }
        };
        if let Some(note) = &self.note {
            message.push_str("; ");
            message.push_str(note);
        }
        message
    }

    /// The region's identities, in the catalog's order.
    pub fn items(&self) -> &[ZoneIdentity] {
        &self.items
    }

    /// The identity `zone_id` of the region, as the catalog serves it.
    pub fn item(&self, zone_id: &str) -> Option<&ZoneIdentity> {
        self.items.iter().find(|i| i.zone_id == zone_id)
    }

    /// Whether the region has availability zones (Azure's non-zonal regions have none).
    pub fn has_availability_zones(&self) -> bool {
        self.items
            .iter()
            .any(|i| i.zone_type == ZoneType::AvailabilityZone)
    }

    /// Whether the catalog holds identities for the region.
    pub fn known(&self) -> bool {
        self.scope.is_some()
    }
}

/// What an identity answer's `ETag` covers besides its body, appended to `out`: the filters and
/// each mapping's id and version.
fn push_covers(out: &mut String, query: &ZoneIdentityQuery, mappings: &[(&ZoneMapping, i64)]) {
    out.push_str("zone-identities\0");
    match &query.zone_types {
        ZoneTypes::AvailabilityZones => {}
        ZoneTypes::Only(types) => push_joined(out, types.iter().map(|t| t.as_str())),
        _ => out.push_str(paths::ALL_ZONE_TYPES),
    }
    for list in [&query.zone_ids, &query.zone_names, &query.offers] {
        out.push('\0');
        push_joined(out, list.iter().map(String::as_str));
    }
    for (mapping, version) in mappings {
        out.push('\0');
        out.push_str(mapping.id.as_str());
        out.push('\0');
        out.push_str(&version.to_string());
    }
}

/// `items` appended to `out`, separated by commas.
fn push_joined<'a>(out: &mut String, items: impl Iterator<Item = &'a str>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
}
