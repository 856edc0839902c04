//! The zone-identity listing's query: filters (`zone_type`, `zone_id`, `zone_name`), several
//! zone mappings side by side (`mapping` repeated), and the 400 `invalid_query` for anything
//! else; one test per promise, on both backends.

use serde_json::{json, Value};

use appzone_test_support::{both_backends, Resp, TestApp};

const DESCRIBE_US_EAST_1: &str = include_str!("fixtures/describe-us-east-1.json");

fn identities_path(provider: &str, region: &str, query: &str) -> String {
    format!("/api/v1/providers/{provider}/regions/{region}/zone-identities{query}")
}

/// The `(zone_id, zone_name)` of a 200 identity listing's items.
#[track_caller]
fn pairs(resp: &Resp) -> Vec<(String, Value)> {
    assert_eq!(resp.status, 200, "{}", resp.body);
    resp.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| {
            (
                z["zone_id"].as_str().unwrap().to_owned(),
                z["zone_name"].clone(),
            )
        })
        .collect()
}

fn ids(resp: &Resp) -> Vec<String> {
    pairs(resp).into_iter().map(|(id, _)| id).collect()
}

/// Stores zone mapping `id` of us-east-1 from the real-shaped AWS output, with each zone's
/// name replaced by `rename` (an account whose names are shuffled otherwise).
async fn put_mapping(app: &TestApp, id: &str, rename: impl Fn(&str) -> String) {
    put_mapping_as(app, &app.admin_key, id, rename).await;
}

