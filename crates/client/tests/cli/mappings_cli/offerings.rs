//! What runs where (API 1.3) from the command line against the scripted server: `mappings put
//! --offerings FILE...` (what it sends, what it prints, what it refuses) and the offering counts
//! of `mappings show` and `list`; the queries are in `offerings_queries.rs`.

use std::io::Read;

use appzone_test_support::fixtures::offerings::{
    AWS_BY_ZONE_ID, AWS_BY_ZONE_NAME, AZURE_EASTUS, AZURE_WESTCENTRALUS, GCP_US_CENTRAL1,
};
use serde_json::{json, Value};

use super::*;

/// The answer of a `PUT` or `GET` of `prod` holding offerings in us-east-1, with one offering
/// skipped.
fn mapping_with_offerings_reply(status: u16) -> Reply {
    Reply::json(
        status,
        json!({
            "data": {
                "id": "prod", "provider": "aws", "label": "production account",
                "imported_at": "2026-11-27T10:00:00Z", "account": null,
                "regions": [{"region": "us-east-1", "zones": [
                    {"zone_id": "use1-az2", "zone_name": "us-east-1a", "state": "available", "opt_in_status": null}
                ]}],
                "offerings": [
                    {"region": "us-east-1", "instance_types": 52, "offerings": 227},
                    {"region": "us-west-2", "instance_types": 1, "offerings": 1}
                ]
            },
            "id": "srv-id",
            "message": "zone mapping prod stored",
            "removed_regions": [],
            "skipped": [{"region": "us-east-1", "zone_id": "use1-az9", "zone_name": null,
                         "reason": "1 offering not kept: the catalog holds no zone use1-az9 of aws"}],
            "status": "success",
        }),
    )
}

/// The JSON body of a request the scripted server received (inflated when gzip).
fn sent_json(seen: &appzone_test_support::scripted::Seen) -> Value {
    if seen.header("content-encoding") == Some("gzip") {
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(&seen.body[..])
            .read_to_end(&mut json)
            .unwrap();
        return serde_json::from_slice(&json).unwrap();
    }
    serde_json::from_slice(&seen.body).unwrap()
}

fn fixture(json: &str) -> Value {
    serde_json::from_str(json).unwrap()
}

// ---- mappings put --offerings -------------------------------------------------------------------

