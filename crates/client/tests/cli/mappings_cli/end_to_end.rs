//! The commands against the real server.

use super::*;

// ---- end to end ---------------------------------------------------------------------------------

#[tokio::test]
async fn the_commands_store_apply_list_show_and_delete_a_mapping_on_the_real_server() {
    let server = TestApp::sqlite().await;
    let env = |key: &str| -> Vec<(String, String)> {
        vec![
            ("APPZONE_URL".to_owned(), server.base.clone()),
            ("APPZONE_API_KEY".to_owned(), key.to_owned()),
        ]
    };
    let run_as = |key: String, args: Vec<&'static str>, extra: Option<String>| {
        let env = env(&key);
        async move {
            let env: Vec<(&str, &str)> =
                env.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
            let mut all: Vec<&str> = args;
            if let Some(extra) = extra.as_deref() {
                all.push(extra);
            }
            appzone(&all, &env).await
        }
    };
    let file = file_with(DESCRIBE_US_EAST_1);
    let path = file.path().to_str().unwrap().to_owned();
    let put = vec![
        "mappings",
        "put",
        "prod",
        "--provider",
        "aws",
        "--label",
        "production",
        "--file",
    ];

    let run = run_as(server.member_key.clone(), put.clone(), Some(path.clone())).await;
    assert_exit(&run, exit_code::FORBIDDEN);
    let run = run_as(server.admin_key.clone(), put.clone(), Some(path.clone())).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "created zone mapping prod: 6 zones in 1 region\n"
    );
    let run = run_as(server.admin_key.clone(), put, Some(path)).await;
    assert_eq!(
        run.stdout,
        "replaced zone mapping prod: 6 zones in 1 region\n"
    );

    let run = run_as(
        server.member_key.clone(),
        vec![
            "zones",
            "aws",
            "us-east-1",
            "--identities",
            "--mapping",
            "prod",
        ],
        None,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "ZONE_ID   ZONE_NAME   SCOPE    VISIBILITY");
    assert_eq!(lines[1], "use1-az1  us-east-1d  account  all_accounts");
    assert_eq!(lines.len(), 8, "{}", run.stdout);
    assert!(lines[7].contains("zone mapping prod"), "{}", run.stdout);

    let run = run_as(
        server.member_key.clone(),
        vec!["zones", "aws", "us-east-1", "--identities"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout.lines().nth(1),
        Some("use1-az1  -          account  all_accounts")
    );

    let run = run_as(server.member_key.clone(), vec!["mappings", "list"], None).await;
    assert_exit(&run, exit_code::OK);
    assert!(
        run.stdout
            .lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("prod  aws       -        us-east-1  "),
        "{}",
        run.stdout
    );
    let run = run_as(
        server.member_key.clone(),
        vec!["mappings", "show", "prod"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert!(
        run.stdout.contains("\nus-east-1  use1-az2  us-east-1a  "),
        "{}",
        run.stdout
    );

    let run = run_as(
        server.member_key.clone(),
        vec!["mappings", "delete", "prod"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::FORBIDDEN);
    let run = run_as(
        server.admin_key.clone(),
        vec!["mappings", "delete", "prod"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout, "deleted zone mapping prod\n");
    let run = run_as(
        server.admin_key.clone(),
        vec!["mappings", "delete", "prod"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::NOT_FOUND);
    assert!(
        run.stderr.starts_with(
            "error: zone_mapping_not_found: your organization has no zone mapping \"prod\""
        ),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn the_offerings_commands_store_filter_and_list_on_the_real_server() {
    use appzone_test_support::fixtures::offerings::{AWS_BY_ZONE_ID, AWS_BY_ZONE_NAME};

    let server = TestApp::sqlite().await;
    let env = [
        ("APPZONE_URL", server.base.as_str()),
        ("APPZONE_API_KEY", server.admin_key.as_str()),
    ];
    let zones = file_with(DESCRIBE_US_EAST_1);
    let zones = zones.path().to_str().unwrap();
    // moto's recording by zone id and by name (read through prod's names): the same offerings.
    let by_id = file_with(AWS_BY_ZONE_ID);
    let by_name = file_with(AWS_BY_ZONE_NAME);
    let put = [
        "mappings",
        "put",
        "prod",
        "--provider",
        "aws",
        "--file",
        zones,
        "--offerings",
        by_id.path().to_str().unwrap(),
        by_name.path().to_str().unwrap(),
    ];
    let run = appzone(&put, &env).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "created zone mapping prod: 6 zones in 1 region\n\
         offerings us-east-1: 52 instance types, 227 offerings\n"
    );

    // Staging without offerings first: asking for them exits 6, naming it.
    let run = appzone(
        &[
            "mappings",
            "put",
            "staging",
            "--provider",
            "aws",
            "--file",
            zones,
        ],
        &env,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    let offers = [
        "zones",
        "aws",
        "us-east-1",
        "--identities",
        "--mapping",
        "prod",
        "--mapping",
        "staging",
        "--offers",
        "p4de.24xlarge",
    ];
    let run = appzone(&offers, &env).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert!(
        run.stderr
            .starts_with("error: offerings_not_stored: zone mapping \"staging\" holds no"),
        "{}",
        run.stderr
    );

    // Staging may launch p4de.24xlarge in use1-az1 and use1-az4; prod in use1-az4 and use1-az6.
    let staging_offers = file_with(
        &serde_json::json!({"InstanceTypeOfferings": [
            {"InstanceType": "p4de.24xlarge", "LocationType": "availability-zone-id", "Location": "use1-az1"},
            {"InstanceType": "p4de.24xlarge", "LocationType": "availability-zone-id", "Location": "use1-az4"}
        ]})
        .to_string(),
    );
    let run = appzone(
        &[
            "mappings",
            "put",
            "staging",
            "--provider",
            "aws",
            "--file",
            zones,
            "--offerings",
            staging_offers.path().to_str().unwrap(),
        ],
        &env,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "replaced zone mapping staging: 6 zones in 1 region\n\
         offerings us-east-1: 1 instance type, 2 offerings\n"
    );
    let run = appzone(&offers, &env).await;
    assert_exit(&run, exit_code::OK);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "ZONE_ID   ZONE_NAME(prod)  ZONE_NAME(staging)  SCOPE    VISIBILITY",
            "use1-az4  us-east-1b       us-east-1b          account  all_accounts",
        ],
        "{}",
        run.stdout
    );
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    assert!(lines[2].contains("p4de.24xlarge"), "{}", run.stdout);

    let run = appzone(
        &[
            "instance-types",
            "aws",
            "us-east-1",
            "--mapping",
            "prod",
            "--zone-id",
            "use1-az3",
        ],
        &env,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "INSTANCE_TYPE  ZONE_IDS");
    assert_eq!(
        lines[1],
        "c3.large       use1-az2,use1-az3,use1-az4,use1-az6"
    );
    assert_eq!(
        lines.len(),
        10,
        "8 types, the header and the message: {}",
        run.stdout
    );
    assert_eq!(
        lines[9],
        "8 instance types offered in aws/us-east-1 by zone mapping prod in zone use1-az3"
    );

    let run = appzone(
        &[
            "--output",
            "json",
            "instance-types",
            "aws",
            "us-east-1",
            "--mapping",
            "prod",
        ],
        &env,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout.lines().count(), 1);
    let list: appzone_client::InstanceTypeList = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(list.data.len(), 52);
    assert_eq!(list.status, "success");

    let run = appzone(&["mappings", "list"], &env).await;
    assert_exit(&run, exit_code::OK);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with("ID       PROVIDER  ACCOUNT  REGIONS    OFFERINGS  IMPORTED_AT"),
        "{}",
        run.stdout
    );
    assert!(
        lines[1].starts_with("prod     aws       -        us-east-1  227  "),
        "{}",
        run.stdout
    );
    assert!(
        lines[2].starts_with("staging  aws       -        us-east-1  2    "),
        "{}",
        run.stdout
    );
}