/// [`put_mapping`] with the admin key `key` (of another organization, say).
async fn put_mapping_as(app: &TestApp, key: &str, id: &str, rename: impl Fn(&str) -> String) {
    let mut output: Value = serde_json::from_str(DESCRIBE_US_EAST_1).unwrap();
    for zone in output["AvailabilityZones"].as_array_mut().unwrap() {
        let name = rename(zone["ZoneName"].as_str().unwrap());
        zone["ZoneName"] = json!(name);
    }
    let body = json!({"provider": "aws", "label": id, "output": output}).to_string();
    let resp = app
        .http
        .put(app.url(&format!("/api/v1/zone-mappings/{id}")))
        .header("X-API-KEY", key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let resp = Resp::read(resp).await;
    assert_eq!(resp.status, 201, "{}", resp.body);
}

/// Account b's names: a → c, b → d, ..., e → a, f → b (every zone named otherwise than in the
/// fixture).
fn shifted(name: &str) -> String {
    let (region, letter) = name.split_at(name.len() - 1);
    let next = (b'a' + (letter.as_bytes()[0] - b'a' + 2) % 6) as char;
    format!("{region}{next}")
}

both_backends! {
    async fn zone_id_and_zone_name_filters_keep_the_zones_named_exactly_in_catalog_order(app: TestApp) {
        let key = Some(app.member_key.as_str());
        let resp = app.get(&identities_path("aws", "us-east-1", "?zone_id=use1-az3,use1-az1"), key).await;
        assert_eq!(ids(&resp), ["use1-az1", "use1-az3"]);
        let resp = app.get(&identities_path("aws", "eu-central-1", "?zone_name=eu-central-1a"), key).await;
        assert_eq!(pairs(&resp), [("euc1-az2".to_owned(), json!("eu-central-1a"))]);
        // Exact: a prefix of a name is not the name.
        let resp = app.get(&identities_path("aws", "eu-central-1", "?zone_name=eu-central-1"), key).await;
        assert_eq!(ids(&resp), Vec::<String>::new());
        // Filters combine: both must match.
        let both = "?zone_id=euc1-az1,euc1-az2&zone_name=eu-central-1a,eu-central-1b";
        assert_eq!(ids(&app.get(&identities_path("aws", "eu-central-1", both), key).await), ["euc1-az2"]);
        assert!(
            resp.json()["message"].as_str().unwrap().contains("0 zones shown by the filters"),
            "{}",
            resp.body
        );
    }

    async fn a_filter_that_matches_nothing_answers_200_with_an_empty_list(app: TestApp) {
        let key = Some(app.member_key.as_str());
        for query in [
            "?zone_id=use1-az9",
            // A name that is null (per account, no mapping) matches no name.
            "?zone_name=us-east-1a",
            // A well-formed type that no zone has.
            "?zone_type=orbital-zone",
            // A type of another cloud.
            "?zone_type=ai-zone",
        ] {
            let resp = app.get(&identities_path("aws", "us-east-1", query), key).await;
            assert_eq!(ids(&resp), Vec::<String>::new(), "{query}");
            assert_eq!(resp.json()["data"], json!([]), "{query}");
        }
    }

    async fn zone_type_defaults_to_availability_zones_and_selects_listed_types_or_all(app: TestApp) {
        let key = Some(app.member_key.as_str());
        let of_type = |query: &str| identities_path("aws", "us-east-1", query);
        let azs = ["use1-az1", "use1-az2", "use1-az3", "use1-az4", "use1-az5", "use1-az6"];
        // Unasked, a reader meets availability zones only, though the region has edge zones.
        assert_eq!(ids(&app.get(&of_type(""), key).await), azs);
        let local = ids(&app.get(&of_type("?zone_type=local-zone"), key).await);
        let wavelength = ids(&app.get(&of_type("?zone_type=wavelength-zone"), key).await);
        assert!(local.contains(&"use1-bos1-az1".to_owned()), "{local:?}");
        assert!(wavelength.contains(&"use1-wl1-bos-wlz1".to_owned()), "{wavelength:?}");
        assert!(local.iter().chain(&wavelength).all(|id| !azs.contains(&id.as_str())));
        let mut every: Vec<String> = azs.iter().map(|s| s.to_string()).collect();
        every.extend(local.iter().cloned());
        assert_eq!(ids(&app.get(&of_type("?zone_type=availability-zone,local-zone"), key).await), every);
        every.extend(wavelength.iter().cloned());
        assert_eq!(ids(&app.get(&of_type("?zone_type=all"), key).await), every);
        let resp = app.get(&of_type("?zone_type=all"), key).await;
        assert_eq!(resp.json()["data"][6]["zone_type"], "local-zone");
    }

    async fn unknown_repeated_or_malformed_query_parameters_answer_400_invalid_query_naming_the_parameter(app: TestApp) {
        let key = Some(app.member_key.as_str());
        let eleven: String = (0..11).map(|i| format!("mapping=m{i}&")).collect();
        let cases: Vec<(&str, String, &str)> = vec![
            ("an unknown parameter", "?mapping=a&zone_name=us-east-1a&foo=1".into(), "\"foo\""),
            ("a filter given twice", "?zone_name=us-east-1a&zone_name=us-east-1b".into(), "\"zone_name\""),
            ("zone_type given twice", "?zone_type=all&zone_type=all".into(), "\"zone_type\""),
            ("a mapping asked twice", "?mapping=a&mapping=b&mapping=a".into(), "\"mapping\""),
            ("more than 10 mappings", format!("?{eleven}"), "\"mapping\""),
            ("an upper-case zone id", "?zone_id=USE1-AZ1".into(), "\"zone_id\""),
            ("an empty zone id", "?zone_id=".into(), "\"zone_id\""),
            ("a space after a comma", "?zone_name=us-east-1a,%20us-east-1b".into(), "\"zone_name\""),
            ("an empty item", "?zone_name=us-east-1a,,us-east-1b".into(), "\"zone_name\""),
            ("a malformed type", "?zone_type=Local".into(), "\"zone_type\""),
            ("all in a list", "?zone_type=all,local-zone".into(), "\"zone_type\""),
            ("a bare parameter name", "?zone_type".into(), "\"zone_type\""),
            ("a malformed mapping id", "?mapping=a%20b".into(), "\"mapping\""),
            ("an empty mapping id", "?mapping=a&mapping=".into(), "\"mapping\""),
        ];
        for (what, query, names) in cases {
            let resp = app.get(&identities_path("aws", "us-east-1", &query), key).await;
            let message = resp.assert_error(400, "invalid_query");
            assert!(message.contains(names), "{what}: {message}");
        }
        // The zone listing takes no filter and stays as it was.
        let zones = app.get(&format!("{}?zone_type=all&foo=1", TestApp::zones_path("aws", "us-east-1")), key).await;
        assert_eq!(zones.status, 200, "{}", zones.body);
    }

    async fn each_filter_set_has_its_own_etag_and_head_answers_as_get(app: TestApp) {
        let key = Some(app.member_key.as_str());
        let queries = ["", "?zone_type=all", "?zone_id=use1-az1", "?zone_id=use1-az1,use1-az2", "?zone_name=us-east-1a"];
        let mut etags = Vec::new();
        for query in queries {
            let path = identities_path("aws", "us-east-1", query);
            let etag = app.etag(&path).await;
            // The tag of this filter set gives 304; HEAD answers as GET, without a body.
            let again = app.send(reqwest::Method::GET, &path, key, &[("if-none-match", &etag)]).await;
            assert_eq!(again.status, 304, "{query}");
            let head = app.send(reqwest::Method::HEAD, &path, key, &[]).await;
            assert_eq!((head.status, head.body.as_str()), (200, ""), "{query}");
            assert_eq!(head.header("etag"), Some(etag.as_str()), "{query}");
            etags.push(etag);
        }
        for (i, etag) in etags.iter().enumerate() {
            for (j, query) in queries.iter().enumerate() {
                if i != j {
                    let path = identities_path("aws", "us-east-1", query);
                    let resp = app.send(reqwest::Method::GET, &path, key, &[("if-none-match", etag)]).await;
                    assert_eq!(resp.status, 200, "the tag of {:?} matched {query:?}", queries[i]);
                }
            }
        }
    }

    async fn which_zone_in_account_b_is_account_as_us_east_1a_is_answered_in_one_request(app: TestApp) {
        put_mapping(&app, "a", str::to_owned).await;
        put_mapping(&app, "b", shifted).await;
        let path = identities_path("aws", "us-east-1", "?mapping=a&mapping=b&zone_name=us-east-1a");
        let resp = app.get(&path, Some(&app.member_key)).await;
        // In a's output us-east-1a is use1-az2, which b's names us-east-1c.
        assert_eq!(pairs(&resp), [("use1-az2".to_owned(), json!("us-east-1a"))]);
        let body = resp.json();
        assert_eq!(
            body["data"][0]["names"],
            json!([
                // Each account's State and OptInStatus, as its output printed them.
                {"mapping": "a", "zone_name": "us-east-1a", "state": "available", "opt_in_status": "opt-in-not-required"},
                {"mapping": "b", "zone_name": "us-east-1c", "state": "available", "opt_in_status": "opt-in-not-required"}
            ])
        );
        assert_eq!(body["mapping"]["id"], "a");
        let applied: Vec<&Value> = body["mappings"].as_array().unwrap().iter().map(|m| &m["id"]).collect();
        assert_eq!(applied, [&json!("a"), &json!("b")]);
        // In the order asked: b first, so zone_name is b's and b's us-east-1a is another zone.
        let path = identities_path("aws", "us-east-1", "?mapping=b&mapping=a&zone_name=us-east-1a");
        let resp = app.get(&path, Some(&app.member_key)).await;
        let item = &resp.json()["data"][0];
        assert_eq!(item["zone_id"], "use1-az3", "{}", resp.body);
        let names: Vec<&Value> = item["names"].as_array().unwrap().iter().map(|n| &n["zone_name"]).collect();
        assert_eq!(names, [&json!("us-east-1a"), &json!("us-east-1e")]);
    }

    /// A kept answer is found by the query as spelled, then checked by its mappings' ids and
    /// versions: two organizations whose `prod` mappings share an id and a version (stored in
    /// the same millisecond) each get their own names all the same.
    async fn organizations_whose_mappings_share_an_id_and_a_version_each_get_their_own_answer(app: TestApp) {
        put_mapping_as(&app, &app.admin_key, "prod", str::to_owned).await;
        put_mapping_as(&app, &app.other_admin_key, "prod", shifted).await;
        sqlx::query("UPDATE zone_mappings SET imported_at = $1 WHERE id = $2")
            .bind(1_767_225_600_000_i64)
            .bind("prod")
            .execute(app.store.pool())
            .await
            .unwrap();
        let path = identities_path("aws", "us-east-1", "?mapping=prod&zone_id=use1-az2");
        let ours = pairs(&app.get(&path, Some(&app.admin_key)).await);
        let theirs = pairs(&app.get(&path, Some(&app.other_admin_key)).await);
        assert_eq!(ours, [("use1-az2".to_owned(), json!("us-east-1a"))]);
        assert_eq!(theirs, [("use1-az2".to_owned(), json!("us-east-1c"))]);
    }

    async fn several_mappings_are_checked_as_one_is_unknown_404_another_providers_422(app: TestApp) {
        put_mapping(&app, "a", str::to_owned).await;
        let key = Some(app.member_key.as_str());
        app.get(&identities_path("aws", "us-east-1", "?mapping=a&mapping=nope"), key)
            .await
            .assert_error(404, "zone_mapping_not_found");
        // A mapping of aws asked of an azure region, second in the list.
        let output: Value = serde_json::from_str(include_str!("fixtures/list-locations-sample.json")).unwrap();
        let body = json!({"provider": "azure", "output": output}).to_string();
        let resp = app
            .http
            .put(app.url("/api/v1/zone-mappings/sub-1"))
            .header("X-API-KEY", &app.admin_key)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
        app.get(&identities_path("azure", "eastus", "?mapping=sub-1&mapping=a"), key)
            .await
            .assert_error(422, "invalid_zone_mapping");
        // Ten distinct mappings are served (unknown ones answer 404, not 400).
        let ten: String = (0..10).map(|i| format!("mapping=m{i}&")).collect();
        app.get(&identities_path("aws", "us-east-1", &format!("?{ten}")), key)
            .await
            .assert_error(404, "zone_mapping_not_found");
    }

    async fn without_a_mapping_names_and_mappings_are_empty_arrays(app: TestApp) {
        let key = Some(app.member_key.as_str());
        for query in ["", "?zone_type=all"] {
            let body = app.get(&identities_path("aws", "us-east-1", query), key).await.json();
            assert_eq!(body["mapping"], Value::Null);
            assert_eq!(body["mappings"], json!([]), "{query}");
            for zone in body["data"].as_array().unwrap() {
                assert_eq!(zone["names"], json!([]), "{query}: {zone}");
            }
        }
        put_mapping(&app, "a", str::to_owned).await;
        let body = app.get(&identities_path("aws", "us-east-1", "?mapping=a"), key).await.json();
        assert_eq!(body["mappings"][0], body["mapping"]);
        assert_eq!(body["data"][0]["names"][0]["zone_name"], body["data"][0]["zone_name"]);
    }
}
