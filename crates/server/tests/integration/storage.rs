//! What the database holds: no plaintext keys, durable settings.

use appzone_test_support::{both_backends, postgres_only, TestApp};

both_backends! {
    async fn applied_migrations_keep_the_checksums_earlier_releases_recorded(app: TestApp) {
        // sqlx refuses to start on a database whose applied migration's checksum differs from
        // the binary's. These are the checksums the releases (sqlx 0.8) wrote: an edited
        // migration, or a sqlx that hashes differently, would lock every existing deployment out.
        let expected = match app.store.backend() {
            appzone_server::storage::Backend::Sqlite => {
                "a32fb4c1945560c371586fad4e6d71496ea46e24e5e7174c40618e2f9aef4bdbeb26d411600e71576af3b0c2fcb330d7"
            }
            appzone_server::storage::Backend::Postgres => {
                "f797222efa9d6b1daca6f941baa3d0350839fb92f2b99117769a6afb848cda7ecdede4bcbeac127d47a6271d2a55caae"
            }
        };
        let rows: Vec<(i64, String, Vec<u8>, i64)> =
            sqlx::query_as("SELECT version, description, checksum, CASE WHEN success THEN 1 ELSE 0 END FROM _sqlx_migrations ORDER BY version")
                .fetch_all(app.store.pool())
                .await
                .unwrap();
        let rows: Vec<(i64, String, String, i64)> = rows
            .into_iter()
            .map(|(version, description, checksum, success)| (version, description, hex::encode(checksum), success))
            .collect();
        // Added in 1.1.0, the same text on both backends.
        let idempotency_keys = "760e2b9de72db13fd7f614ecb4fc4ee3bcb1b712a71955cdfb8181c83b32c7c4d67509168d4006e503f21869bf34113f";
        // Added after 1.1.0, the same text on both backends.
        let api_key_last_used = "71be9426022202e244c8468d510b24431d0801064f9ac19b332fcad4f1785e51568ced591f0ca2cfbe5bbae33ce70c47";
        // Added after 1.1.0; the backends' texts differ (the column type of `seq`).
        let change_log = match app.store.backend() {
            appzone_server::storage::Backend::Sqlite => {
                "8fa0003556524190f62cceebefcce60246e990e2275a776a8dbc8ae9245610c4395593e9dbb859e4adc9e814d983f9d0"
            }
            appzone_server::storage::Backend::Postgres => {
                "7cccce3b95e37858828294b9b9013ec144646bc88d13c3cd956de04f3f6c363ea3b0e794d02ce2813d9401b8e866ad74"
            }
        };
        // Added in 1.2.0; the backends' texts differ (the audit table's id column).
        let zone_identities = match app.store.backend() {
            appzone_server::storage::Backend::Sqlite => {
                "48a33e81a245956449acb8eb8343bccd7e23cbdf590b6074d4b730006254d4ef066f6cf0b05ebf63da8127708274126d"
            }
            appzone_server::storage::Backend::Postgres => {
                "ac6bda4ed4e48bdddfea8b23e4cc4974361bfc43f9da6415d6d0240fe9660afdd06e6e4acf57e9c71869bb7e5f2956ac"
            }
        };
        // Added in 1.2.0, the same text on both backends.
        let zones_to_build_on = "b41d13327f01df6c6ca9bbb35e63d7546ac9a2f4bee0d2fe06b5cbde7d8c6961adc7e661e020dc4d2f30b78f1fbf6a61";
        // Added in 1.3.0, the same text on both backends.
        let offerings = "be2c7c1e4fe889bf276fc5de145bf2c4860d21343deb207cade8f377ae21617c13d6521a3b0ed086d9ae2e813fb6ffff";
        assert_eq!(
            rows,
            [
                (1, "initial".to_owned(), expected.to_owned(), 1),
                (2, "idempotency keys".to_owned(), idempotency_keys.to_owned(), 1),
                (3, "api key last used".to_owned(), api_key_last_used.to_owned(), 1),
                (4, "change log".to_owned(), change_log.to_owned(), 1),
                (5, "zone identities".to_owned(), zone_identities.to_owned(), 1),
                (6, "zones to build on".to_owned(), zones_to_build_on.to_owned(), 1),
                (7, "offerings".to_owned(), offerings.to_owned(), 1),
            ]
        );
    }

    async fn database_holds_no_api_key_in_plain_text(app: TestApp) {
        let secrets: Vec<&str> = [&app.admin_key, &app.member_key, &app.revoked_key, &app.other_admin_key]
            .into_iter()
            .map(|key| &key[17..])
            .collect();
        let rows: Vec<(String, String, String)> = sqlx::query_as("SELECT key_id, digest, name FROM api_keys")
            .fetch_all(app.store.pool())
            .await
            .unwrap();
        assert_eq!(rows.len(), 4);
        for (key_id, digest, name) in &rows {
            for secret in &secrets {
                assert!(!digest.contains(secret) && !name.contains(secret) && !key_id.contains(secret));
            }
            assert_eq!(digest.len(), 64, "SHA-256 hex");
        }
        let admin_digest = appzone_server::keys::digest_hex(&app.admin_key);
        assert!(rows.iter().any(|(id, digest, _)| id == &app.admin_key[4..16] && digest == &admin_digest));
    }

    async fn a_catalog_reads_back_exactly_as_written_with_its_order_and_empty_regions(app: TestApp) {
        // Reads join each region's zones into one column and inserts go in multi-row
        // statements: the order of everything, a region without zones and more rows than one
        // statement holds must all come back as they were.
        let mut catalog = scaled_catalog(2);
        let region = &mut catalog.providers[0].regions[0];
        region.zones.reverse();
        catalog.providers[1].regions[0].zones.clear();
        catalog.providers.swap(0, 2);
        app.store.replace_catalog(&catalog).await.unwrap();
        let (_, read) = app.store.load_catalog().await.unwrap();
        assert_eq!(read, catalog);
    }

    async fn an_import_that_loses_a_race_compares_again_with_the_catalog_that_won(app: TestApp) {
        // An import reads and compares before it takes the write lock. Here another writer holds
        // that lock while the import reads, then removes a provider and commits: the import must
        // see that the version moved, read again and write the whole of its catalog, the removed
        // provider included, instead of writing its changes against what it read first.
        let catalog = scaled_catalog(2);
        app.store.replace_catalog(&catalog).await.unwrap();
        let removed = catalog.providers[1].id.as_str().to_owned();
        let mut imported = catalog.clone();
        imported.providers[0].regions[0].zones.push("scale-extra-1".to_owned());

        let mut other = app.store.pool().begin().await.unwrap();
        sqlx::query("UPDATE catalog_meta SET version = version + 1 WHERE singleton = 1")
            .execute(&mut *other)
            .await
            .unwrap();
        let store = app.store.clone();
        let import = {
            let imported = imported.clone();
            tokio::spawn(async move { store.import_catalog(&imported, true).await })
        };
        // Long enough for the import to read the catalog and wait for the lock.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        for sql in [
            "DELETE FROM catalog_zones WHERE provider_id = $1",
            "DELETE FROM catalog_regions WHERE provider_id = $1",
            "DELETE FROM catalog_providers WHERE id = $1",
        ] {
            sqlx::query(sql).bind(&removed).execute(&mut *other).await.unwrap();
        }
        other.commit().await.unwrap();

        let result = import.await.unwrap().unwrap();
        assert_eq!(result.changes.added.providers, 1, "{}", result.changes);
        assert_eq!(app.store.load_catalog().await.unwrap(), (result.version, imported));
    }

    async fn an_import_rewrites_only_the_providers_it_changes_and_reads_back_as_imported(app: TestApp) {
        // An import's writes follow the change, not the catalog's size: zone rows of providers
        // the import leaves alone keep their identity (SQLite's rowid, PostgreSQL's ctid, both
        // new for a rewritten row), while every step reads back exactly as imported.
        let identity = match app.store.backend() {
            appzone_server::storage::Backend::Sqlite => "CAST(rowid AS TEXT)",
            appzone_server::storage::Backend::Postgres => "CAST(ctid AS TEXT)",
        };
        let rows = |provider: String| {
            let sql = format!(
                "SELECT {identity} FROM catalog_zones WHERE provider_id = $1 ORDER BY region_id, position"
            );
            let pool = app.store.pool().clone();
            async move {
                let rows: Vec<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(provider)
                    .fetch_all(&pool)
                    .await
                    .unwrap();
                rows
            }
        };
        let mut catalog = scaled_catalog(3);
        app.store.replace_catalog(&catalog).await.unwrap();
        let ids: Vec<String> = catalog.providers.iter().map(|p| p.id.as_str().to_owned()).collect();
        let (changed, untouched) = (ids[1].clone(), ids[4].clone());
        let before = (rows(changed.clone()).await, rows(untouched.clone()).await);

        // One zone more in one provider.
        catalog.providers[1].regions[0].zones.push("scale-extra-1".to_owned());
        let imported = app.store.import_catalog(&catalog, true).await.unwrap();
        assert_eq!(imported.changes.added.zones, 1);
        assert_eq!(app.store.load_catalog().await.unwrap().1, catalog);
        let after = (rows(changed.clone()).await, rows(untouched.clone()).await);
        assert_eq!(after.1, before.1, "a provider the import did not change was rewritten");
        assert!(
            after.0.iter().all(|row| !before.0.contains(row)),
            "the changed provider keeps old rows: {:?} then {:?}", before.0, after.0
        );

        // Reordered, renamed, removed and added providers.
        catalog.providers.swap(0, 5);
        catalog.providers[2].name = "Renamed".to_owned();
        catalog.providers.pop();
        let mut added = catalog.providers[0].clone();
        added.id = "added-provider".parse().unwrap();
        catalog.providers.insert(1, added);
        assert_eq!(catalog.providers[5].id.as_str(), untouched, "moved from 4 to 5");
        app.store.import_catalog(&catalog, true).await.unwrap();
        assert_eq!(app.store.load_catalog().await.unwrap().1, catalog);
        assert_eq!(rows(untouched).await, before.1, "a provider that only moved was rewritten");

        // Only the order of the providers: a change of its own, read back as imported.
        catalog.providers.swap(0, 1);
        let imported = app.store.import_catalog(&catalog, true).await.unwrap();
        assert!(imported.changes.providers_reordered, "{}", imported.changes);
        assert_eq!(app.store.load_catalog().await.unwrap().1, catalog);

        // Everything different at once, then back to the built-in catalog.
        let other = scaled_catalog(2);
        app.store.import_catalog(&other, true).await.unwrap();
        assert_eq!(app.store.load_catalog().await.unwrap().1, other);
        let builtin = appzone_server::model::catalog_file::CatalogFile::builtin();
        app.store.import_catalog(&builtin, true).await.unwrap();
        assert_eq!(app.store.load_catalog().await.unwrap().1, builtin);
    }
}

