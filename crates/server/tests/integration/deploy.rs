//! The deployment recipe (`deploy/`: the image's Containerfile, the Kubernetes manifests and
//! the systemd unit) cannot drift from the binary: every `APPZONE_*` name it sets is one the
//! binary reads, every command line it runs parses, its values are accepted by a real `serve`,
//! its probe paths answer 200 there, and its ports are the port it listens on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::server_process::{stdout_of, ServerProcess};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The recipe's files, each with its text.
fn recipe() -> Vec<(String, String)> {
    let mut files = vec![root().join("deploy/container/Containerfile")];
    for dir in ["deploy/kubernetes", "deploy/systemd"] {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        entries.sort();
        files.extend(entries);
    }
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let name = path
                .strip_prefix(root())
                .unwrap_or(&path)
                .display()
                .to_string();
            (name, text)
        })
        .collect()
}

/// Lines without comments, trimmed.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
}

/// The `APPZONE_*` settings a file gives, with their literal values (`None` for a value taken
/// from elsewhere, such as a Kubernetes Secret): `ENV` lines of the Containerfile,
/// `Environment=` of a systemd unit, `env:` entries of a manifest.
fn settings(text: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut pending: Option<String> = None;
    for line in lines(text) {
        let assignment = line
            .strip_prefix("ENV ")
            .or_else(|| line.strip_prefix("Environment="));
        if let Some((name, value)) = assignment.and_then(|a| a.split_once('=')) {
            found.push((name.to_owned(), Some(value.trim_matches('"').to_owned())));
        } else if let Some(name) = line.strip_prefix("- name: APPZONE_") {
            if let Some(previous) = pending.take() {
                found.push((previous, None));
            }
            pending = Some(format!("APPZONE_{name}"));
        } else if let (Some(value), Some(_)) = (line.strip_prefix("value: "), &pending) {
            found.push((
                pending.take().unwrap(),
                Some(value.trim_matches('"').to_owned()),
            ));
        }
    }
    found.extend(pending.map(|name| (name, None)));
    found
}

/// The argument lists a file runs the binary with: `args:` of a manifest, `ExecStart*=` of a
/// unit, `CMD` and `HEALTHCHECK ... CMD` of the Containerfile (as JSON arrays).
fn command_lines(text: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for line in lines(text) {
        if let Some(array) = line
            .strip_prefix("args: ")
            .or_else(|| line.strip_prefix("CMD "))
            .or_else(|| line.split_once(" CMD ").map(|(_, cmd)| cmd))
        {
            let words: Vec<String> = serde_json::from_str(array)
                .unwrap_or_else(|e| panic!("not a JSON array: {array}: {e}"));
            let words = match words.first() {
                Some(first) if first.ends_with("/appzone-server") => words[1..].to_vec(),
                _ => words,
            };
            found.push(words);
        } else if let Some((_, exec)) = line.split_once("/appzone-server ") {
            if line.starts_with("ExecStart") {
                found.push(exec.split_whitespace().map(str::to_owned).collect());
            }
        }
    }
    found
}

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_appzone-server"));
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("APPZONE_")) {
        command.env_remove(name);
    }
    command
}

/// `--help` of the binary and of each of its commands, in one text.
fn all_help() -> String {
    let top = stdout_of(binary().arg("--help"), "--help");
    let mut help = top.clone();
    let commands = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        // A command's line starts two spaces in; a wrapped description, further.
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|command| *command != "help");
    for command in commands {
        help.push_str(&stdout_of(binary().args([command, "--help"]), command));
    }
    help
}

#[test]
fn every_setting_the_recipe_gives_is_one_the_binary_reads() {
    let help = all_help();
    let mut names = 0;
    for (file, text) in recipe() {
        for (name, _) in settings(&text) {
            names += 1;
            // `[env: NAME=value]`, or `[env: NAME]` where the value is hidden.
            assert!(
                help.contains(&format!("[env: {name}="))
                    || help.contains(&format!("[env: {name}]")),
                "{file}: {name} is not a setting of appzone-server (see its --help)"
            );
        }
    }
    assert!(
        names >= 10,
        "only {names} settings found: is the parser still right?"
    );
}

