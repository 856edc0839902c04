//! Zones a platform can build on: the zone types beyond availability zones in the catalog,
//! and what a zone mapping keeps of a cloud's output (every zone type with the account's
//! state, what it skipped, the account, the regions a replacement dropped); one test per
//! promise, on both backends.

use serde_json::{json, Value};

use appzone_test_support::{both_backends, Resp, TestApp};

fn identities_path(provider: &str, region: &str, query: &str) -> String {
    format!("/api/v1/providers/{provider}/regions/{region}/zone-identities{query}")
}

/// The items of a 200 identity listing.
#[track_caller]
fn items(resp: &Resp) -> Vec<Value> {
    assert_eq!(resp.status, 200, "{}", resp.body);
    resp.json()["data"].as_array().unwrap().clone()
}

#[track_caller]
fn item<'a>(items: &'a [Value], zone_id: &str) -> &'a Value {
    items
        .iter()
        .find(|i| i["zone_id"] == zone_id)
        .unwrap_or_else(|| panic!("{zone_id} is not listed: {items:?}"))
}

async fn put(app: &TestApp, id: &str, body: Value) -> Resp {
    let resp = app
        .http
        .put(app.url(&format!("/api/v1/zone-mappings/{id}")))
        .header("X-API-KEY", &app.admin_key)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    Resp::read(resp).await
}

fn aws_zone(region: &str, name: &str, id: &str, kind: &str, opt_in: &str) -> Value {
    json!({"RegionName": region, "ZoneName": name, "ZoneId": id, "ZoneType": kind,
           "State": "available", "OptInStatus": opt_in, "GroupName": region,
           "NetworkBorderGroup": region, "Messages": []})
}

/// An AWS output of us-east-1's six availability zones (this account's letters), a Local Zone
/// it has not opted into, and a zone the catalog does not hold.
fn us_east_1_with_edges() -> Value {
    let letters = ["a", "b", "c", "d", "e", "f"];
    let mut zones: Vec<Value> = letters
        .iter()
        .enumerate()
        .map(|(i, l)| {
            aws_zone(
                "us-east-1",
                &format!("us-east-1{l}"),
                &format!("use1-az{}", i + 1),
                "availability-zone",
                "opt-in-not-required",
            )
        })
        .collect();
    let mut bos = aws_zone(
        "us-east-1",
        "us-east-1-bos-1a",
        "use1-bos1-az1",
        "local-zone",
        "not-opted-in",
    );
    bos["ParentZoneId"] = json!("use1-az4");
    zones.push(bos);
    zones.push(aws_zone(
        "us-east-1",
        "us-east-1-xyz-1a",
        "use1-xyz1-az1",
        "local-zone",
        "not-opted-in",
    ));
    json!({"AvailabilityZones": zones})
}

