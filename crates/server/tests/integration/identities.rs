//! Zone identities (`GET .../zone-identities`) and zone mappings (`/api/v1/zone-mappings`):
//! one test per promise, on both backends.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use appzone_test_support::{both_backends, eventually, fast_config, Resp, TestApp};

/// The 8 AWS regions whose zone names are mapped per account.
const LEGACY: [&str; 8] = [
    "us-east-1",
    "us-west-1",
    "us-west-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-northeast-1",
    "eu-west-1",
    "sa-east-1",
];

/// Real-shaped cloud output (the shapes of the AWS and Azure CLIs; the pairs are constructed).
const DESCRIBE_US_EAST_1: &str = include_str!("fixtures/describe-us-east-1.json");

const LIST_LOCATIONS: &str = include_str!("fixtures/list-locations-sample.json");

fn identities_path(provider: &str, region: &str) -> String {
    format!("/api/v1/providers/{provider}/regions/{region}/zone-identities")
}

fn mapping_path(id: &str) -> String {
    format!("/api/v1/zone-mappings/{id}")
}

/// The `data` of a 200 identity listing, checked for the envelope's six fields.
#[track_caller]
fn identities(resp: &Resp) -> Vec<Value> {
    assert_eq!(resp.status, 200, "{}", resp.body);
    assert_eq!(resp.header("content-type"), Some("application/json"));
    let body = resp.json();
    let mut fields: Vec<&String> = body.as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(
        fields,
        ["data", "id", "mapping", "mappings", "message", "source", "status"]
    );
    assert_eq!(body["id"], resp.header("x-request-id").unwrap());
    assert_eq!(body["source"]["compiled_on"], "2026-11-28");
    body["data"].as_array().unwrap().clone()
}

