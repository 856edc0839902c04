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
    assert_eq!(parsed["source"]["compiled_on"], "2026-11-27");
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
    assert!(stderr.contains("aws/us-east-1: no change"), "{stderr}");
    let exported: serde_json::Value =
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    let region = |id: &str| {
        exported["providers"][0]["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()
            .clone()
    };
    let az4 = region("eu-west-2")["identities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["zone_id"] == "euw2-az4")
        .unwrap()
        .clone();
    assert_eq!(az4["zone_name"], "eu-west-2d");
    assert!(region("us-east-1")["identities"]
        .as_array()
        .unwrap()
        .iter()
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
    assert!(stderr.contains("azure/eastus: no change"), "{stderr}");
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