#[test]
fn every_command_line_the_recipe_runs_parses() {
    let mut commands = 0;
    for (file, text) in recipe() {
        for words in command_lines(&text) {
            commands += 1;
            // `--help` after the words: clap parses them, then prints help instead of running.
            let out = binary().args(&words).arg("--help").output().unwrap();
            assert!(
                out.status.success(),
                "{file}: `appzone-server {}` does not parse: {}",
                words.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // Containerfile: CMD, HEALTHCHECK; manifests: serve, migrate; unit: ExecStartPre, ExecStart.
    assert!(commands >= 6, "only {commands} command lines found");
}

/// The values the recipe sets, given to a real `serve` (on a free port and a scratch SQLite
/// file instead of the recipe's address and database): it starts, and answers the probe paths.
#[tokio::test]
async fn the_recipes_values_start_a_server_that_answers_its_probes() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("recipe.db").display());
    let mut ports = BTreeMap::new();
    let mut probes = Vec::new();
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    for (file, text) in recipe() {
        for (name, value) in settings(&text) {
            if let Some(value) = value {
                values.insert(format!("{file}: {name}"), value.clone());
            }
        }
        for line in lines(&text) {
            if let Some(port) = line
                .strip_prefix("containerPort: ")
                .or_else(|| line.strip_prefix("EXPOSE "))
            {
                ports.insert(file.clone(), port.trim().to_owned());
            }
            if let Some(path) = line.strip_prefix("path: ") {
                probes.push((file.clone(), path.to_owned()));
            }
        }
    }
    // Every port the recipe publishes is the one the image and the manifests listen on.
    for (file, listen) in values
        .iter()
        .filter(|(k, _)| k.ends_with(": APPZONE_LISTEN"))
    {
        if file.starts_with("deploy/systemd") {
            continue; // behind a proxy on the host: loopback, any port
        }
        let port = listen.rsplit_once(':').unwrap().1;
        for (published_by, published) in &ports {
            assert_eq!(
                published, port,
                "{published_by} publishes {published}; {file} listens on {listen}"
            );
        }
    }
    assert!(
        ports.len() >= 2 && probes.len() >= 2,
        "{ports:?} {probes:?}"
    );
    // One server per distinct setting; the address and database are the test's own.
    let distinct: std::collections::BTreeSet<(&str, &str)> = values
        .iter()
        .map(|(setting, value)| (setting.rsplit_once(": ").unwrap().1, value.as_str()))
        .filter(|(name, _)| !matches!(*name, "APPZONE_DATABASE_URL" | "APPZONE_LISTEN"))
        .collect();
    assert!(!distinct.is_empty());
    for (name, value) in distinct {
        let mut server = ServerProcess::start_with_env(&database, &[(name, value)], "info").await;
        for (file, path) in &probes {
            let status = reqwest::get(format!("{}{path}", server.base))
                .await
                .unwrap()
                .status();
            assert_eq!(status, 200, "{file}: probe {path} with {name}={value}");
        }
        assert!(server.terminate().await.success(), "{name}={value}");
    }
}

/// The default `--help` gives for the setting `name` (`[env: NAME=] [default: 20]`).
fn default_of(help: &str, name: &str) -> String {
    let after = help
        .split_once(&format!("[env: {name}"))
        .unwrap_or_else(|| panic!("{name} is not in --help"))
        .1;
    let value = after
        .split_once("[default: ")
        .unwrap_or_else(|| panic!("{name} has no default"))
        .1;
    value.split(']').next().unwrap().to_owned()
}

/// Kubernetes sends SIGTERM, then SIGKILL after the grace period: the period must cover the
/// server's shutdown delay (serving on while the endpoint leaves the Service) and its drain,
/// or a rollout cuts requests short. The Deployment must have a delay: without one, the
/// listener closes while the Service still routes new connections here.
#[test]
fn the_grace_period_covers_the_shutdown_delay_and_the_drain() {
    let help = all_help();
    let mut checked = 0;
    for (file, text) in recipe() {
        let Some(grace) = lines(&text)
            .find_map(|line| line.strip_prefix("terminationGracePeriodSeconds: "))
            .map(|grace| grace.trim().parse::<u64>().unwrap())
        else {
            continue;
        };
        let given: BTreeMap<String, String> = settings(&text)
            .into_iter()
            .filter_map(|(name, value)| Some((name, value?)))
            .collect();
        let seconds = |name: &str| -> u64 {
            given
                .get(name)
                .cloned()
                .unwrap_or_else(|| default_of(&help, name))
                .parse()
                .unwrap_or_else(|e| panic!("{file}: {name}: {e}"))
        };
        let delay = seconds("APPZONE_SHUTDOWN_DELAY_SECS");
        let drain = seconds("APPZONE_DRAIN_TIMEOUT_SECS");
        assert!(delay > 0, "{file}: no APPZONE_SHUTDOWN_DELAY_SECS");
        assert!(
            grace > delay + drain,
            "{file}: terminationGracePeriodSeconds {grace} does not cover the shutdown delay \
             ({delay} s) and the drain ({drain} s)"
        );
        checked += 1;
    }
    assert!(checked >= 1, "no terminationGracePeriodSeconds found");
}

/// The `appzone_*` and `process_*` names `text` mentions (the alerting rules: expressions,
/// and the names their descriptions give the reader).
fn metric_names(text: &str) -> std::collections::BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| {
            ["appzone_", "process_"]
                .iter()
                .any(|prefix| word.len() > prefix.len() && word.starts_with(prefix))
        })
        .collect()
}

