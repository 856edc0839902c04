//! What runs where: instance-type offerings stored with a zone mapping, from the clouds' own
//! outputs (real recorded values, `appzone_test_support::fixtures::offerings`), placed on zone
//! identities and served by `?offers=` and the `instance-types` listing; one test per promise,
//! on both backends.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use appzone_test_support::fixtures::offerings::{
    AWS_BY_REGION, AWS_BY_ZONE_ID, AWS_BY_ZONE_NAME, AWS_RECORDING_ACCOUNT_NAMES, AZURE_EASTUS,
    AZURE_WESTCENTRALUS, GCP_US_CENTRAL1,
};
use appzone_test_support::{both_backends, eventually, fast_config, Resp, TestApp};

fn identities(provider: &str, region: &str, query: &str) -> String {
    format!("/api/v1/providers/{provider}/regions/{region}/zone-identities{query}")
}

fn instance_types(provider: &str, region: &str, query: &str) -> String {
    format!("/api/v1/providers/{provider}/regions/{region}/instance-types{query}")
}

fn parse(json: &str) -> Value {
    serde_json::from_str(json).unwrap()
}

async fn put_bytes(app: &TestApp, id: &str, body: Vec<u8>, gzip: bool) -> Resp {
    let mut request = app
        .http
        .put(app.url(&format!("/api/v1/zone-mappings/{id}")))
        .header("X-API-KEY", &app.admin_key)
        .header("content-type", "application/json");
    if gzip {
        request = request.header("content-encoding", "gzip");
    }
    Resp::read(request.body(body).send().await.unwrap()).await
}