#[tokio::test]
async fn sqlite_file_never_contains_a_key_secret() {
    let app = TestApp::sqlite().await;
    let resp = app
        .delete(
            &TestApp::profile_path(app.profile.as_str()),
            Some(&app.admin_key),
        )
        .await;
    assert_eq!(resp.status, 204);
    let path = app
        .store
        .pool()
        .connect_options()
        .database_url
        .path()
        .to_owned();
    for file in [path.clone(), format!("{path}-wal")] {
        let bytes = std::fs::read(&file).unwrap_or_default();
        for key in [&app.admin_key, &app.member_key] {
            let secret = &key.as_bytes()[17..];
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret),
                "{file} holds a key secret"
            );
        }
    }
}

#[tokio::test]
async fn sqlite_runs_in_wal_with_synchronous_full_and_foreign_keys() {
    let app = TestApp::sqlite().await;
    let mut conn = app.store.pool().acquire().await.unwrap();
    let mode: (String,) = sqlx::query_as("PRAGMA journal_mode")
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    assert_eq!(mode.0, "wal");
    let sync: (i64,) = sqlx::query_as("PRAGMA synchronous")
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    assert_eq!(sync.0, 2, "FULL");
    let fk: (i64,) = sqlx::query_as("PRAGMA foreign_keys")
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    assert_eq!(fk.0, 1);
}

