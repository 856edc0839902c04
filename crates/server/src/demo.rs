//! `serve --demo`: a working first run.
//!
//! Ensures an organization `demo`, issues a fresh admin key and member key (revoking the ones a
//! previous demo run issued, since only their digests were kept), makes sure of two live
//! profiles, and returns ready-to-paste `curl` lines whose expected statuses are labelled.
//!
//! The profile the 204 line deletes has the id the OpenAPI document's examples name
//! ([`appzone_contract::openapi::EXAMPLE_PROFILE_ID`]): a request built from the document
//! (Swagger UI, a Postman collection converted from it) deletes a profile that exists. A later
//! demo run restores it when an earlier one deleted it. Likewise the demo keeps a zone mapping
//! with the id the document's examples name ([`EXAMPLE_ZONE_MAPPING_ID`]), of a constructed
//! account, stored again when an earlier run's was deleted.

use crate::model::offerings::Offerings;
use appzone_contract::openapi::EXAMPLE_ZONE_MAPPING_ID;
use appzone_contract::{paths, MappedRegion, MappedZone, ProfileId, RegionId, ZoneMappingId};

use crate::model::{OrgId, Role};
use crate::storage::{Actor, MappingWrite, Store, StoreError};

const DEMO_ORG: &str = "demo";
const ADMIN_NAME: &str = "demo-admin";
const MEMBER_NAME: &str = "demo-member";

/// What a demo run created.
#[derive(Debug)]
pub struct Demo {
    /// A key with role `admin`.
    pub admin_key: String,
    /// A key with role `member`.
    pub member_key: String,
    /// A live profile for the 204 example.
    pub deletable: ProfileId,
    /// A live profile for the 403 example.
    pub kept: ProfileId,
    /// The listing path of the 200 example.
    pub zones_path: String,
    /// The identity listing path with the demo's zone mapping.
    pub identities_path: String,
    /// A profile path that names nothing, for the 404 example.
    pub missing_path: String,
    /// Keys of an earlier demo run revoked by this one.
    pub revoked_previous: usize,
}

/// Seeds the demo organization; see the module docs.
pub async fn seed(store: &Store) -> Result<Demo, StoreError> {
    let org: OrgId = DEMO_ORG.parse().map_err(StoreError::Invalid)?;
    if !store.org_exists(&org).await? {
        store.create_org(&org, "Demo organization").await?;
    }
    let mut revoked_previous = 0;
    for key in store.list_keys(&org).await? {
        if key.revoked_at.is_none() && (key.name == ADMIN_NAME || key.name == MEMBER_NAME) {
            store.revoke_key(&key.key_id).await?;
            revoked_previous += 1;
        }
    }
    let admin = store.create_key(&org, Role::Admin, ADMIN_NAME).await?;
    let member = store.create_key(&org, Role::Member, MEMBER_NAME).await?;
    let invalid = |e: appzone_contract::IdError| StoreError::Invalid(e.to_string());
    let zones_path = paths::list_zones(
        &"aws".parse().map_err(invalid)?,
        &"us-east-1".parse().map_err(invalid)?,
    );
    let missing_path = paths::delete_profile(&"prof_does_not_exist".parse().map_err(invalid)?);
    let deletable = example_profile(store, &org).await?;
    let kept = store
        .create_profile(&org, "Demo profile a member cannot delete", None)
        .await?;
    let mapping_id: ZoneMappingId = EXAMPLE_ZONE_MAPPING_ID
        .parse()
        .map_err(|e: appzone_contract::ZoneMappingIdError| StoreError::Invalid(e.to_string()))?;
    if store
        .zone_mapping(org.as_str(), &mapping_id)
        .await?
        .is_none()
    {
        let actor = Actor {
            org: org.as_str().into(),
            key_id: admin.key_id().as_str().into(),
            request_id: "serve-demo".into(),
        };
        let region: RegionId = "us-east-1".parse().map_err(invalid)?;
        let zones = DEMO_MAPPING
            .iter()
            .map(|(id, name)| MappedZone::new((*id).to_owned(), (*name).to_owned()))
            .collect();
        let offered = DEMO_OFFERINGS.iter().flat_map(|(instance_type, zones)| {
            zones
                .iter()
                .map(|zone| (region.clone(), *zone, *instance_type))
        });
        // The catalog's order of us-east-1's zone ids is theirs sorted (use1-az1 first).
        let offerings = Offerings::from_triples(offered.collect(), |_, zone| {
            zone.strip_prefix("use1-az")
                .and_then(|n| n.parse().ok())
                .unwrap_or(usize::MAX)
        });
        let regions = [MappedRegion::new(region, zones)];
        let label = "demo: a constructed account, not a real one";
        let aws = "aws".parse().map_err(invalid)?;
        store
            .put_zone_mapping(
                &actor,
                MappingWrite {
                    account: None,
                    id: &mapping_id,
                    provider: &aws,
                    label,
                    regions: &regions,
                    offerings: &offerings,
                },
            )
            .await?;
    }
    let identities_path = paths::list_zone_identities(
        &"aws".parse().map_err(invalid)?,
        &"us-east-1".parse().map_err(invalid)?,
        Some(&mapping_id),
    );
    Ok(Demo {
        admin_key: admin.expose_secret().to_owned(),
        member_key: member.expose_secret().to_owned(),
        deletable,
        kept,
        zones_path,
        identities_path,
        missing_path,
        revoked_previous,
    })
}

