//! The commands of the README and of the guides in `docs/`: each one is run by a test or by a
//! step of `cargo xtask ci`, and the operator commands (docs/OPERATING.md) are run here exactly
//! as written.

use std::path::Path;
use std::process::Command;

use crate::server_process::stdout_of;

/// The README and the guides it maps, where the commands live.
const DOCS: &[(&str, &str)] = &[
    ("README.md", include_str!("../../../../README.md")),
    (
        "docs/CLIENTS.md",
        include_str!("../../../../docs/CLIENTS.md"),
    ),
    (
        "docs/CONFORMANCE.md",
        include_str!("../../../../docs/CONFORMANCE.md"),
    ),
    (
        "docs/DEPLOYMENT.md",
        include_str!("../../../../docs/DEPLOYMENT.md"),
    ),
    (
        "docs/DEVELOPING.md",
        include_str!("../../../../docs/DEVELOPING.md"),
    ),
    (
        "docs/OPERATING.md",
        include_str!("../../../../docs/OPERATING.md"),
    ),
    (
        "docs/RELIABILITY.md",
        include_str!("../../../../docs/RELIABILITY.md"),
    ),
];
const OPERATING: &str = include_str!("../../../../docs/OPERATING.md");
const XTASK: &str = include_str!("../../../../xtask/src/main.rs");

/// Every command the README and the guides show, and what runs it: a test of this binary
/// (`test:`), or a task of `cargo xtask` (`xtask:`) that `cargo xtask ci` runs or that has a
/// test of its own. Commands that only set up a machine (`rustup`, `apt-get`, `cargo install`) are run by
/// `.ci/run` (`ci-setup:`). Making an advisory snapshot needs github.com, which CI cannot reach:
/// the one exception (`not-run:`), said so in the closing note of the change that added it.
/// Matched by prefix, longest first.
const RUN_BY: &[(&str, &str)] = &[
    (
        "cargo run --release -p appzone-server -- serve --demo",
        "xtask:clients",
    ),
    ("cargo xtask ci", "xtask:ci"),
    ("cargo xtask check", "xtask:check"),
    ("cargo fmt --check", "xtask:ci"),
    ("APPZONE_TEST_POSTGRES_URL=", "xtask:ci"),
    ("cargo xtask openapi", "xtask:openapi"),
    ("cargo xtask lint-spec", "xtask:ci"),
    ("cargo xtask clients", "xtask:ci"),
    ("cargo xtask browser", "xtask:ci"),
    ("cargo xtask msrv", "xtask:ci"),
    // What `cargo xtask msrv` runs for the library crates (msrv.rs).
    ("cargo +1.88 check", "xtask:ci"),
    ("cargo xtask deny", "xtask:ci"),
    ("cargo xtask help", "xtask:help"),
    ("cargo xtask bench", "xtask:bench"),
    ("cargo xtask instructions", "xtask:ci"),
    ("cargo xtask image", "xtask:ci"),
    ("cargo xtask deploy-check", "xtask:ci"),
    ("cargo xtask api-compat", "xtask:ci"),
    ("cargo xtask semver-checks", "xtask:ci"),
    ("cargo xtask old-client", "xtask:ci"),
    ("podman ", "xtask:image"),
    ("cargo test", "xtask:ci"),
    (
        "cargo test -p appzone-server --test integration",
        "test:readme::the_filtered_test_command_is_accepted",
    ),
    ("cargo install --locked --path crates/server", "ci-setup:"),
    (
        "cargo install --locked --path crates/client --features cli",
        "ci-setup:",
    ),
    ("cargo install --locked cargo-deny", "xtask:deny"),
    ("cargo install --locked cargo-semver-checks", "ci-setup:"),
    ("rustup ", "ci-setup:"),
    ("sudo apt-get install", "ci-setup:"),
    ("python3 -m pip install", "ci-setup:"),
    (
        "appzone-server ",
        "test:readme::operator_commands_run_as_written",
    ),
    ("APPZONE_API_KEY=... appzone ", "client-tests:cli.rs"),
    ("appzone ", "client-tests:cli.rs"),
    (
        "createdb ",
        "test:cli::backup::postgres_backup_and_restore_as_documented",
    ),
    (
        "export APPZONE_DATABASE_URL=",
        "test:cli::backup::postgres_backup_and_restore_as_documented",
    ),
    (
        "sqlite3 ",
        "test:cli::backup::sqlite_backup_and_restore_as_documented",
    ),
    (
        "appzone-server backup appzone-backup.db",
        "test:cli::backup::sqlite_backup_and_restore_as_documented",
    ),
    (
        "cp appzone-backup.db",
        "test:cli::backup::sqlite_backup_and_restore_as_documented",
    ),
    (
        "pg_dump ",
        "test:cli::backup::postgres_backup_and_restore_as_documented",
    ),
    (
        "pg_restore ",
        "test:cli::backup::postgres_backup_and_restore_as_documented",
    ),
    (
        "git clone --depth 1 https://github.com/rustsec/advisory-db",
        "not-run:",
    ),
    ("cd advisory-db && echo", "not-run:"),
    // The clouds' own CLIs need a cloud account; what they print is the shape of the fixtures
    // the zone-mapping tests store (tests/integration/fixtures/, crates/test-support/fixtures/).
    ("aws ec2 describe-availability-zones", "not-run:"),
    // Likewise their offerings (crates/test-support/fixtures/offerings/, recorded AWS data).
    ("aws ec2 describe-instance-type-offerings", "not-run:"),
];