postgres_only! {
    /// A PostgreSQL session that would acknowledge commits before they are durable is refused.
    async fn postgres_with_synchronous_commit_off_is_refused() {
        let (url, schema) = appzone_test_support::postgres_schema().await;
        let unsafe_url = format!(
            "{}%20-c%20synchronous_commit%3Doff",
            appzone_test_support::scoped_url(&url, &schema)
        );
        let store = appzone_server::storage::Store::connect(&unsafe_url, &Default::default())
            .await
            .unwrap();
        let err = appzone_server::prepare(&store)
            .await
            .expect_err("unsafe durability must be refused");
        assert!(err.to_string().contains("synchronous_commit=off"), "{err}");
        store.close().await;
        let mut admin = appzone_test_support::connect_admin(&url).await.unwrap();
        let _ = sqlx::Executor::execute(
            &mut admin,
            sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")),
        )
        .await;
    }
}

/// The built-in catalog `times` over: provider `aws` becomes `aws`, `aws-1`, `aws-2`, ...
fn scaled_catalog(times: usize) -> appzone_server::model::catalog_file::CatalogFile {
    let builtin = appzone_server::model::catalog_file::CatalogFile::builtin();
    let mut providers = Vec::new();
    for copy in 0..times {
        for provider in &builtin.providers {
            let mut provider = provider.clone();
            if copy > 0 {
                provider.id = format!("{}-{copy}", provider.id).parse().unwrap();
            }
            providers.push(provider);
        }
    }
    appzone_server::model::catalog_file::CatalogFile {
        source: builtin.source.clone(),
        providers,
    }
}

