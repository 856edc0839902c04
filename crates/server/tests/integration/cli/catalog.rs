//! `catalog export` and `catalog import`.

use super::*;

/// A catalog import that renames a zone is refused without --prune, with the truth about
/// zones: the region's listing still answers 200, without the zone.
#[test]
fn catalog_import_refusing_a_zone_rename_says_the_zone_is_no_longer_listed() {
    let cli = Cli::new();
    let mut catalog: serde_json::Value =
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    catalog["providers"][0]["regions"][0]["zones"][0] = "renamed-zone-1x".into();
    let file = cli.dir.path().join("renamed.json");
    std::fs::write(&file, catalog.to_string()).unwrap();
    let err = cli.fails(&["catalog", "import", file.to_str().unwrap()]);
    assert!(
        err.contains("remove 0 providers, 0 regions, 1 zone (a removed zone is no longer listed in its region)"),
        "{err}"
    );
    assert!(!err.contains("stop answering"), "{err}");
}

/// `catalog import` never removes providers, regions or zones unless told to with `--prune`,
/// and says on stderr what it added, changed and removed.
#[test]
fn catalog_import_removes_only_with_prune_and_prints_a_summary() {
    let cli = Cli::new();
    let builtin = cli.ok(&["catalog", "export"]);
    let empty = cli.dir.path().join("empty.json");
    std::fs::write(&empty, r#"{"providers":[]}"#).unwrap();
    let empty = empty.to_str().unwrap();
    let err = cli.fails(&["catalog", "import", empty]);
    assert!(
        err.contains("--prune") && err.contains("remove 3 providers"),
        "{err}"
    );
    assert_eq!(cli.ok(&["catalog", "export"]), builtin, "nothing changed");

    let mut catalog: serde_json::Value = serde_json::from_str(&builtin).unwrap();
    let file = cli.dir.path().join("catalog.json");
    let import = |catalog: &serde_json::Value, extra: &[&str]| {
        std::fs::write(&file, catalog.to_string()).unwrap();
        let mut args = vec!["catalog", "import", file.to_str().unwrap()];
        args.extend(extra);
        let out = cli.run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty());
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(
        import(&catalog, &[]),
        "catalog import: no change (catalog version 2)\n"
    );
    catalog["providers"][0]["regions"][0]["zones"]
        .as_array_mut()
        .unwrap()
        .push("new-zone-1x".into());
    catalog["providers"][1]["name"] = "Renamed".into();
    assert_eq!(
        import(&catalog, &[]),
        "catalog import: added 0 providers, 0 regions, 1 zone; changed 1 provider, 0 regions, \
         0 zones; removed 0 providers, 0 regions, 0 zones (catalog version 3)\n"
    );
    catalog["providers"].as_array_mut().unwrap().truncate(2);
    let summary = import(&catalog, &["--prune"]);
    assert!(summary.contains("removed 1 provider,"), "{summary}");
}

#[test]
fn catalog_export_import_round_trip_and_bad_import_keeps_the_old_catalog() {
    let cli = Cli::new();
    let builtin = cli.ok(&["catalog", "export"]);
    let parsed: serde_json::Value = serde_json::from_str(&builtin).unwrap();
    assert_eq!(parsed["providers"][0]["id"], "aws");

    let bad = cli.dir.path().join("bad.json");
    for text in [
        "{not json",
        r#"{"providers":[{"id":"AWS","name":"x","regions":[]}]}"#,
        r#"{"providers":[{"id":"a","name":"x","regions":[{"id":"r","name":"R","zones":["z","z"]}]}]}"#,
    ] {
        std::fs::write(&bad, text).unwrap();
        cli.fails(&["catalog", "import", bad.to_str().unwrap()]);
        assert_eq!(cli.ok(&["catalog", "export"]), builtin, "old catalog kept");
    }
    cli.fails(&["catalog", "import", "/no/such/file.json"]);

    let small = r#"{"providers":[{"id":"tiny","name":"Tiny","regions":[{"id":"r1","name":"R1","zones":["r1-b","r1-a"]}]}]}"#;
    let good = cli.dir.path().join("good.json");
    std::fs::write(&good, small).unwrap();
    assert_eq!(
        cli.ok(&["catalog", "import", "--prune", good.to_str().unwrap()]),
        ""
    );
    let exported: serde_json::Value =
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    assert_eq!(
        exported,
        serde_json::from_str::<serde_json::Value>(small).unwrap(),
        "order kept"
    );
}

/// `catalog export` then `catalog import` changes nothing, identities and source included,
/// and a 1.1 catalog file (no identities, no source) still imports and exports as it was.
#[test]
fn catalog_export_import_is_a_no_op_with_identities_and_a_1_1_file_still_imports() {
    let cli = Cli::new();
    let builtin = cli.ok(&["catalog", "export"]);
    let parsed: serde_json::Value = serde_json::from_str(&builtin).unwrap();
    assert_eq!(parsed["source"]["compiled_on"], "2026-11-28");
    assert_eq!(
        parsed["providers"][0]["regions"][0]["name_scope"],
        "uniform"
    );
    let file = cli.dir.path().join("catalog.json");
    std::fs::write(&file, &builtin).unwrap();
    let stderr = cli.quiet(&["catalog", "import", file.to_str().unwrap()]);
    assert!(stderr.contains("no change"), "{stderr}");
    assert_eq!(cli.ok(&["catalog", "export"]), builtin);

    // The 1.1 form: the same providers, regions and zones, nothing else.
    let mut old = parsed.clone();
    old.as_object_mut().unwrap().remove("source");
    for provider in old["providers"].as_array_mut().unwrap() {
        for region in provider["regions"].as_array_mut().unwrap() {
            let region = region.as_object_mut().unwrap();
            for field in ["name_scope", "identities", "sources", "note"] {
                region.remove(field);
            }
        }
    }
    std::fs::write(&file, old.to_string()).unwrap();
    cli.quiet(&["catalog", "import", file.to_str().unwrap()]);
    let exported: serde_json::Value =
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    assert_eq!(exported, old);
}

/// `catalog import --from` refreshes the regions a cloud's output shows: it adds ids and names
/// (names only where the region's names are uniform), removes nothing, prints each change, and
/// refuses, changing nothing, an output that names a uniform region's zone otherwise.
#[test]
fn catalog_import_from_cloud_output_adds_what_it_shows_and_never_one_accounts_letters() {
    let cli = Cli::new();
    let zone = |region: &str, name: &str, id: &str| {
        serde_json::json!({"RegionName": region, "ZoneName": name, "ZoneId": id,
                           "ZoneType": "availability-zone", "State": "available"})
    };
    let london = cli.dir.path().join("eu-west-2.json");
    let zones = ["a", "b", "c", "d"]
        .iter()
        .zip(["euw2-az2", "euw2-az3", "euw2-az1", "euw2-az4"])
        .map(|(letter, id)| zone("eu-west-2", &format!("eu-west-2{letter}"), id))
        .collect::<Vec<_>>();
    std::fs::write(
        &london,
        serde_json::json!({"AvailabilityZones": zones}).to_string(),
    )
    .unwrap();
    let virginia = cli.dir.path().join("us-east-1.json");
    std::fs::write(
        &virginia,
        include_str!("../fixtures/describe-us-east-1.json"),
    )
    .unwrap();
    let stderr = cli.quiet(&[
        "catalog",
        "import",
        "--from",
        "aws-describe",
        london.to_str().unwrap(),
        virginia.to_str().unwrap(),
    ]);
    assert!(
        stderr.contains("aws/eu-west-2: euw2-az4 is named eu-west-2d"),
        "{stderr}"
    );
    // A region the output shows is refreshed, changed or not.
    assert!(stderr.contains("aws/us-east-1: refreshed on "), "{stderr}");
    let exported: serde_json::Value =
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    let region = |id: &str| aws_region(&exported, id);
    let az4 = region("eu-west-2")["identities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["zone_id"] == "euw2-az4")
        .unwrap()
        .clone();
    assert_eq!(az4["zone_name"], "eu-west-2d");
    // Its availability zones' names are per account: the output's letters are not taken.
    assert!(region("us-east-1")["identities"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["zone_type"] == "availability-zone")
        .all(|i| i["zone_name"].is_null()));

    let before = cli.ok(&["catalog", "export"]);
    let wrong = cli.dir.path().join("wrong.json");
    let renamed = serde_json::json!({"AvailabilityZones": [zone("eu-central-1", "eu-central-1b", "euc1-az2")]});
    std::fs::write(&wrong, renamed.to_string()).unwrap();
    let err = cli.fails(&[
        "catalog",
        "import",
        "--from",
        "aws-describe",
        wrong.to_str().unwrap(),
    ]);
    assert!(err.contains("one of them is wrong"), "{err}");
    assert_eq!(cli.ok(&["catalog", "export"]), before, "nothing changed");

    let locations = cli.dir.path().join("locations.json");
    std::fs::write(
        &locations,
        include_str!("../fixtures/list-locations-sample.json"),
    )
    .unwrap();
    let stderr = cli.quiet(&[
        "catalog",
        "import",
        "--from",
        "azure-locations",
        locations.to_str().unwrap(),
    ]);
    assert!(stderr.contains("azure/eastus: refreshed on "), "{stderr}");
}

/// Provenance stays true after imports: each import is a reference of its own (two on one day
/// included) naming the command and regions, never the operator's file path; a zone one
/// output adds is `unknown` visibility; a region's `refreshed_on` is its last import; an edge
/// zone's parent is learned (ids are account-independent) and the note that lacked it replaced.
#[test]
fn each_import_is_its_own_reference_without_local_paths_and_dates_the_regions_it_refreshed() {
    let cli = Cli::new();
    let zone = |region: &str, name: &str, id: &str, kind: &str| serde_json::json!({"RegionName": region, "ZoneName": name, "ZoneId": id, "ZoneType": kind});
    let mut dallas = zone(
        "us-east-1",
        "us-east-1-dfw-1a",
        "use1-dfw1-az1",
        "local-zone",
    );
    dallas["ParentZoneId"] = serde_json::json!("use1-az6");
    let first = cli.dir.path().join("secret-operator-path-first.json");
    let output = serde_json::json!({"AvailabilityZones": [
        zone("us-east-1", "us-east-1g", "use1-az7", "availability-zone"), dallas]});
    std::fs::write(&first, output.to_string()).unwrap();
    let second = cli.dir.path().join("secret-operator-path-second.json");
    let london = serde_json::json!({"AvailabilityZones": [
        zone("eu-west-2", "eu-west-2a", "euw2-az2", "availability-zone")]});
    std::fs::write(&second, london.to_string()).unwrap();
    for file in [&first, &second] {
        cli.quiet(&[
            "catalog",
            "import",
            "--from",
            "aws-describe",
            file.to_str().unwrap(),
        ]);
    }
    let exported = cli.ok(&["catalog", "export"]);
    assert!(
        !exported.contains("secret-operator-path"),
        "a local path is served"
    );
    let catalog: serde_json::Value = serde_json::from_str(&exported).unwrap();
    let imports: Vec<&serde_json::Value> = catalog["source"]["references"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"].as_str().unwrap().starts_with('I'))
        .collect();
    assert_eq!(imports.len(), 2, "{imports:?}");
    assert_ne!(imports[0]["id"], imports[1]["id"]);
    assert!(
        imports[0]["what"]
            .as_str()
            .unwrap()
            .contains("for us-east-1"),
        "{}",
        imports[0]
    );
    assert!(
        imports[1]["what"]
            .as_str()
            .unwrap()
            .contains("for eu-west-2"),
        "{}",
        imports[1]
    );
    let region = |id: &str| aws_region(&catalog, id);
    let virginia = region("us-east-1");
    assert_eq!(virginia["refreshed_on"], imports[0]["date"]);
    assert!(virginia["sources"]
        .as_array()
        .unwrap()
        .contains(&imports[0]["id"]));
    assert!(!virginia["sources"]
        .as_array()
        .unwrap()
        .contains(&imports[1]["id"]));
    let identity = |id: &str| {
        virginia["identities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["zone_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(identity("use1-az7")["visibility"], "unknown");
    let dfw = identity("use1-dfw1-az1");
    assert_eq!(dfw["parent_zone_id"], "use1-az6");
    let note = dfw["note"].as_str().unwrap();
    assert!(note.starts_with("is anchored to use1-az6 per I"), "{note}");
    assert!(
        !note.contains("No public source gives its parent"),
        "{note}"
    );
    // The zone listing still serves availability zones only.
    assert!(!virginia["zones"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("us-east-1-dfw-1a")));
}

/// A database an earlier release seeded keeps that release's built-in catalog (no identities,
/// no regions without zones); `migrate` (as `serve`) replaces it with this release's, which only
/// adds. A catalog an operator changed is left as it is.
#[test]
fn an_earlier_releases_built_in_catalog_is_upgraded_and_an_operators_is_not() {
    let cli = Cli::new();
    let builtin: serde_json::Value = serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    // The 1.1 built-in catalog: no source, no identities, no regions without zones.
    let mut old = builtin.clone();
    old.as_object_mut().unwrap().remove("source");
    for provider in old["providers"].as_array_mut().unwrap() {
        let regions = provider["regions"].as_array_mut().unwrap();
        regions.retain(|r| !r["zones"].as_array().unwrap().is_empty());
        for region in regions {
            let region = region.as_object_mut().unwrap();
            for field in ["name_scope", "identities", "sources", "note"] {
                region.remove(field);
            }
        }
    }
    let file = cli.dir.path().join("old.json");
    std::fs::write(&file, old.to_string()).unwrap();
    cli.quiet(&["catalog", "import", "--prune", file.to_str().unwrap()]);
    let exported = |cli: &Cli| -> serde_json::Value {
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap()
    };
    assert_eq!(exported(&cli), old);
    cli.ok(&["migrate"]);
    assert_eq!(
        exported(&cli),
        builtin,
        "upgraded to this release's built-in catalog"
    );

    // An operator's catalog (one zone fewer) stays as imported.
    let mut curated = old.clone();
    curated["providers"][0]["regions"][0]["zones"]
        .as_array_mut()
        .unwrap()
        .pop();
    std::fs::write(&file, curated.to_string()).unwrap();
    cli.quiet(&["catalog", "import", "--prune", file.to_str().unwrap()]);
    cli.ok(&["migrate"]);
    assert_eq!(exported(&cli), curated);
}

/// Region `id` of the first provider (aws) of an exported catalog.
fn aws_region(catalog: &serde_json::Value, id: &str) -> serde_json::Value {
    catalog["providers"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap()
        .clone()
}