/// The demo's zone mapping of us-east-1: a constructed account's letters for the six AZ IDs,
/// deliberately not any real account's.
/// The demo mapping's instance-type offerings, constructed like its names: each type with the
/// zone ids offering it (`instance-types?mapping=prod`, `?offers=p5.48xlarge`).
const DEMO_OFFERINGS: [(&str, &[&str]); 3] = [
    (
        "m7i.large",
        &[
            "use1-az1", "use1-az2", "use1-az3", "use1-az4", "use1-az5", "use1-az6",
        ],
    ),
    ("p5.48xlarge", &["use1-az2", "use1-az4", "use1-az6"]),
    ("trn1.32xlarge", &["use1-az1", "use1-az4"]),
];

const DEMO_MAPPING: [(&str, &str); 6] = [
    ("use1-az2", "us-east-1a"),
    ("use1-az4", "us-east-1b"),
    ("use1-az6", "us-east-1c"),
    ("use1-az1", "us-east-1d"),
    ("use1-az3", "us-east-1e"),
    ("use1-az5", "us-east-1f"),
];

/// Name of the profile the 204 line deletes.
const DELETABLE_NAME: &str = "Demo profile to delete";

/// The demo's deletable profile, live: the document's example profile id, created, kept or
/// restored; a fresh id only when another organization holds that one.
async fn example_profile(store: &Store, org: &OrgId) -> Result<ProfileId, StoreError> {
    let id: ProfileId = appzone_contract::openapi::EXAMPLE_PROFILE_ID
        .parse()
        .map_err(|e: appzone_contract::IdError| StoreError::Invalid(e.to_string()))?;
    if store.live_profile_exists(&id, org.as_str()).await? {
        return Ok(id);
    }
    let deleted = store.list_profiles(org, true).await?;
    if deleted.iter().any(|profile| profile.id == id.as_str()) {
        store.restore_profile(&id).await?;
        return Ok(id);
    }
    match store
        .create_profile(org, DELETABLE_NAME, Some(id.clone()))
        .await
    {
        Err(StoreError::Conflict(_)) => store.create_profile(org, DELETABLE_NAME, None).await,
        created => created,
    }
}

impl Demo {
    /// Labelled `curl` lines against `base_url`.
    pub fn curl_lines(&self, base_url: &str) -> String {
        let (zones, missing) = (&self.zones_path, &self.missing_path);
        let identities = &self.identities_path;
        let delete = paths::delete_profile(&self.deletable);
        let forbidden = paths::delete_profile(&self.kept);
        // Only the digests of earlier demo keys were kept, so they cannot be shown again; say
        // that they stopped working rather than let an earlier run's curl lines fail silently.
        let revoked = match self.revoked_previous {
            0 => String::new(),
            1 => "revoked the key of the previous --demo run: its curl lines now answer 401\n"
                .to_owned(),
            n => format!(
                "revoked the {n} keys of the previous --demo run: its curl lines now answer 401\n"
            ),
        };
        format!(
            "{revoked}demo organization \"{DEMO_ORG}\" is ready\n\
             admin key:  {admin}\n\
             member key: {member}\n\
             \n\
             # 200: list the zones of aws/us-east-1\n\
             curl -i -H 'X-API-KEY: {member}' {base_url}{zones}\n\
             # 204: an admin deletes a profile\n\
             curl -i -X DELETE -H 'X-API-KEY: {admin}' {base_url}{delete}\n\
             # 403: a member may not delete\n\
             curl -i -X DELETE -H 'X-API-KEY: {member}' {base_url}{forbidden}\n\
             # 404: no such profile\n\
             curl -i -X DELETE -H 'X-API-KEY: {admin}' {base_url}{missing}\n\
             # 200: the zones of aws/us-east-1 by AZ ID, named by the demo's zone mapping\n\
             curl -i -H 'X-API-KEY: {member}' '{base_url}{identities}'\n",
            admin = self.admin_key,
            member = self.member_key,
        )
    }
}