/// The commands of the README and the guides: the lines of their `sh` blocks (comments dropped)
/// and the inline code spans that start like a command, each with the page that shows it.
fn readme_commands() -> Vec<(&'static str, String)> {
    let mut commands = Vec::new();
    let mut in_sh = false;
    let lines = DOCS
        .iter()
        .flat_map(|(page, text)| text.lines().map(move |line| (*page, line)));
    for (page, line) in lines {
        let line = line.trim_start();
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        if in_sh {
            let command = line.split(" #").next().unwrap_or("").trim();
            if !command.is_empty() && !command.starts_with('#') {
                commands.push((page, command.to_owned()));
            }
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            let looks_like_a_command = [
                "cargo ",
                "appzone-server ",
                "appzone ",
                "rustup ",
                "sudo ",
                "python3 ",
                "APPZONE_",
            ]
            .iter()
            .any(|start| span.starts_with(start))
                && span.contains(' ');
            if i % 2 == 1 && looks_like_a_command {
                commands.push((page, span.to_owned()));
            }
        }
    }
    commands
}

fn tests_of_this_binary() -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--list", "--format", "terse", "--include-ignored"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_readme_command_is_run_by_a_test_or_a_ci_step() {
    let tests = tests_of_this_binary();
    let mut unrun = Vec::new();
    let commands = readme_commands();
    assert!(commands.len() > 25, "{commands:#?}");
    for (page, command) in &commands {
        let by = RUN_BY
            .iter()
            .filter(|(prefix, _)| command.starts_with(prefix))
            .max_by_key(|(prefix, _)| prefix.len());
        let Some((_, by)) = by else {
            unrun.push(format!("{page}: {command}"));
            continue;
        };
        if let Some(test) = by.strip_prefix("test:") {
            assert!(
                tests.lines().any(|line| line.starts_with(test)),
                "{page}: {command:?} is said to be run by the test {test}, which does not exist"
            );
        } else if let Some(task) = by.strip_prefix("xtask:") {
            assert!(
                [
                    format!("    \"{task}\",\n"),
                    format!("    \"{task} "),
                    format!("[\"{task}\"]")
                ]
                .iter()
                .any(|form| XTASK.contains(form.as_str())),
                "{page}: {command:?} is said to be run by `cargo xtask {task}`, which does not \
                 exist"
            );
        }
    }
    assert!(
        unrun.is_empty(),
        "commands of the README or docs/ that no test or CI step runs (add one, and list it in \
         RUN_BY): {unrun:#?}"
    );
}

