//! Profiles in bulk. With the fixture every [`crate::TestApp`] starts with (two organizations,
//! their keys and profiles), the one way tests put data in a database; tests of the operator
//! CLI seed through the real binary instead, as that is what they test.

use appzone_server::storage::Store;

/// Inserts `n` profiles of `org` in one transaction (fast; `create_profile` makes one at a
/// time). Ids are `prof_{tag}_{i:05}`, in order.
pub async fn seed_profiles(store: &Store, org: &str, tag: &str, n: usize) -> Vec<String> {
    let ids: Vec<String> = (0..n).map(|i| format!("prof_{tag}_{i:05}")).collect();
    let mut tx = store.pool().begin().await.unwrap();
    for id in &ids {
        sqlx::query("INSERT INTO profiles (id, org_id, name, created_at) VALUES ($1, $2, $3, $4)")
            .bind(id)
            .bind(org)
            .bind(format!("seeded {id}"))
            .bind(appzone_server::model::now_ms())
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    ids
}