async fn put(app: &TestApp, id: &str, body: &Value) -> Resp {
    put_bytes(app, id, body.to_string().into_bytes(), false).await
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// `describe-availability-zones` of us-east-1 for an account whose names are `names`.
fn aws_output(names: &[(&str, &str)]) -> Value {
    let zones: Vec<Value> = names
        .iter()
        .map(|(name, id)| {
            json!({"RegionName": "us-east-1", "ZoneName": name, "ZoneId": id,
                   "ZoneType": "availability-zone", "State": "available",
                   "OptInStatus": "opt-in-not-required"})
        })
        .collect();
    json!({"AvailabilityZones": zones})
}

/// An AWS mapping of the recording account with `offerings`.
fn aws_mapping(offerings: Value) -> Value {
    json!({"provider": "aws", "account": "123456789012",
           "output": aws_output(&AWS_RECORDING_ACCOUNT_NAMES), "offerings": offerings})
}

/// AWS offerings by zone id of `types`, each in `zones`.
fn offered(types: &[&str], zones: &[&str]) -> Value {
    let offerings: Vec<Value> = types
        .iter()
        .flat_map(|t| {
            zones.iter().map(move |z| {
                json!({"InstanceType": t, "LocationType": "availability-zone-id", "Location": z})
            })
        })
        .collect();
    json!({"InstanceTypeOfferings": offerings})
}

#[track_caller]
fn ok(resp: &Resp, status: u16) -> Value {
    assert_eq!(resp.status, status, "{}", resp.body);
    resp.json()
}

#[track_caller]
fn refused(resp: &Resp, status: u16, code: &str) -> String {
    assert_eq!(resp.status, status, "{}", resp.body);
    let body = resp.json();
    assert_eq!(body["error_code"], code, "{body}");
    body["error"].as_str().unwrap().to_owned()
}

/// `instance_type -> zone_ids` of a 200 instance-type listing.
#[track_caller]
fn types(resp: &Resp) -> Vec<(String, Vec<String>)> {
    ok(resp, 200)["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let zones = t["zone_ids"].as_array().unwrap();
            (
                t["instance_type"].as_str().unwrap().to_owned(),
                zones
                    .iter()
                    .map(|z| z.as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect()
}

#[track_caller]
fn zone_ids(resp: &Resp) -> Vec<String> {
    ok(resp, 200)["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| z["zone_id"].as_str().unwrap().to_owned())
        .collect()
}

both_backends! {
    /// The same account's offerings by zone id and by its zone names place the same offerings:
    /// names are read through the mapping's own pairs.
    async fn aws_offerings_by_zone_id_and_by_the_accounts_names_land_on_the_same_identities(app: TestApp) {
        let by_id = ok(&put(&app, "by-id", &aws_mapping(parse(AWS_BY_ZONE_ID))).await, 201);
        let by_name = ok(&put(&app, "by-name", &aws_mapping(parse(AWS_BY_ZONE_NAME))).await, 201);
        let counts = json!([{"region": "us-east-1", "instance_types": 52, "offerings": 227}]);
        assert_eq!(by_id["data"]["offerings"], counts, "{by_id}");
        assert_eq!(by_name["data"]["offerings"], counts, "{by_name}");
        let listed = |id: &str| instance_types("aws", "us-east-1", &format!("?mapping={id}"));
        let ids = types(&app.get(&listed("by-id"), Some(&app.member_key)).await);
        assert_eq!(ids.len(), 52);
        assert_eq!(ids, types(&app.get(&listed("by-name"), Some(&app.member_key)).await));
        // Sorted by type; zones in the catalog's order. use1-az3 offers few types (recorded).
        let names: Vec<&str> = ids.iter().map(|(t, _)| t.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        let (_, c5) = ids.iter().find(|(t, _)| t == "c5.xlarge").unwrap();
        assert!(!c5.contains(&"use1-az3".to_owned()), "{c5:?}");
        // The listing and a GET show the counts too.
        let list = ok(&app.get("/api/v1/zone-mappings", Some(&app.member_key)).await, 200);
        assert_eq!(list["data"][0]["offerings"], counts, "{list}");
        let one = ok(&app.get("/api/v1/zone-mappings/by-id", Some(&app.member_key)).await, 200);
        assert_eq!(one["data"]["offerings"], counts);
        assert!(one["message"].as_str().unwrap().contains("227 instance-type offerings"), "{one}");
    }

    /// What cannot be placed is named in `skipped`, one entry per region, zone and reason, with
    /// how many offerings it holds; the rest is stored.
    async fn offerings_that_cannot_be_placed_are_named_in_skipped_with_their_count(app: TestApp) {
        let mut names = parse(AWS_BY_ZONE_NAME);
        let extra = json!({"InstanceType": "p5.48xlarge", "LocationType": "availability-zone", "Location": "us-east-1g"});
        names["InstanceTypeOfferings"].as_array_mut().unwrap().push(extra);
        let other_region = offered(&["c5.xlarge"], &["euw1-az1"]);
        let body = aws_mapping(json!([names, parse(AWS_BY_REGION), other_region]));
        let answer = ok(&put(&app, "prod", &body).await, 201);
        let skipped: Vec<(String, Value, Value, String)> = answer["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["region"].as_str().unwrap().to_owned(), s["zone_id"].clone(), s["zone_name"].clone(), s["reason"].as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(skipped.len(), 3, "{skipped:?}");
        assert!(skipped.contains(&(
            "us-east-1".to_owned(), Value::Null, json!("us-east-1g"),
            "1 offering not kept: zone mapping prod names no zone us-east-1g: add that region's aws ec2 describe-availability-zones output to it, or store offerings with --location-type availability-zone-id".to_owned()
        )), "{skipped:?}");
        assert!(skipped.iter().any(|(region, _, _, reason)| region == "us-east-1"
            && reason.starts_with("52 offerings not kept: a region-level offering says no zone")), "{skipped:?}");
        assert!(skipped.contains(&(
            "eu-west-1".to_owned(), json!("euw1-az1"), Value::Null,
            "1 offering not kept: zone mapping prod holds no zone euw1-az1: add eu-west-1's aws ec2 describe-availability-zones output to it".to_owned()
        )), "{skipped:?}");
        assert_eq!(answer["data"]["offerings"][0]["offerings"], 227);
    }

    /// `?offers=` keeps the zones where every mapping asked offers every type asked: "where
    /// can I run p5.48xlarge in prod and staging", by zone identity and each account's name.
    async fn offers_keeps_the_zones_where_every_mapping_offers_every_type(app: TestApp) {
        let all = ["use1-az1", "use1-az2", "use1-az3", "use1-az4", "use1-az5", "use1-az6"];
        let prod = aws_mapping(json!([
            offered(&["p5.48xlarge"], &["use1-az1", "use1-az2", "use1-az4"]),
            offered(&["m7i.large"], &all)
        ]));
        ok(&put(&app, "prod", &prod).await, 201);
        let staging_names = [
            ("us-east-1b", "use1-az1"), ("us-east-1e", "use1-az2"), ("us-east-1a", "use1-az3"),
            ("us-east-1c", "use1-az4"), ("us-east-1f", "use1-az5"), ("us-east-1d", "use1-az6"),
        ];
        let staging = json!({"provider": "aws", "account": "210987654321",
            "output": aws_output(&staging_names),
            "offerings": offered(&["p5.48xlarge", "m7i.large"], &["use1-az2", "use1-az4", "use1-az5"])});
        ok(&put(&app, "staging", &staging).await, 201);
        let both = app.get(&identities("aws", "us-east-1", "?mapping=prod&mapping=staging&offers=p5.48xlarge"), Some(&app.member_key)).await;
        assert_eq!(zone_ids(&both), ["use1-az2", "use1-az4"]);
        let body = both.json();
        let names: Vec<&Value> = body["data"].as_array().unwrap().iter().map(|z| &z["names"]).collect();
        assert_eq!(names[0][0]["zone_name"], "us-east-1a");
        assert_eq!(names[0][1]["zone_name"], "us-east-1e");
        assert!(body["message"].as_str().unwrap().contains("offers p5.48xlarge in zone mappings prod, staging"), "{body}");
        // Every type listed, in every mapping; one mapping alone; a type nobody offers.
        let two_types = app.get(&identities("aws", "us-east-1", "?mapping=prod&offers=p5.48xlarge,m7i.large"), Some(&app.member_key)).await;
        assert_eq!(zone_ids(&two_types), ["use1-az1", "use1-az2", "use1-az4"]);
        let unknown = app.get(&identities("aws", "us-east-1", "?mapping=prod&offers=x9.nothing"), Some(&app.member_key)).await;
        assert_eq!(zone_ids(&unknown), Vec::<String>::new());
        // Each filter has its own ETag.
        assert_ne!(both.header("etag"), two_types.header("etag"));
    }

    /// The instance-type listing: sorted by type with the zones offering each, `zone_id` keeps
    /// the types of one zone (none for a zone the region lacks), and it revalidates (ETag, 304) and answers HEAD like the listings.
    async fn instance_types_lists_each_type_with_its_zones_and_revalidates(app: TestApp) {
        ok(&put(&app, "prod", &aws_mapping(parse(AWS_BY_ZONE_ID))).await, 201);
        let az3 = instance_types("aws", "us-east-1", "?mapping=prod&zone_id=use1-az3");
        let listed = types(&app.get(&az3, Some(&app.member_key)).await);
        assert!(!listed.is_empty() && listed.len() < 52, "{listed:?}");
        assert!(listed.iter().all(|(_, zones)| zones.contains(&"use1-az3".to_owned())));
        // A zone the region lacks matches nothing, as a zone-identity filter does, and the
        // message tells a mistyped id from a zone offering nothing.
        let nowhere = app.get(&instance_types("aws", "us-east-1", "?mapping=prod&zone_id=use1-az9"), Some(&app.member_key)).await;
        assert!(types(&nowhere).is_empty());
        let message = nowhere.json()["message"].as_str().unwrap().to_owned();
        assert!(message.ends_with("in zone use1-az9 (aws/us-east-1 has no zone use1-az9)"), "{message}");
        let path = instance_types("aws", "us-east-1", "?mapping=prod");
        let etag = app.etag(&path).await;
        let again = app.send(reqwest::Method::GET, &path, Some(&app.member_key), &[("If-None-Match", etag.as_str())]).await;
        assert_eq!(again.status, 304, "{}", again.body);
        let head = app.raw("HEAD", &path, Some(&app.member_key)).await;
        assert_eq!(head.status, 200);
        assert!(head.body.is_empty());
        // A replaced mapping changes the answer and its ETag.
        ok(&put(&app, "prod", &aws_mapping(offered(&["p5.48xlarge"], &["use1-az1"]))).await, 200);
        let replaced = app.get(&path, Some(&app.member_key)).await;
        assert_eq!(types(&replaced), [("p5.48xlarge".to_owned(), vec!["use1-az1".to_owned()])]);
        assert_ne!(replaced.header("etag"), Some(etag.as_str()));
    }

    /// A mapping without offerings for the region is 422 `offerings_not_stored` on both
    /// routes, naming the mapping and how to store them.
    async fn a_mapping_without_offerings_for_the_region_is_422_offerings_not_stored(app: TestApp) {
        ok(&put(&app, "prod", &aws_mapping(parse(AWS_BY_ZONE_ID))).await, 201);
        let bare = json!({"provider": "aws", "output": aws_output(&AWS_RECORDING_ACCOUNT_NAMES)});
        ok(&put(&app, "staging", &bare).await, 201);
        for path in [
            identities("aws", "us-east-1", "?mapping=prod&mapping=staging&offers=p5.48xlarge"),
            instance_types("aws", "us-east-1", "?mapping=staging"),
        ] {
            let message = refused(&app.get(&path, Some(&app.member_key)).await, 422, "offerings_not_stored");
            assert!(message.contains("zone mapping \"staging\" holds no instance-type offerings for aws/us-east-1"), "{message}");
            assert!(message.contains("describe-instance-type-offerings"), "{message}");
        }
    }

    /// Query mistakes are 400 `invalid_query` naming the parameter.
    async fn offers_and_instance_type_queries_refuse_what_they_cannot_answer(app: TestApp) {
        ok(&put(&app, "prod", &aws_mapping(parse(AWS_BY_ZONE_ID))).await, 201);
        let many = vec!["t3.micro"; 21].join(",");
        for (path, parameter) in [
            (identities("aws", "us-east-1", "?offers=p5.48xlarge"), "offers"),
            (identities("aws", "us-east-1", &format!("?mapping=prod&offers={many}")), "offers"),
            (identities("aws", "us-east-1", "?mapping=prod&offers=p5%2048xlarge"), "offers"),
            (identities("aws", "us-east-1", "?mapping=prod&offers=a&offers=b"), "offers"),
            (instance_types("aws", "us-east-1", ""), "mapping"),
            (instance_types("aws", "us-east-1", "?mapping=prod&mapping=prod"), "mapping"),
            (instance_types("aws", "us-east-1", "?mapping=..%2Fprod"), "mapping"),
            (instance_types("aws", "us-east-1", "?mapping=prod&zone_id=use1_az1"), "zone_id"),
            (instance_types("aws", "us-east-1", "?mapping=prod&offers=p5.48xlarge"), "offers"),
        ] {
            let message = refused(&app.get(&path, Some(&app.member_key)).await, 400, "invalid_query");
            assert!(message.starts_with(&format!("invalid query parameter \"{parameter}\"")), "{path}: {message}");
        }
    }

    /// Azure: logical zones read through the subscription's own mapping; a zone restriction
    /// removes its zones, a SKU restricted everywhere is not offered, one offered in no zone and
    /// a region without zones are named in `skipped`.
    async fn azure_skus_are_placed_through_the_subscriptions_logical_zones_with_restrictions(app: TestApp) {
        let sub = "/subscriptions/0b1f6471-1bf0-4dda-aec3-111122223333/locations";
        let output = json!([
            {"name": "eastus", "id": format!("{sub}/eastus"), "availabilityZoneMappings": [
                {"logicalZone": "1", "physicalZone": "eastus-az3"},
                {"logicalZone": "2", "physicalZone": "eastus-az1"},
                {"logicalZone": "3", "physicalZone": "eastus-az2"}]},
            {"name": "westcentralus", "id": format!("{sub}/westcentralus")}
        ]);
        let body = json!({"provider": "azure", "output": output,
            "offerings": [parse(AZURE_EASTUS), parse(AZURE_WESTCENTRALUS)]});
        let answer = ok(&put(&app, "sub-a", &body).await, 201);
        assert_eq!(answer["data"]["offerings"][0]["region"], "eastus", "{answer}");
        let listed = types(&app.get(&instance_types("azure", "eastus", "?mapping=sub-a"), Some(&app.member_key)).await);
        let zones_of = |name: &str| listed.iter().find(|(t, _)| t == name).map(|(_, z)| z.clone());
        // Zone 1 of Standard_M8-2ms is restricted: logical 2 and 3 remain, physical az1 and az2.
        assert_eq!(zones_of("Standard_M8-2ms").unwrap(), ["eastus-az1", "eastus-az2"]);
        assert_eq!(zones_of("Standard_DC8s_v3").unwrap(), ["eastus-az3"]);
        assert_eq!(zones_of("Standard_NC24ads_A100_v4").unwrap(), ["eastus-az2"]);
        assert_eq!(zones_of("Standard_NC6s_v3"), None, "restricted in every zone");
        assert_eq!(zones_of("Standard_A0"), None, "offered in no zone");
        assert_eq!(listed.len(), 15);
        let skipped = answer["skipped"].as_array().unwrap();
        let reasons: Vec<&str> = skipped.iter().map(|s| s["reason"].as_str().unwrap()).collect();
        assert!(reasons.contains(&"1 offering not kept: offered in eastus in no zone (regional deployments only)"), "{reasons:?}");
        // westcentralus: 12 SKUs, one of them restricted for the location.
        assert!(reasons.contains(&"11 offerings not kept: azure/westcentralus has no availability zones; offerings are kept per zone"), "{reasons:?}");
    }

    /// GCP zone names are the identity: a GCP mapping carries offerings alone.
    async fn a_gcp_mapping_carries_machine_types_alone_placed_by_zone_name(app: TestApp) {
        let body = json!({"provider": "gcp", "label": "project ric", "offerings": parse(GCP_US_CENTRAL1)});
        let answer = ok(&put(&app, "proj", &body).await, 201);
        assert_eq!(answer["data"]["regions"], json!([]));
        assert_eq!(answer["data"]["offerings"], json!([{"region": "us-central1", "instance_types": 12, "offerings": 21}]));
        let listed = types(&app.get(&instance_types("gcp", "us-central1", "?mapping=proj"), Some(&app.member_key)).await);
        let ultramem = listed.iter().find(|(t, _)| t == "n1-ultramem-40").unwrap();
        assert_eq!(ultramem.1, ["us-central1-b"]);
        let zones = app.get(&identities("gcp", "us-central1", "?mapping=proj&offers=n1-ultramem-40"), Some(&app.member_key)).await;
        assert_eq!(zone_ids(&zones), ["us-central1-b"]);
        // A GCP mapping has no output; one without offerings holds nothing.
        let with_output = json!({"provider": "gcp", "output": [], "offerings": parse(GCP_US_CENTRAL1)});
        refused(&put(&app, "proj2", &with_output).await, 400, "invalid_body");
        refused(&put(&app, "proj2", &json!({"provider": "gcp"})).await, 400, "invalid_body");
    }

    /// A refused body (a truncated AWS output, one of another shape, one too large) leaves the
    /// stored mapping as it was.
    async fn a_refused_body_leaves_the_stored_mapping_as_it_was(app: TestApp) {
        ok(&put(&app, "prod", &aws_mapping(parse(AWS_BY_ZONE_ID))).await, 201);
        let before = ok(&app.get("/api/v1/zone-mappings/prod", Some(&app.member_key)).await, 200);
        let mut truncated = offered(&["p5.48xlarge"], &["use1-az1"]);
        truncated["NextToken"] = json!("eyJOZXh0VG9rZW4iOiBudWxsLCAiYm90b190cnVuY2F0ZV9hbW91bnQiOiAyfQ==");
        let message = refused(&put(&app, "prod", &aws_mapping(truncated)).await, 422, "invalid_zone_mapping");
        assert!(message.contains("truncated") && message.contains("--max-items"), "{message}");
        refused(&put(&app, "prod", &aws_mapping(json!({"offerings": []}))).await, 400, "invalid_body");
        refused(&put(&app, "prod", &aws_mapping(parse(AZURE_EASTUS))).await, 400, "invalid_body");
        let big_output = json!({"provider": "aws", "output": {"AvailabilityZones": [], "pad": "x".repeat(1024 * 1024)}});
        let message = refused(&put(&app, "prod", &big_output).await, 413, "payload_too_large");
        assert!(message.contains("1048576"), "{message}");
        let after = ok(&app.get("/api/v1/zone-mappings/prod", Some(&app.member_key)).await, 200);
        assert_eq!(before["data"], after["data"]);
    }

    /// Bodies may come gzip-compressed; a compressed body that inflates past 32 MiB is refused
    /// 413 naming the limit, and nothing changes.
    async fn a_gzip_body_is_stored_and_one_inflating_past_the_limit_is_413(app: TestApp) {
        let body = aws_mapping(parse(AWS_BY_ZONE_ID)).to_string();
        let answer = ok(&put_bytes(&app, "prod", gzip(body.as_bytes()), true).await, 201);
        assert_eq!(answer["data"]["offerings"][0]["offerings"], 227);
        // 33 MiB of spaces inside a valid body: about 33 KiB compressed.
        let limit = appzone_contract::MAX_ZONE_MAPPING_BYTES;
        let padded = format!("{}{}", " ".repeat(limit + 1024), body);
        let bomb = gzip(padded.as_bytes());
        assert!(bomb.len() < 200 * 1024, "{}", bomb.len());
        let message = refused(&put_bytes(&app, "prod", bomb, true).await, 413, "payload_too_large");
        assert_eq!(message, format!("the request body is larger than this route's limit of {limit} bytes"));
        let broken = refused(&put_bytes(&app, "prod", b"not gzip".to_vec(), true).await, 400, "invalid_body");
        assert!(broken.contains("could not be read"), "{broken}");
        // Another encoding is named, in the contract's body (not a bare 415).
        let brotli = app
            .http
            .put(app.url("/api/v1/zone-mappings/prod"))
            .header("X-API-KEY", &app.admin_key)
            .header("content-type", "application/json")
            .header("content-encoding", "br")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        let message = refused(&Resp::read(brotli).await, 400, "invalid_body");
        assert!(message.contains("Content-Encoding \"br\" is not read"), "{message}");
        let after = ok(&app.get("/api/v1/zone-mappings/prod", Some(&app.member_key)).await, 200);
        assert_eq!(after["data"]["offerings"][0]["offerings"], 227);
    }

    /// Offerings stored through one replica are what another serves within a second, although
    /// it cached the mapping without them.
    async fn offerings_stored_through_one_replica_reach_another_within_a_second(app: TestApp) {
        let replica = app.replica(fast_config()).await;
        let url = format!("{}{}", replica.base, instance_types("aws", "us-east-1", "?mapping=prod"));
        let on_replica = || async {
            let resp = app.http.get(&url).header("X-API-KEY", &app.member_key).send().await.unwrap();
            Resp::read(resp).await
        };
        let bare = json!({"provider": "aws", "output": aws_output(&AWS_RECORDING_ACCOUNT_NAMES)});
        ok(&put(&app, "prod", &bare).await, 201);
        assert!(eventually(Duration::from_secs(1), || async { on_replica().await.status == 422 }).await);
        ok(&put(&app, "prod", &aws_mapping(parse(AWS_BY_ZONE_ID))).await, 200);
        let started = Instant::now();
        let served = eventually(Duration::from_secs(1), || async {
            let resp = on_replica().await;
            resp.status == 200 && resp.json()["data"].as_array().is_some_and(|d| d.len() == 52)
        })
        .await;
        assert!(served, "the offerings did not reach the replica within a second");
        eprintln!("offerings reached the replica in {:?}", started.elapsed());
    }

    /// Another organization never sees a mapping's offerings: its `mapping=prod` is its own.
    async fn another_organization_never_sees_a_mappings_offerings(app: TestApp) {
        ok(&put(&app, "prod", &aws_mapping(parse(AWS_BY_ZONE_ID))).await, 201);
        for path in [
            instance_types("aws", "us-east-1", "?mapping=prod"),
            identities("aws", "us-east-1", "?mapping=prod&offers=p5.48xlarge"),
        ] {
            let resp = app.get(&path, Some(&app.other_admin_key)).await;
            refused(&resp, 404, "zone_mapping_not_found");
            assert!(!resp.body.contains("use1-az"), "{}", resp.body);
        }
    }
}