#[tokio::test]
async fn mappings_put_offerings_sends_one_file_as_it_is_and_prints_the_counts_and_skipped() {
    let server = Server::start(vec![mapping_with_offerings_reply(201)]).await;
    let zones = file_with(DESCRIBE_US_EAST_1);
    let offers = file_with(AWS_BY_ZONE_ID);
    let run = against(
        &server,
        &[
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            zones.path().to_str().unwrap(),
            "--offerings",
            offers.path().to_str().unwrap(),
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "created zone mapping prod: 1 zone in 1 region\n\
         offerings us-east-1: 52 instance types, 227 offerings\n\
         offerings us-west-2: 1 instance type, 1 offering\n\
         skipped us-east-1 use1-az9: 1 offering not kept: the catalog holds no zone use1-az9 of aws\n"
    );
    let seen = server.seen();
    assert_eq!(seen[0].header("content-encoding"), None, "34 KB: plain");
    assert_eq!(
        sent_json(&seen[0]),
        json!({"provider": "aws", "output": fixture(DESCRIBE_US_EAST_1),
               "offerings": fixture(AWS_BY_ZONE_ID)})
    );
}

#[tokio::test]
async fn mappings_put_offerings_sends_several_aws_files_as_an_array_of_the_outputs() {
    let server = Server::start(vec![mapping_with_offerings_reply(200)]).await;
    let zones = file_with(DESCRIBE_US_EAST_1);
    let by_id = file_with(AWS_BY_ZONE_ID);
    let by_name = file_with(AWS_BY_ZONE_NAME);
    let run = against(
        &server,
        &[
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            zones.path().to_str().unwrap(),
            "--offerings",
            by_id.path().to_str().unwrap(),
            by_name.path().to_str().unwrap(),
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert!(
        run.stdout.starts_with("replaced zone mapping prod"),
        "{}",
        run.stdout
    );
    assert_eq!(
        sent_json(&server.seen()[0])["offerings"],
        json!([fixture(AWS_BY_ZONE_ID), fixture(AWS_BY_ZONE_NAME)])
    );
}

#[tokio::test]
async fn mappings_put_offerings_sends_several_azure_files_as_an_array_of_list_skus_arrays() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let locations = file_with(LIST_LOCATIONS);
    let eastus = file_with(AZURE_EASTUS);
    let url = server.url();
    // The second output from stdin.
    let run = appzone_with_stdin(
        &[
            "mappings",
            "put",
            "sub-a",
            "--provider",
            "azure",
            "--file",
            locations.path().to_str().unwrap(),
            "--offerings",
            eastus.path().to_str().unwrap(),
            "-",
        ],
        &[("APPZONE_URL", url.as_str()), ("APPZONE_API_KEY", KEY)],
        AZURE_WESTCENTRALUS.as_bytes(),
    )
    .await;
    assert_exit(&run, exit_code::OK);
    let sent = sent_json(&server.seen()[0]);
    assert_eq!(sent["provider"], "azure");
    assert_eq!(
        sent["offerings"],
        json!([fixture(AZURE_EASTUS), fixture(AZURE_WESTCENTRALUS)])
    );
}

#[tokio::test]
async fn mappings_put_gcp_sends_the_machine_types_of_every_file_in_one_array_and_no_output() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let us_central1 = file_with(GCP_US_CENTRAL1);
    let more = json!([{"name": "a2-highgpu-1g", "zone": "us-central1-a", "guestCpus": 12}]);
    let more_file = file_with(&more.to_string());
    let run = against(
        &server,
        &[
            "mappings",
            "put",
            "my-project",
            "--provider",
            "gcp",
            "--offerings",
            us_central1.path().to_str().unwrap(),
            more_file.path().to_str().unwrap(),
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    let sent = sent_json(&server.seen()[0]);
    let mut expected = fixture(GCP_US_CENTRAL1).as_array().unwrap().clone();
    expected.extend(more.as_array().unwrap().iter().cloned());
    assert_eq!(sent, json!({"provider": "gcp", "offerings": expected}));
}

#[tokio::test]
async fn mappings_put_sends_a_large_offerings_body_gzip_compressed() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let zones = file_with(DESCRIBE_US_EAST_1);
    let offerings: Vec<Value> = (0..3_000)
        .flat_map(|i| {
            (1..=6).map(move |az| {
                json!({"InstanceType": format!("syn{i}.8xlarge"),
                    "LocationType": "availability-zone-id", "Location": format!("use1-az{az}")})
            })
        })
        .collect();
    let offers = json!({ "InstanceTypeOfferings": offerings });
    let file = file_with(&serde_json::to_string_pretty(&offers).unwrap());
    let run = against(
        &server,
        &[
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            zones.path().to_str().unwrap(),
            "--offerings",
            file.path().to_str().unwrap(),
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    let seen = server.seen();
    assert_eq!(seen[0].header("content-encoding"), Some("gzip"));
    assert!(seen[0].body.len() < 200 * 1024, "{}", seen[0].body.len());
    assert_eq!(sent_json(&seen[0])["offerings"], offers);
}

#[tokio::test]
async fn mappings_put_refuses_offerings_it_cannot_send_before_sending() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let zones = file_with(DESCRIBE_US_EAST_1);
    let zones = zones.path().to_str().unwrap();
    let aws_offers = file_with(AWS_BY_ZONE_ID);
    let aws_offers = aws_offers.path().to_str().unwrap();
    let gcp_offers = file_with(GCP_US_CENTRAL1);
    let gcp_offers = gcp_offers.path().to_str().unwrap();
    let not_json = file_with("InstanceTypeOfferings: none\n");
    let not_json = not_json.path().to_str().unwrap();
    let put = |provider: &'static str, rest: &[&'static str]| -> Vec<&'static str> {
        [
            &["mappings", "put", "prod", "--provider", provider][..],
            rest,
        ]
        .concat()
    };
    // (what, args, exit code, what stderr must say)
    let cases: Vec<(&str, Vec<&str>, u8, &str)> = vec![
        (
            "gcp with --file",
            [
                put("gcp", &["--file"]),
                vec![zones, "--offerings", gcp_offers],
            ]
            .concat(),
            exit_code::USAGE,
            "error: --file is not for gcp: GCP zone names are the same in every project",
        ),
        (
            "gcp without --offerings",
            put("gcp", &[]),
            exit_code::USAGE,
            "--offerings <FILE>...",
        ),
        (
            "aws without --file",
            [put("aws", &["--offerings"]), vec![aws_offers]].concat(),
            exit_code::USAGE,
            "--file <FILE>",
        ),
        (
            "--offerings without a file",
            [put("aws", &["--file"]), vec![zones, "--offerings"]].concat(),
            exit_code::USAGE,
            "--offerings <FILE>...",
        ),
        (
            "stdin twice",
            put("aws", &["--file", "-", "--offerings", "-"]),
            exit_code::USAGE,
            "error: stdin (`-`) can be read once",
        ),
        (
            "an offerings file that is not JSON",
            [
                put("aws", &["--file"]),
                vec![zones, "--offerings", aws_offers, not_json],
            ]
            .concat(),
            exit_code::INVALID_INPUT,
            "is not JSON",
        ),
        (
            "an AWS offerings file that is an array of machine types' strings",
            [
                put("aws", &["--file"]),
                vec![zones, "--offerings", aws_offers, "-"],
            ]
            .concat(),
            exit_code::INVALID_INPUT,
            "is not what aws ec2 describe-instance-type-offerings --output json prints",
        ),
        (
            "a GCP offerings file that is an AWS output",
            [put("gcp", &["--offerings"]), vec![aws_offers]].concat(),
            exit_code::INVALID_INPUT,
            "is not what gcloud compute machine-types list --format=json prints",
        ),
        (
            "an unreadable offerings file",
            [
                put("aws", &["--file"]),
                vec![zones, "--offerings", "/nonexistent/offers.json"],
            ]
            .concat(),
            exit_code::FAILURE,
            "error: cannot read /nonexistent/offers.json: ",
        ),
    ];
    let url = server.url();
    let env = [("APPZONE_URL", url.as_str()), ("APPZONE_API_KEY", KEY)];
    for (what, args, code, says) in cases {
        // Stdin, for the one case reading it: an array of strings, JSON but no cloud's
        // offerings output. (Given to a command refused before reading, its write could fail.)
        let run = if what.starts_with("an AWS offerings file that is an array") {
            appzone_with_stdin(&args, &env, b"[\"p5.48xlarge\"]").await
        } else {
            appzone(&args, &env).await
        };
        assert_eq!(run.code, i32::from(code), "{what}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{what}");
        assert!(run.stderr.contains(says), "{what}: {}", run.stderr);
    }
    assert_eq!(server.attempts(), 0, "nothing was sent");
}

// ---- mappings show, list ------------------------------------------------------------------------

#[tokio::test]
async fn mappings_show_and_list_print_the_offering_counts() {
    let list = Reply::json(
        200,
        json!({
            "data": [
                {"id": "my-project", "provider": "gcp", "label": "my-project",
                 "imported_at": "2026-11-27T10:00:00Z", "account": null, "regions": [],
                 "offerings": [{"region": "us-central1", "instance_types": 12, "offerings": 21}]},
                {"id": "prod", "provider": "aws", "label": "production account",
                 "imported_at": "2026-11-27T10:00:00Z", "account": null, "regions": ["us-east-1", "us-west-2"],
                 "offerings": [{"region": "us-east-1", "instance_types": 52, "offerings": 227},
                               {"region": "us-west-2", "instance_types": 1, "offerings": 1}]},
                {"id": "staging", "provider": "aws", "label": "staging",
                 "imported_at": "2026-11-27T10:00:00Z", "account": null, "regions": ["us-east-1"],
                 "offerings": []}
            ],
            "id": "srv-id",
            "message": "3 zone mappings",
            "status": "success",
        }),
    );
    let server = Server::start(vec![mapping_with_offerings_reply(200), list]).await;
    let run = against(&server, &["mappings", "show", "prod"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "id:          prod\n\
         provider:    aws\n\
         account:     -\n\
         label:       production account\n\
         imported_at: 2026-11-27T10:00:00Z\n\
         \n\
         REGION     ZONE_ID   ZONE_NAME   STATE      OPT_IN_STATUS\n\
         us-east-1  use1-az2  us-east-1a  available  -\n\
         offerings us-east-1: 52 instance types, 227 offerings\n\
         offerings us-west-2: 1 instance type, 1 offering\n"
    );
    let run = against(&server, &["mappings", "list"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "ID          PROVIDER  ACCOUNT  REGIONS              OFFERINGS  IMPORTED_AT           LABEL\n\
         my-project  gcp       -        -                    21         2026-11-27T10:00:00Z  my-project\n\
         prod        aws       -        us-east-1,us-west-2  228        2026-11-27T10:00:00Z  production account\n\
         staging     aws       -        us-east-1            -          2026-11-27T10:00:00Z  staging\n\
         3 zone mappings\n"
    );
}

#[tokio::test]
async fn mappings_show_of_a_gcp_mapping_prints_its_offerings_without_a_table_of_pairs() {
    let server = Server::start(vec![Reply::json(
        200,
        json!({
            "data": {"id": "my-project", "provider": "gcp", "label": "my-project",
                     "imported_at": "2026-11-27T10:00:00Z", "account": null, "regions": [],
                     "offerings": [{"region": "us-central1", "instance_types": 12, "offerings": 21}]},
            "id": "srv-id", "message": "zone mapping my-project", "status": "success",
        }),
    )])
    .await;
    let run = against(&server, &["mappings", "show", "my-project"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "id:          my-project\n\
         provider:    gcp\n\
         account:     -\n\
         label:       my-project\n\
         imported_at: 2026-11-27T10:00:00Z\n\
         \n\
         offerings us-central1: 12 instance types, 21 offerings\n"
    );
}

// ---- zones --offers -----------------------------------------------------------------------------
