//! A region's zone identities as the snapshot holds them: the items, the precomputed answer
//! without a mapping, and what an answer with the caller's mapping is built from.
//!
//! The message of every answer says how many names are known and, where some are `null`, how
//! the caller learns them: a name is never guessed (in an `account` or `subscription` region
//! only the caller's own mapping can give one).

use appzone_contract::{
    AppliedMapping, CatalogSource, NameScope, SourceReference, Visibility, ZoneIdentity,
    ZoneIdentityList, ZoneMapping, ZoneType,
};

use super::{weak_etag, Answer};
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
    /// The answer without a mapping.
    pub answer: Answer,
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
                    ZoneIdentity::new(
                        entry.zone_id.clone(),
                        entry.zone_name.clone(),
                        scope.clone(),
                        ZoneType::from_wire(&entry.zone_type),
                        Visibility::from_wire(&entry.visibility),
                        entry.note.clone(),
                    )
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
        let mut identities = Self {
            at: format!("{provider}/{}", region.id),
            zone_count: region.zones.len(),
            scope,
            items,
            source: CatalogSource::new(compiled_on, references),
            note: region.note.clone(),
            answer: Answer::placeholder(),
        };
        let message = identities.message(None);
        let body = |id| {
            ZoneIdentityList::new(
                identities.items.clone(),
                id,
                None,
                message.clone(),
                identities.source.clone(),
            )
        };
        identities.answer = Answer::over_body("zone-identities", body);
        identities
    }

    /// The answer with `mapping` applied (its names replace the catalog's where it pairs the
    /// zone), around the request id like the one without, and its weak `ETag`: the one without
    /// a mapping combined with the mapping's id and version, so a replaced mapping changes it.
    pub fn with_mapping(&self, mapping: &ZoneMapping, version: i64) -> Answer {
        let region = self.at.split_once('/').map_or("", |(_, r)| r);
        let items: Vec<ZoneIdentity> = self
            .items
            .iter()
            .map(|item| {
                let mut item = item.clone();
                if let Some(name) = mapping.name_of(region, &item.zone_id) {
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
            .collect();
        let applied = AppliedMapping::new(
            mapping.id.clone(),
            mapping.provider.clone(),
            mapping.label.clone(),
            mapping.imported_at.clone(),
        );
        let message = self.message(Some(mapping));
        let mut answer = Answer::new(&[], |id| {
            ZoneIdentityList::new(items, id, Some(applied), message, self.source.clone())
        });
        answer.etag = weak_etag([
            self.answer.etag.as_bytes(),
            mapping.id.as_bytes(),
            &version.to_be_bytes()[..],
        ]);
        answer
    }

    /// The summary: how many zones, how many names are known, and how to learn the others.
    fn message(&self, mapping: Option<&ZoneMapping>) -> String {
        let at = &self.at;
        let n = self.items.len();
        let Some(scope) = &self.scope else {
            return format!(
                "{} in {at}; the catalog holds no zone identities for this region (it was \
                 imported without them)",
                super::count(self.zone_count, "zone", "zones")
            );
        };
        let region = at.split_once('/').map_or("", |(_, r)| r);
        let from_mapping = mapping.map_or(0, |m| {
            self.items
                .iter()
                .filter(|i| m.name_of(region, &i.zone_id).is_some())
                .count()
        });
        let known = self
            .items
            .iter()
            .filter(|i| {
                i.zone_name.is_some()
                    || mapping.is_some_and(|m| m.name_of(region, &i.zone_id).is_some())
            })
            .count();
        let zones = super::count(n, "zone", "zones");
        let mut message = if n == 0 {
            format!("0 zones in {at}: the region has no availability zones")
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
                (NameScope::Uniform, None) if known == n => {
                    format!("{zones} in {at}; {n} names known, the same for every account")
                }
                (NameScope::Uniform, None) => format!(
                    "{zones} in {at}; {known} of {n} names known, the same for every account; \
                     no public source pairs the others yet: store your aws ec2 \
                     describe-availability-zones output as a zone mapping and ask again with \
                     ?mapping="
                ),
                (NameScope::Account, None) => format!(
                    "{zones} in {at}; 0 names known: names here are per account, so store \
                     your account's aws ec2 describe-availability-zones output as a zone \
                     mapping and ask again with ?mapping="
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
        match message.char_indices().nth(MAX_MESSAGE_CHARS) {
            Some((cut, _)) => message[..cut].to_owned(),
            None => message,
        }
    }

    /// The identities (`zone_id`s) of the region, in catalog order.
    pub fn zone_ids(&self) -> impl Iterator<Item = &str> {
        self.items.iter().map(|i| i.zone_id.as_str())
    }

    /// Whether the catalog holds identities for the region.
    pub fn known(&self) -> bool {
        self.scope.is_some()
    }
}