/// What start-up (the snapshot the server builds) and `catalog export` do with the catalog,
/// at the built-in size and at 10 times it, counted as the allocations they make rather than
/// timed: a loaded machine changes how long they take (a warm CI run once saw 22.8 times for
/// 10 times the catalog), never how much they allocate. Past what an empty catalog costs,
/// linear work allocates 10 times as much for 10 times the catalog; a step that reads every
/// provider row again for each region (the shape of the quadratic assembly this replaced)
/// takes it past 10.5.
#[test]
fn catalog_load_and_export_grow_linearly_with_the_catalog() {
    // One thread runs the load, the assembly, the snapshot and the export, so the counter,
    // which counts per thread, sees all of their Rust work (SQLite's own is C, not counted).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut seen = Vec::new();
    let mut counts = Vec::new();
    for scale in [0, 1, 10] {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("catalog.db").display());
        let catalog = scaled_catalog(scale);
        let store = runtime.block_on(async {
            let store = appzone_server::storage::Store::connect(&url, &Default::default())
                .await
                .unwrap();
            store.migrate().await.unwrap();
            store.replace_catalog(&catalog).await.unwrap();
            store
        });
        let zones: usize = catalog
            .providers
            .iter()
            .flat_map(|p| &p.regions)
            .map(|r| r.zones.len())
            .sum();
        let start_up = || {
            runtime.block_on(async {
                appzone_server::catalog::Catalog::load(&store)
                    .await
                    .unwrap();
            });
        };
        let export = || {
            runtime.block_on(async {
                let (_, file) = store.load_catalog().await.unwrap();
                assert_eq!(file.providers.len(), catalog.providers.len());
                file.to_json();
            });
        };
        // Each once unmeasured: the pool's connection and its prepared statements are made
        // once per process, not per catalog entry.
        start_up();
        export();
        let start_up = allocation_counter::measure(start_up).count_total;
        let export = allocation_counter::measure(export).count_total;
        seen.push(format!(
            "{scale}x ({zones} zones): start-up {start_up} allocations, export {export}"
        ));
        counts.push((start_up, export));
        runtime.block_on(store.close());
    }
    eprintln!("catalog scaling: {}", seen.join("; "));
    let growth = |empty: u64, once: u64, ten: u64| (ten - empty) as f64 / (once - empty) as f64;
    for (what, growth) in [
        ("start-up", growth(counts[0].0, counts[1].0, counts[2].0)),
        ("export", growth(counts[0].1, counts[1].1, counts[2].1)),
    ] {
        // 10 for linear work, and a little more from the collections' doubling growth (10.00
        // for start-up, 10.07 for export); reading the provider rows again for each region
        // gave 10.98 and 12.86. The counts vary by a few in 10,000 between runs.
        assert!(
            growth < 10.5,
            "{what} grew {growth:.2} times for 10 times the catalog: {seen:?}"
        );
    }
}

/// A replica's reload is background work: it pauses after every `REGIONS_PER_PAUSE` regions
/// it reads, so its CPU is spread out instead of taken from the listings at once, and it reads
/// the same catalog as an unpaced read.
#[tokio::test]
async fn a_paced_catalog_read_pauses_between_chunks_and_reads_the_same_catalog() {
    use appzone_server::storage::REGIONS_PER_PAUSE;
    use std::time::{Duration, Instant};

    let app = TestApp::sqlite().await;
    let catalog = scaled_catalog(10);
    app.store.replace_catalog(&catalog).await.unwrap();
    let regions: usize = catalog.providers.iter().map(|p| p.regions.len()).sum();
    let pauses = u32::try_from(regions / REGIONS_PER_PAUSE).unwrap();
    assert!(pauses >= 3, "{regions} regions");

    // Pauses that add up to 3 s: far longer than the whole read takes even on a loaded
    // machine (0.6 s at most seen with five builds on the same two cores), so the unpaced read
    // is compared with the pauses alone, not with another timed read (which a change of load
    // between the two reads could make slower).
    let total_pause = Duration::from_secs(3);
    let pause = total_pause / pauses;
    let started = Instant::now();
    let (_, paced) = app.store.load_catalog_paced(pause).await.unwrap();
    let took = started.elapsed();
    assert_eq!(paced, catalog);
    assert!(
        took >= pause * pauses,
        "{pauses} pauses of {pause:?} took {took:?}"
    );

    let started = Instant::now();
    let (_, unpaced) = app.store.load_catalog().await.unwrap();
    let unpaced_took = started.elapsed();
    assert_eq!(unpaced, catalog);
    assert!(
        unpaced_took < pause * pauses,
        "an operator's read pauses: it took {unpaced_took:?}, as long as {pauses} pauses of {pause:?}"
    );
}