async fn put(app: &TestApp, id: &str, key: &str, body: impl Into<reqwest::Body>) -> Resp {
    let resp = app
        .http
        .put(app.url(&mapping_path(id)))
        .header("X-API-KEY", key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    Resp::read(resp).await
}

fn aws_body(output: Value) -> String {
    json!({"provider": "aws", "label": "production", "output": output}).to_string()
}

fn describe() -> Value {
    serde_json::from_str(DESCRIBE_US_EAST_1).unwrap()
}

/// The stored mappings of the app's organization, by the database.
async fn stored(app: &TestApp) -> Vec<(String, String, i64)> {
    app.store
        .zone_mappings("acme")
        .await
        .unwrap()
        .into_iter()
        .map(|s| {
            (
                s.mapping.id.clone(),
                serde_json::to_string(&s.mapping).unwrap(),
                s.version,
            )
        })
        .collect()
}

/// Every zone listing of release 1.1.0's built-in catalog, for the request id
/// `release-1.1.0`: its ETag and body. Computed from 1.1.0's `builtin.json` (commit 5322a86)
/// with 1.1.0's ETag formula (SHA-256 over provider, region and zones), not by this server.
const ZONES_1_1_0: &str = include_str!("fixtures/zones-1.1.0.json");

both_backends! {
    async fn a_replacement_gets_a_later_version_even_within_the_same_millisecond(app: TestApp) {
        // The version is what the answers' ETag covers. A stored version ahead of the clock
        // stands for a replacement within the same millisecond (or a clock that stepped back):
        // the next one must still be later, or a cache holding the old answer would get a 304.
        assert_eq!(put(&app, "versioned", &app.admin_key, aws_body(describe())).await.status, 201);
        let ahead = stored(&app).await[0].2 + 60_000;
        sqlx::query("UPDATE zone_mappings SET imported_at = $1 WHERE id = $2")
            .bind(ahead)
            .bind("versioned")
            .execute(app.store.pool())
            .await
            .unwrap();
        let replaced = json!({"provider": "aws", "label": "replaced", "output": describe()}).to_string();
        assert_eq!(put(&app, "versioned", &app.admin_key, replaced).await.status, 200);
        let (id, mapping, version) = stored(&app).await.remove(0);
        assert_eq!(id, "versioned");
        assert!(mapping.contains("replaced"), "{mapping}");
        assert!(version > ahead, "{version} after {ahead}");
    }

    async fn a_mapping_stored_again_after_its_deletion_gets_a_later_version_than_any_before(app: TestApp) {
        // Deleted and stored again within the millisecond of the deleted version (here: that
        // version 60 s ahead of the clock, as a replacement within one millisecond or a clock
        // that stepped back leaves it): the new version must still be later, or an answer
        // cached for the deleted mapping would be served, and confirmed by a 304, for the new.
        assert_eq!(put(&app, "again", &app.admin_key, aws_body(describe())).await.status, 201);
        let ahead = stored(&app).await[0].2 + 60_000;
        for table in ["UPDATE zone_mappings SET imported_at = $1 WHERE id = $2", "UPDATE zone_mapping_audit SET at = $1 WHERE mapping_id = $2"] {
            sqlx::query(table).bind(ahead).bind("again").execute(app.store.pool()).await.unwrap();
        }
        let deleted = app.send(reqwest::Method::DELETE, &mapping_path("again"), Some(&app.admin_key), &[]).await;
        assert_eq!(deleted.status, 204, "{}", deleted.body);
        let again = json!({"provider": "aws", "label": "stored again", "output": describe()}).to_string();
        assert_eq!(put(&app, "again", &app.admin_key, again).await.status, 201);
        let (id, mapping, version) = stored(&app).await.remove(0);
        assert_eq!(id, "again");
        assert!(mapping.contains("stored again"), "{mapping}");
        assert!(version > ahead, "{version} after {ahead}");
    }

    async fn zone_listings_are_byte_identical_to_release_1_1_0_where_the_zones_did_not_change(app: TestApp) {
        let expected: serde_json::Map<String, Value> = serde_json::from_str(ZONES_1_1_0).unwrap();
        assert_eq!(expected.len(), 116);
        for (at, want) in &expected {
            let (provider, region) = at.split_once('/').unwrap();
            let resp = app
                .send(reqwest::Method::GET, &TestApp::zones_path(provider, region), Some(&app.member_key), &[("x-request-id", "release-1.1.0")])
                .await;
            assert_eq!(resp.status, 200, "{at}");
            assert_eq!(resp.body, want["body"].as_str().unwrap(), "{at}: body");
            assert_eq!(resp.header("etag"), want["etag"].as_str(), "{at}: ETag");
        }
    }

    async fn legacy_aws_regions_give_zone_ids_with_null_names_and_account_scope(app: TestApp) {
        for region in LEGACY {
            let resp = app.get(&identities_path("aws", region), Some(&app.member_key)).await;
            let data = identities(&resp);
            assert!(data.len() >= 3, "{region}");
            for zone in &data {
                assert_eq!(zone["name_scope"], "account", "{region}: {zone}");
                assert_eq!(zone["zone_name"], Value::Null, "{region}: {zone}");
                assert!(zone["zone_id"].as_str().unwrap().contains("-az"), "{zone}");
                assert!(zone["note"].is_string(), "{region}: a null name says why: {zone}");
            }
            let message = resp.json()["message"].as_str().unwrap().to_owned();
            assert!(message.contains("describe-availability-zones"), "{message}");
            assert!(message.contains("?mapping="), "{message}");
        }
        // ap-northeast-1's constrained zone is marked, not hidden.
        let resp = app.get(&identities_path("aws", "ap-northeast-1"), Some(&app.member_key)).await;
        let apne1_az3 = identities(&resp).into_iter().find(|z| z["zone_id"] == "apne1-az3").unwrap();
        assert_eq!(apne1_az3["visibility"], "some_accounts");
    }

    async fn uniform_aws_regions_give_the_observed_pairs_and_null_where_none_is_known(app: TestApp) {
        let resp = app.get(&identities_path("aws", "eu-central-1"), Some(&app.member_key)).await;
        let pairs: Vec<(Value, Value)> = identities(&resp)
            .iter()
            .map(|z| {
                assert_eq!(z["name_scope"], "uniform");
                (z["zone_id"].clone(), z["zone_name"].clone())
            })
            .collect();
        assert_eq!(pairs, [
            (json!("euc1-az1"), json!("eu-central-1c")),
            (json!("euc1-az2"), json!("eu-central-1a")),
            (json!("euc1-az3"), json!("eu-central-1b")),
        ]);
        // euw2-az4 launched in 2026: no public output pairs it, so no name is served.
        let resp = app.get(&identities_path("aws", "eu-west-2"), Some(&app.member_key)).await;
        let az4 = identities(&resp).into_iter().find(|z| z["zone_id"] == "euw2-az4").unwrap();
        assert_eq!(az4["zone_name"], Value::Null);
        // Across AWS: 109 ids, 76 names known, all of them in uniform regions.
        let regions = app.get("/api/v1/providers/aws/regions", Some(&app.member_key)).await.json();
        let (mut ids, mut names) = (0, 0);
        for region in regions["data"].as_array().unwrap() {
            let path = identities_path("aws", region.as_str().unwrap());
            for zone in identities(&app.get(&path, Some(&app.member_key)).await) {
                ids += 1;
                if !zone["zone_name"].is_null() {
                    names += 1;
                    assert_eq!(zone["name_scope"], "uniform", "{zone}");
                }
            }
        }
        assert_eq!((ids, names), (109, 76));
    }

    async fn gcp_zone_ids_are_their_names_with_global_scope(app: TestApp) {
        let resp = app.get(&identities_path("gcp", "us-central1"), Some(&app.member_key)).await;
        let data = identities(&resp);
        assert_eq!(data.len(), 4);
        for zone in data {
            assert_eq!(zone["zone_id"], zone["zone_name"]);
            assert_eq!(zone["name_scope"], "global");
        }
    }

    async fn azure_zones_are_physical_ids_with_subscription_scope_and_non_zonal_regions_answer_empty(app: TestApp) {
        let resp = app.get(&identities_path("azure", "eastus"), Some(&app.member_key)).await;
        let data = identities(&resp);
        let ids: Vec<&str> = data.iter().map(|z| z["zone_id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["eastus-az1", "eastus-az2", "eastus-az3"]);
        assert!(data.iter().all(|z| z["name_scope"] == "subscription" && z["zone_name"].is_null()));
        // westus has no availability zones: listed, and both listings answer 200 with [].
        let regions = app.get("/api/v1/providers/azure/regions", Some(&app.member_key)).await.json();
        assert!(regions["data"].as_array().unwrap().contains(&json!("westus")));
        assert_eq!(regions["data"].as_array().unwrap().len(), 57);
        let zones = app.get(&TestApp::zones_path("azure", "westus"), Some(&app.member_key)).await;
        assert_eq!(zones.status, 200, "{}", zones.body);
        assert_eq!(zones.json()["data"], json!([]));
        assert_eq!(identities(&app.get(&identities_path("azure", "westus"), Some(&app.member_key)).await), Vec::<Value>::new());
    }

    async fn identity_listings_have_the_zone_listings_checks_etag_and_head(app: TestApp) {
        let path = identities_path("aws", "us-east-1");
        app.get(&path, None).await.assert_error(401, "missing_api_key");
        app.get(&identities_path("aws2", "us-east-1"), Some(&app.member_key)).await.assert_error(400, "invalid_provider");
        app.get(&identities_path("aws", "US-EAST-1"), Some(&app.member_key)).await.assert_error(400, "invalid_region");
        let message = app.get(&identities_path("aws", "us-eats-1"), Some(&app.member_key)).await.assert_error(404, "region_not_found");
        assert!(message.contains("did you mean \"us-east-1\""), "{message}");
        let etag = app.etag(&path).await;
        let resp = app.send(reqwest::Method::GET, &path, Some(&app.member_key), &[("if-none-match", &etag)]).await;
        assert_eq!(resp.status, 304);
        assert_eq!(resp.header("cache-control"), Some("private, max-age=60"));
        let head = app.send(reqwest::Method::HEAD, &path, Some(&app.member_key), &[]).await;
        assert_eq!((head.status, head.body.as_str()), (200, ""));
        assert_eq!(head.header("etag"), Some(etag.as_str()));
        // The zone listing's ETag is another one: a validator of one never matches the other.
        assert_ne!(app.etag(&TestApp::zones_path("aws", "us-east-1")).await, etag);
    }

    async fn a_real_shaped_aws_output_stored_as_a_mapping_fills_the_names(app: TestApp) {
        let resp = put(&app, "prod", &app.admin_key, aws_body(describe())).await;
        assert_eq!(resp.status, 201, "{}", resp.body);
        assert_eq!(resp.json()["data"]["regions"][0]["zones"].as_array().unwrap().len(), 6);
        let path = format!("{}?mapping=prod", identities_path("aws", "us-east-1"));
        let resp = app.get(&path, Some(&app.member_key)).await;
        let named: Vec<(String, String)> = identities(&resp)
            .iter()
            .map(|z| (z["zone_id"].as_str().unwrap().to_owned(), z["zone_name"].as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(named[0], ("use1-az1".to_owned(), "us-east-1d".to_owned()));
        assert_eq!(named[1], ("use1-az2".to_owned(), "us-east-1a".to_owned()));
        let body = resp.json();
        assert_eq!(body["mapping"]["id"], "prod");
        assert_eq!(body["mapping"]["label"], "production");
        assert!(body["message"].as_str().unwrap().contains("6 names from zone mapping prod"));
        // The mapping is part of the validator.
        assert_ne!(resp.header("etag"), Some(app.etag(&identities_path("aws", "us-east-1")).await.as_str()));
        // Stored again: 200, replaced.
        let again = put(&app, "prod", &app.admin_key, aws_body(describe())).await;
        assert_eq!(again.status, 200, "{}", again.body);
        // A mapping of aws is refused for an azure listing.
        app.get(&format!("{}?mapping=prod", identities_path("azure", "eastus")), Some(&app.member_key))
            .await
            .assert_error(422, "invalid_zone_mapping");
    }

    async fn a_real_shaped_azure_output_stored_as_a_mapping_gives_logical_zones(app: TestApp) {
        let output: Value = serde_json::from_str(LIST_LOCATIONS).unwrap();
        let body = json!({"provider": "azure", "output": output}).to_string();
        let resp = put(&app, "sub-1", &app.admin_key, body).await;
        assert_eq!(resp.status, 201, "{}", resp.body);
        let path = format!("{}?mapping=sub-1", identities_path("azure", "eastus"));
        let named: Vec<(Value, Value)> = identities(&app.get(&path, Some(&app.member_key)).await)
            .iter()
            .map(|z| (z["zone_id"].clone(), z["zone_name"].clone()))
            .collect();
        assert_eq!(named, [
            (json!("eastus-az1"), json!("2")),
            (json!("eastus-az2"), json!("3")),
            (json!("eastus-az3"), json!("1")),
        ]);
    }

    async fn every_refused_mapping_answers_its_code_and_leaves_stored_mappings_unchanged(app: TestApp) {
        assert_eq!(put(&app, "prod", &app.admin_key, aws_body(describe())).await.status, 201);
        let before = stored(&app).await;
        let zone = |region: &str, name: &str, id: &str| json!({"RegionName": region, "ZoneName": name, "ZoneId": id, "ZoneType": "availability-zone"});
        let one = |zones: Vec<Value>| aws_body(json!({"AvailabilityZones": zones}));
        let labelled = |label: &str| json!({"provider": "aws", "label": label, "output": describe()}).to_string();
        let cases: Vec<(&str, String, u16, &str, &str)> = vec![
            ("bad JSON", "{\"provider\": \"aws\", ".into(), 400, "invalid_body", "invalid body"),
            ("not the CLI's shape", aws_body(json!({"Zones": []})), 400, "invalid_body", "AvailabilityZones"),
            ("only unknown ids", one(vec![zone("us-east-1", "us-east-1a", "use1-az9")]), 422, "invalid_zone_mapping", "every zone of the output was skipped (us-east-1: use1-az9: the catalog holds no zone use1-az9 in aws/us-east-1)"),
            ("a sourced pair contradicted", one(vec![zone("eu-central-1", "eu-central-1b", "euc1-az2"), zone("eu-central-1", "eu-central-1a", "euc1-az3")]), 422, "invalid_zone_mapping", "the output names euc1-az2 \"eu-central-1b\", but its name is \"eu-central-1a\" for every account"),
            ("a malformed account", json!({"provider": "aws", "account": "prod", "output": describe()}).to_string(), 400, "invalid_body", "account \"prod\" is neither an AWS account id"),
            ("foreign name", one(vec![zone("us-east-1", "eu-west-1a", "use1-az1")]), 422, "invalid_zone_mapping", "\"eu-west-1a\" of use1-az1 is outside its region"),
            ("an id twice", one(vec![zone("us-east-1", "us-east-1a", "use1-az1"), zone("us-east-1", "us-east-1b", "use1-az1")]), 422, "invalid_zone_mapping", "\"use1-az1\" appears twice"),
            ("a name twice", one(vec![zone("us-east-1", "us-east-1a", "use1-az1"), zone("us-east-1", "us-east-1a", "use1-az2")]), 422, "invalid_zone_mapping", "given to two zone ids"),
            ("only an unknown region", one(vec![zone("us-gov-west-1", "us-gov-west-1a", "usgw1-az1")]), 422, "invalid_zone_mapping", "the catalog has no region us-gov-west-1 of aws"),
            ("an empty label", labelled(""), 400, "invalid_body", "label must be"),
            ("a label of white space", labelled(" \u{a0}\t\u{3000}"), 400, "invalid_body", "label must be"),
            ("a label with a control character", labelled("two\nlines"), 400, "invalid_body", "label must be"),
            ("a label of 201 characters", labelled(&"é".repeat(201)), 400, "invalid_body", "label must be"),
            ("too large", format!("{{\"provider\":\"aws\",\"label\":\"{}\"}}", "x".repeat(appzone_contract::MAX_ZONE_MAPPING_BYTES)), 413, "payload_too_large", "limit of 33554432 bytes"),
        ];
        for (what, body, status, code, says) in cases {
            for id in ["prod", "new-one"] {
                let resp = put(&app, id, &app.admin_key, body.clone()).await;
                let message = resp.assert_error(status, code);
                assert!(message.contains(says), "{what}: {message}");
            }
        }
        // A member key, and another organization's admin (who cannot see acme's "prod").
        put(&app, "prod", &app.member_key, aws_body(describe())).await.assert_error(403, "forbidden");
        app.get(&mapping_path("prod"), Some(&app.other_admin_key)).await.assert_error(404, "zone_mapping_not_found");
        app.delete(&mapping_path("prod"), Some(&app.other_admin_key)).await.assert_error(404, "zone_mapping_not_found");
        let path = format!("{}?mapping=prod", identities_path("aws", "us-east-1"));
        app.get(&path, Some(&app.other_admin_key)).await.assert_error(404, "zone_mapping_not_found");
        assert_eq!(stored(&app).await, before, "a refusal changed the stored mappings");
        // The other organization's own "prod" is its own: acme's stays as it was.
        assert_eq!(put(&app, "prod", &app.other_admin_key, aws_body(describe())).await.status, 201);
        assert_eq!(stored(&app).await, before);
    }

    async fn mappings_are_listed_read_and_deleted_by_the_organization_with_an_audit_record(app: TestApp) {
        assert_eq!(put(&app, "prod", &app.admin_key, aws_body(describe())).await.status, 201);
        let list = app.get("/api/v1/zone-mappings", Some(&app.member_key)).await;
        assert_eq!(list.status, 200, "{}", list.body);
        assert_eq!(list.json()["data"][0]["regions"], json!(["us-east-1"]));
        assert_eq!(list.json()["message"], "1 zone mapping");
        let one = app.get(&mapping_path("prod"), Some(&app.member_key)).await;
        assert_eq!(one.status, 200);
        assert_eq!(one.json()["data"]["provider"], "aws");
        app.get("/api/v1/zone-mappings", Some(&app.other_admin_key)).await;
        assert_eq!(app.get("/api/v1/zone-mappings", Some(&app.other_admin_key)).await.json()["data"], json!([]));
        app.delete(&mapping_path("prod"), Some(&app.member_key)).await.assert_error(403, "forbidden");
        let deleted = app.send(reqwest::Method::DELETE, &mapping_path("prod"), Some(&app.admin_key), &[("x-request-id", "drop-prod-1")]).await;
        assert_eq!((deleted.status, deleted.body.as_str()), (204, ""));
        app.delete(&mapping_path("prod"), Some(&app.admin_key)).await.assert_error(404, "zone_mapping_not_found");
        app.get(&format!("{}?mapping=prod", identities_path("aws", "us-east-1")), Some(&app.member_key))
            .await
            .assert_error(404, "zone_mapping_not_found");
        let audit = app.store.zone_mapping_audit("acme", "prod").await.unwrap();
        let actions: Vec<&str> = audit.iter().map(|(a, _, _)| a.as_str()).collect();
        assert_eq!(actions, ["create", "delete"]);
        assert_eq!(audit[1].2, "drop-prod-1");
        assert!(app.admin_key.contains(&audit[1].1), "the audit names the admin key's id");
    }

    async fn zone_mapping_writes_ignore_an_idempotency_key_they_do_not_take(app: TestApp) {
        // Malformed by the profile delete's rule (over 255 characters): that operation would
        // answer 400 `invalid_idempotency_key`; these do not read the header at all.
        let malformed = "k".repeat(256);
        let header = [("idempotency-key", malformed.as_str())];
        let body = aws_body(describe());
        let resp = app
            .http
            .put(app.url(&mapping_path("prod")))
            .header("X-API-KEY", &app.admin_key)
            .header("content-type", "application/json")
            .header("idempotency-key", &malformed)
            .body(body)
            .send()
            .await
            .unwrap();
        let stored = Resp::read(resp).await;
        assert_eq!(stored.status, 201, "{}", stored.body);
        let deleted = app.send(reqwest::Method::DELETE, &mapping_path("prod"), Some(&app.admin_key), &header).await;
        assert_eq!((deleted.status, deleted.body.as_str()), (204, ""));
    }

    /// A mapping stored, replaced or deleted through one replica is what every other replica applies
    /// within a second, although each caches what it read.
    async fn mapping_changes_reach_another_replica_within_a_second(app: TestApp) {
        let replica = app.replica(fast_config()).await;
        let path = format!(
            "{}{}?mapping=prod",
            replica.base,
            identities_path("aws", "us-east-1")
        );
        let on_replica = || async {
            let resp = app
                .http
                .get(&path)
                .header("X-API-KEY", &app.member_key)
                .send()
                .await
                .unwrap();
            Resp::read(resp).await
        };
        // The replica caches the mapping's absence first.
        assert_eq!(on_replica().await.status, 404);
        let within = |what: &'static str, want: fn(&Resp) -> bool| {
            let on_replica = &on_replica;
            async move {
                let started = Instant::now();
                assert!(
                    eventually(Duration::from_secs(1), || async {
                        want(&on_replica().await)
                    })
                    .await,
                    "{what} did not reach the replica within a second"
                );
                started.elapsed()
            }
        };
        assert_eq!(
            put(&app, "prod", &app.admin_key, aws_body(describe()))
                .await
                .status,
            201
        );
        within("a new mapping", |r| {
            r.status == 200 && r.json()["data"][0]["zone_name"] == "us-east-1d"
        })
        .await;
        let mut changed = describe();
        changed["AvailabilityZones"][0]["ZoneId"] = json!("use1-az1");
        changed["AvailabilityZones"][3]["ZoneId"] = json!("use1-az2");
        assert_eq!(
            put(&app, "prod", &app.admin_key, aws_body(changed))
                .await
                .status,
            200
        );
        within("a replaced mapping", |r| {
            r.status == 200 && r.json()["data"][0]["zone_name"] == "us-east-1a"
        })
        .await;
        assert_eq!(
            app.delete(&mapping_path("prod"), Some(&app.admin_key))
                .await
                .status,
            204
        );
        within("a deletion", |r| r.status == 404).await;
    }

    /// Concurrent first stores of one new mapping id: one creates it (201), the others replace it
    /// (200); none fails, and one mapping is stored.
    async fn concurrent_stores_of_a_new_mapping_create_it_once(app: TestApp) {
        let body = aws_body(describe());
        let stores = (0..8).map(|_| put(&app, "race", &app.admin_key, body.clone()));
        let mut statuses: Vec<u16> = futures_util::future::join_all(stores)
            .await
            .iter()
            .map(|r| r.status)
            .collect();
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 200, 201]);
        let audit = app.store.zone_mapping_audit("acme", "race").await.unwrap();
        assert_eq!(audit.iter().filter(|(a, _, _)| a == "create").count(), 1);
        assert_eq!(audit.len(), 8);
    }
}
