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