both_backends! {
    async fn edge_zones_are_listed_when_asked_with_their_parent_border_group_and_opt_in(app: TestApp) {
        let key = Some(app.member_key.as_str());
        let all = items(&app.get(&identities_path("aws", "us-east-1", "?zone_type=all"), key).await);
        let bos = item(&all, "use1-bos1-az1");
        assert_eq!(bos["zone_type"], "local-zone");
        assert_eq!(bos["zone_name"], "us-east-1-bos-1a", "a Local Zone's name is the same for every account");
        assert_eq!(bos["name_scope"], "uniform");
        assert_eq!(bos["parent_zone_id"], "use1-az4");
        assert_eq!(bos["network_border_group"], "us-east-1-bos-1");
        assert_eq!(bos["opt_in"], "required");
        // A Wavelength Zone: AWS says their mapping may differ per account, so no name.
        let wavelength = item(&all, "use1-wl1-bos-wlz1");
        assert_eq!(wavelength["zone_type"], "wavelength-zone");
        assert_eq!(wavelength["zone_name"], Value::Null);
        assert_eq!(wavelength["parent_zone_id"], Value::Null, "no source gives it");
        // An availability zone needs no opt-in and has no parent.
        let az = item(&all, "use1-az1");
        assert_eq!((&az["opt_in"], &az["parent_zone_id"]), (&json!("not_required"), &Value::Null));
        // Every parent is an availability zone of the same region.
        for zone in &all {
            if let Some(parent) = zone["parent_zone_id"].as_str() {
                assert_eq!(item(&all, parent)["zone_type"], "availability-zone", "{zone}");
            }
        }
        let ai = items(&app.get(&identities_path("gcp", "us-central1", "?zone_type=ai-zone"), key).await);
        assert_eq!(ai.len(), 1);
        assert_eq!((&ai[0]["zone_id"], &ai[0]["parent_zone_id"]), (&json!("us-central1-ai1a"), &json!("us-central1-a")));
        let extended = items(&app.get(&identities_path("azure", "westus", "?zone_type=extended-zone"), key).await);
        assert_eq!(extended[0]["zone_id"], "losangeles");
        assert_eq!(extended[0]["opt_in"], "required");
        // Unasked, none of them: westus still has no availability zones.
        assert_eq!(items(&app.get(&identities_path("azure", "westus", ""), key).await), Vec::<Value>::new());
    }

    async fn a_mapping_keeps_every_zone_type_with_the_accounts_state_and_names_what_it_skipped(app: TestApp) {
        let resp = put(&app, "prod", json!({"provider": "aws", "output": us_east_1_with_edges()})).await;
        assert_eq!(resp.status, 201, "{}", resp.body);
        let body = resp.json();
        assert_eq!(body["data"]["regions"][0]["zones"].as_array().unwrap().len(), 7);
        assert_eq!(
            body["skipped"],
            json!([{"region": "us-east-1", "zone_id": "use1-xyz1-az1", "zone_name": "us-east-1-xyz-1a",
                    "reason": "the catalog holds no zone use1-xyz1-az1 in aws/us-east-1"}])
        );
        assert!(body["message"].as_str().unwrap().contains("1 skipped"), "{body}");
        let path = identities_path("aws", "us-east-1", "?mapping=prod&zone_type=local-zone&zone_id=use1-bos1-az1");
        let listed = items(&app.get(&path, Some(&app.member_key)).await);
        assert_eq!(
            listed[0]["names"],
            json!([{"mapping": "prod", "zone_name": "us-east-1-bos-1a", "state": "available", "opt_in_status": "not-opted-in"}])
        );
        // A GET shows the mapping; skipped zones were stored nowhere.
        let read = app.get("/api/v1/zone-mappings/prod", Some(&app.member_key)).await.json();
        assert_eq!(read["skipped"], json!([]));
        assert_eq!(read["data"]["regions"][0]["zones"][6]["opt_in_status"], "not-opted-in");
    }

    async fn an_azure_output_mapping_a_region_without_zones_is_stored_with_that_region_skipped(app: TestApp) {
        let sub = "0b1f6471-1bf0-4dda-aec3-111122223333";
        let location = |name: &str, zones: &[(&str, &str)]| {
            let mappings: Vec<Value> = zones
                .iter()
                .map(|(logical, physical)| json!({"logicalZone": logical, "physicalZone": physical}))
                .collect();
            json!({"name": name, "id": format!("/subscriptions/{sub}/locations/{name}"),
                   "type": "Region", "availabilityZoneMappings": mappings})
        };
        let output = json!([
            location("eastus", &[("1", "eastus-az3"), ("2", "eastus-az1"), ("3", "eastus-az2")]),
            // One subscription's output maps zones for westus (see the catalog's note).
            location("westus", &[("1", "westus-az1"), ("2", "westus-az2"), ("3", "westus-az3")]),
            {"name": "losangeles", "id": format!("/subscriptions/{sub}/locations/losangeles"), "type": "EdgeZone"}
        ]);
        let resp = put(&app, "sub-a", json!({"provider": "azure", "output": output})).await;
        assert_eq!(resp.status, 201, "{}", resp.body);
        let body = resp.json();
        assert_eq!(body["data"]["regions"].as_array().unwrap().len(), 1);
        assert_eq!(body["data"]["account"], sub, "read from the locations' id paths");
        let skipped: Vec<(&str, &Value)> = body["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["region"].as_str().unwrap(), &s["zone_id"]))
            .collect();
        assert_eq!(
            skipped,
            [("westus", &json!("westus-az1")), ("westus", &json!("westus-az2")), ("westus", &json!("westus-az3")), ("losangeles", &Value::Null)]
        );
        assert_eq!(body["skipped"][0]["reason"], "azure/westus has no availability zones in the catalog");
    }

    async fn the_account_is_stored_and_listed_and_a_malformed_one_changes_nothing(app: TestApp) {
        let output = us_east_1_with_edges();
        let refused = put(&app, "prod", json!({"provider": "aws", "account": "12345", "output": output})).await;
        refused.assert_error(400, "invalid_body");
        assert_eq!(app.get("/api/v1/zone-mappings/prod", Some(&app.member_key)).await.status, 404);
        let resp = put(&app, "prod", json!({"provider": "aws", "account": "111111111111", "output": output})).await;
        assert_eq!(resp.json()["data"]["account"], "111111111111");
        let list = app.get("/api/v1/zone-mappings", Some(&app.member_key)).await.json();
        assert_eq!(list["data"][0]["account"], "111111111111");
        // A replacement that does not say drops it: the body is the whole mapping.
        let resp = put(&app, "prod", json!({"provider": "aws", "output": output})).await;
        assert_eq!(resp.json()["data"]["account"], Value::Null);
    }

    async fn a_replacing_put_names_the_regions_it_dropped(app: TestApp) {
        let london = json!({"AvailabilityZones": [aws_zone("eu-west-2", "eu-west-2a", "euw2-az2", "availability-zone", "opt-in-not-required")]});
        let both = json!([us_east_1_with_edges(), london]);
        assert_eq!(put(&app, "prod", json!({"provider": "aws", "output": both})).await.status, 201);
        let resp = put(&app, "prod", json!({"provider": "aws", "output": london})).await;
        assert_eq!(resp.status, 200, "{}", resp.body);
        let body = resp.json();
        assert_eq!(body["removed_regions"], json!(["us-east-1"]));
        assert!(body["message"].as_str().unwrap().contains("no longer holds 1 region (us-east-1)"), "{body}");
        let again = put(&app, "prod", json!({"provider": "aws", "output": london})).await;
        assert_eq!(again.json()["removed_regions"], json!([]));
    }
}
