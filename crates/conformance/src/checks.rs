//! The order of the whole run: each module of checks in turn, and what one hands the next
//! (the catalog walk of `listings`, the zone ids of `identities`). Only this module imports
//! the check modules; they import nothing of each other's.

use crate::wire::Kit;
use crate::{aggregate, delete, identities, listings, mappings, offerings, refusals};

/// Runs every check, recording each outcome in `kit`.
pub(crate) async fn run_all(kit: &mut Kit) {
    let walk = listings::run(kit).await;
    refusals::request_ids(kit).await;
    refusals::authentication(kit).await;
    refusals::errors(kit, &walk).await;
    let zone_ids = identities::run(kit, &walk).await;
    mappings::run(kit, zone_ids.as_deref()).await;
    offerings::run(kit, zone_ids.as_deref()).await;
    delete::run(kit).await;
    aggregate::run(kit);
}
