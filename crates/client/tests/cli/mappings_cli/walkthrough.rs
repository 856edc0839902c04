//! docs/CLIENTS.md's two-account walkthrough ("Your own zone names", with "What runs where"),
//! run as written against the real server: each `appzone` line of its `sh` blocks, with the
//! files the `aws` lines would write (the offerings built from the page's table of them), and
//! the printed output compared with the `text` block that follows.

use super::*;

const CLIENTS: &str = include_str!("../../../../../docs/CLIENTS.md");

/// The `sh` and `text` blocks of the section, in order.
fn blocks() -> Vec<(String, String)> {
    let section = section();
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in section.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(kind)) if !kind.is_empty() => open = Some((kind.to_owned(), String::new())),
            (Some(_), Some("")) => blocks.extend(open.take()),
            (Some((_, text)), None) => {
                text.push_str(line);
                text.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

/// The walkthrough's section of docs/CLIENTS.md.
fn section() -> &'static str {
    CLIENTS
        .split("\n## ")
        .find(|s| s.starts_with("Your own zone names"))
        .expect("docs/CLIENTS.md has a section \"Your own zone names\"")
}

/// The offerings files the `aws ec2 describe-instance-type-offerings` lines would write for
/// prod and for staging, built from the section's table (`| `type` | prod's zone ids |
/// staging's zone ids |`), in the CLI's shape.
fn offerings_outputs() -> [String; 2] {
    let mut accounts: [Vec<serde_json::Value>; 2] = [Vec::new(), Vec::new()];
    for row in section().lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let [_, instance_type, prod, staging, _] = cells[..] else {
            panic!("a row of the offerings table has 3 cells: {row}");
        };
        let instance_type = instance_type.trim_matches('`');
        for (offerings, zones) in accounts.iter_mut().zip([prod, staging]) {
            offerings.extend(zones.split(", ").map(|zone| {
                serde_json::json!({"InstanceType": instance_type,
                    "LocationType": "availability-zone-id", "Location": zone})
            }));
        }
    }
    assert!(
        !accounts[0].is_empty(),
        "the section has a table of offerings"
    );
    accounts.map(|offerings| {
        serde_json::to_string_pretty(&serde_json::json!({ "InstanceTypeOfferings": offerings }))
            .unwrap()
    })
}

/// A command line split into words, `"..."` quoting spaces (what the walkthrough uses).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => words.extend((!word.is_empty()).then(|| std::mem::take(&mut word))),
            c => word.push(c),
        }
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}

/// us-east-1 as the staging account sees it: each zone's letter two further on than prod's.
fn staging_output() -> String {
    let mut output: serde_json::Value = serde_json::from_str(DESCRIBE_US_EAST_1).unwrap();
    for zone in output["AvailabilityZones"].as_array_mut().unwrap() {
        let name = zone["ZoneName"].as_str().unwrap();
        let letter = name.as_bytes()[name.len() - 1];
        let shifted = b'a' + (letter - b'a' + 2) % 6;
        zone["ZoneName"] = format!("us-east-1{}", shifted as char).into();
    }
    output.to_string()
}

#[tokio::test]
async fn the_two_account_walkthrough_prints_what_docs_clients_md_shows() {
    let server = TestApp::sqlite().await;
    let prod = file_with(DESCRIBE_US_EAST_1);
    let staging = file_with(&staging_output());
    let [prod_offers, staging_offers] = offerings_outputs().map(|json| file_with(&json));
    let files = [
        ("prod.json", prod.path().to_str().unwrap().to_owned()),
        ("staging.json", staging.path().to_str().unwrap().to_owned()),
        (
            "prod-offers.json",
            prod_offers.path().to_str().unwrap().to_owned(),
        ),
        (
            "staging-offers.json",
            staging_offers.path().to_str().unwrap().to_owned(),
        ),
    ];
    let env = [
        ("APPZONE_URL", server.base.as_str()),
        ("APPZONE_API_KEY", server.admin_key.as_str()),
    ];
    // What `serve --demo` holds, so the first `put` replaces it as the page says.
    let demo = appzone(
        &[
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            &files[0].1,
        ],
        &env,
    )
    .await;
    assert_exit(&demo, exit_code::OK);

    let blocks = blocks();
    let mut shown = 0;
    for pair in blocks.windows(2) {
        let [(kind, commands), (next, expected)] = pair else {
            continue;
        };
        if kind != "sh" || next != "text" {
            continue;
        }
        let mut printed = String::new();
        for line in commands.lines().filter(|l| l.starts_with("appzone ")) {
            let mut args = words(line);
            for arg in &mut args {
                if let Some((_, path)) = files.iter().find(|(name, _)| arg == name) {
                    *arg = path.clone();
                }
            }
            let args: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
            let run = appzone(&args, &env).await;
            assert_exit(&run, exit_code::OK);
            printed.push_str(&run.stdout);
        }
        assert_eq!(&printed, expected, "the output of\n{commands}");
        shown += 1;
    }
    assert_eq!(
        shown, 4,
        "the walkthrough's four transcripts (two of names, two of offerings): {blocks:?}"
    );
}