/// The names a `/metrics` body in the 0.0.4 text format has: its samples' names (a histogram's
/// `_bucket`, `_sum` and `_count` included) and its families' (`# TYPE`).
fn exported_names(body: &str) -> std::collections::BTreeSet<&str> {
    body.lines()
        .filter_map(|line| match line.strip_prefix("# TYPE ") {
            Some(family) => family.split(' ').next(),
            None if line.starts_with('#') => None,
            None => line.split(['{', ' ']).next(),
        })
        .collect()
}

/// Every metric an alert (`deploy/prometheus/alerts.yml`) watches is one a real server exports,
/// so that renaming a metric fails here instead of silencing an alert; and every alert has a
/// severity, a `for:`, and a runbook in docs/OPERATING.md that names it.
#[tokio::test]
async fn every_metric_the_alerts_watch_is_exported_and_every_alert_has_its_runbook() {
    let alerts = std::fs::read_to_string(root().join("deploy/prometheus/alerts.yml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("alerts.db").display());
    let mut server = ServerProcess::start(&database, &[], "info").await;
    // An answer, for the request families' series (they start at a route's first answer).
    let listing = format!("{}/api/v1/providers", server.base);
    let status = reqwest::get(listing).await.unwrap().status();
    assert_eq!(status, 401);
    let body = reqwest::get(format!("{}/metrics", server.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(server.terminate().await.success());
    let exported = exported_names(&body);
    let watched = metric_names(&alerts);
    assert!(
        watched.len() >= 8,
        "{watched:?}: is the parser still right?"
    );
    let missing: Vec<&&str> = watched.difference(&exported).collect();
    assert!(
        missing.is_empty(),
        "deploy/prometheus/alerts.yml names {missing:?}, which the server does not export:\n{body}"
    );

    // The memory alert's limit is the Deployment's.
    let deployment =
        std::fs::read_to_string(root().join("deploy/kubernetes/deployment.yaml")).unwrap();
    let limit = deployment
        .split_once("limits:")
        .and_then(|(_, limits)| limits.split_once("memory: "))
        .and_then(|(_, memory)| memory.split_once("Mi"))
        .map(|(mebibytes, _)| mebibytes.trim())
        .expect("a memory limit in MiB in deployment.yaml");
    assert!(
        alerts.contains(&format!(
            "process_resident_memory_bytes{{job=\"appzone\"}} > 0.8 * {limit} * 1024 * 1024"
        )),
        "AppzoneMemoryNearLimit is not at 80% of the Deployment's {limit} MiB"
    );

    // Each rule: an alert name, a `for:`, a severity of `page` or `ticket`, a runbook.
    let guide = std::fs::read_to_string(root().join("docs/OPERATING.md")).unwrap();
    let section = guide
        .split_once("\n## Alerts\n")
        .expect("docs/OPERATING.md has an Alerts section (#alerts)")
        .1;
    let section = section.split("\n## ").next().unwrap();
    let rules: Vec<&str> = alerts.split("- alert: ").skip(1).collect();
    assert!(rules.len() >= 8, "only {} alerts", rules.len());
    for rule in rules {
        let name = rule.lines().next().unwrap().trim();
        assert!(rule.contains("\n        for: "), "{name}: no for:");
        assert!(
            rule.contains("severity: page") || rule.contains("severity: ticket"),
            "{name}: no severity"
        );
        for annotation in ["summary: ", "description: "] {
            assert!(rule.contains(annotation), "{name}: no {annotation}");
        }
        assert!(
            rule.contains(
                "runbook_url: https://github.com/appzone/appzone/blob/main/docs/OPERATING.md#alerts\n"
            ),
            "{name}: no runbook_url to the Alerts section of docs/OPERATING.md"
        );
        assert!(
            section.contains(&format!("`{name}`")),
            "{name} is not in the Alerts section of docs/OPERATING.md"
        );
    }
}