/// Every test docs/RELIABILITY.md cites as the proof of a guarantee, and every test
/// docs/OPERATING.md says exercises a procedure, exists in this binary under that name (a
/// reorganisation of the test modules once left 30 of RELIABILITY.md's names pointing at no
/// test).
#[test]
fn the_tests_the_guides_cite_exist() {
    let tests = tests_of_this_binary();
    let mut cited = Vec::new();
    for page in ["docs/RELIABILITY.md", "docs/OPERATING.md"] {
        let (_, text) = DOCS.iter().find(|(name, _)| *name == page).unwrap();
        // A test's path: lowercase words joined by `::`, in backticks, beginning with one of
        // this binary's top-level test modules (OPERATING.md also names tracing targets).
        for name in text
            .lines()
            .flat_map(|line| line.split('`').skip(1).step_by(2))
        {
            let is_path = name.contains("::")
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_:".contains(c));
            let top = name.split("::").next().unwrap_or_default();
            if is_path
                && tests
                    .lines()
                    .any(|test| test.starts_with(&format!("{top}::")))
            {
                cited.push((page, name));
            }
        }
    }
    assert!(cited.len() > 40, "{cited:#?}");
    let missing: Vec<_> = cited
        .iter()
        .filter(|(_, name)| !tests.lines().any(|test| test.contains(name)))
        .collect();
    assert!(
        missing.is_empty(),
        "tests the guides cite that this binary does not have (renamed or moved?): {missing:#?}"
    );
}

/// The filtered test command (docs/RELIABILITY.md) once failed with `unexpected argument`: its
/// test filters must be accepted by the test harness.
#[test]
fn the_filtered_test_command_is_accepted() {
    let (_, command) = readme_commands()
        .into_iter()
        .find(|(_, c)| c.starts_with("cargo test -p appzone-server --test integration"))
        .expect("the docs show a filtered test command");
    let (cargo_part, harness_args) = command.split_once(" -- ").expect("filters after --");
    assert_eq!(
        cargo_part, "cargo test -p appzone-server --test integration",
        "package and test target of this binary"
    );
    let mut list = Command::new(std::env::current_exe().unwrap());
    list.args(harness_args.split_whitespace()).arg("--list");
    let listed = stdout_of(&mut list, harness_args);
    assert!(listed.contains("reliability::") && listed.contains("security::"));
}

/// The operator block of docs/OPERATING.md, run line by line in a fresh directory with the
/// `appzone-server` this build made; `# prints: X` comments are checked.
#[test]
fn operator_commands_run_as_written() {
    let block: Vec<&str> = OPERATING
        .split("```sh\n")
        .find(|block| block.starts_with("appzone-server migrate"))
        .expect("docs/OPERATING.md's operator block starts with `appzone-server migrate`")
        .split("```")
        .next()
        .unwrap()
        .lines()
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_appzone-server"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut key_id = String::new();
    let mut profile = String::new();
    let mut ran = 0;
    for line in block {
        let (command, comment) = line
            .split_once(" #")
            .map_or((line.trim(), ""), |(c, rest)| (c.trim(), rest.trim()));
        // Optional parts are run in their shortest form; placeholders get this run's values.
        let command = command
            .replace(" [--deleted]", "")
            .replace("<KEY_ID>", &key_id)
            .replace("<ID>", &profile);
        let mut sh = Command::new("sh");
        sh.args(["-c", &command]).current_dir(dir.path());
        sh.env("PATH", &path).env_remove("APPZONE_DATABASE_URL");
        let stdout = stdout_of(&mut sh, &command);
        if let Some(expected) = comment.strip_prefix("prints: ") {
            if let Some(prefix) = expected.strip_suffix("<ULID>") {
                assert!(stdout.starts_with(prefix), "{command}: {stdout}");
            } else {
                assert_eq!(stdout.trim(), expected, "{command}");
            }
        }
        if command.starts_with("appzone-server key create") {
            key_id = stdout.trim()[4..16].to_owned();
        }
        if command.starts_with("appzone-server profile create") {
            profile = stdout.trim().to_owned();
            // `profile restore` needs a deleted profile: delete it as the API would.
            let db = dir.path().join("appzone.db");
            let deleted = Command::new("sqlite3")
                .arg(&db)
                .arg(format!(
                    "UPDATE profiles SET deleted_at = 1 WHERE id = '{profile}'"
                ))
                .status();
            assert!(
                deleted.is_ok_and(|s| s.success()),
                "sqlite3 is needed (apt-get install sqlite3)"
            );
        }
        ran += 1;
    }
    assert!(ran >= 10, "ran {ran} commands");
}
