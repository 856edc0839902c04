//! `serve --demo`, the request log lines and `healthcheck`.

use super::*;

/// The README's first-run promise ("Two commands"): `serve --demo` prints curl lines whose
/// labelled statuses hold, and SIGTERM stops the server cleanly.
#[test]
fn serve_demo_prints_curl_lines_that_give_the_labelled_statuses() {
    let cli = Cli::new();
    let Demo {
        mut child,
        mut lines,
        expectations,
        ..
    } = Demo::start(&cli, "info");
    let statuses: Vec<u16> = expectations.iter().map(|(status, _)| *status).collect();
    assert_eq!(statuses, [200, 204, 403, 404, 200]);

    for (expected, curl) in &expectations {
        assert_eq!(Demo::send(curl), *expected, "{curl}");
    }
    Demo::stop(&mut child);

    // One log line per request, with route template, status and key id, and no key material.
    let rest: Vec<String> = lines.by_ref().map_while(Result::ok).collect();
    let requests: Vec<&String> = rest
        .iter()
        .filter(|l| l.contains("appzone::request"))
        .collect();
    assert!(requests.len() >= 4, "request log lines: {rest:#?}");
    let zones = requests
        .iter()
        .find(|l| l.contains("route=\"/api/v1/providers/{providerId}/regions/{regionId}/zones\""));
    let zones = zones.unwrap_or_else(|| panic!("no zone listing line in {requests:#?}"));
    assert!(
        zones.contains("status=200") && zones.contains("key_id=") && zones.contains("request_id="),
        "{zones}"
    );
    assert!(
        !zones.contains('\u{1b}'),
        "no colour codes in a pipe: {zones}"
    );
    // stderr, from the start, is the log: it never carries a key (the demo's go to stdout).
    for (_, curl) in &expectations {
        let key = Demo::key(curl);
        for line in &rest {
            assert!(!line.contains(&key[17..]), "key secret in log line: {line}");
            assert!(!line.starts_with("curl "), "a curl line on stderr: {line}");
        }
    }
}

/// A second `serve --demo` says that the first run's keys, and so its curl lines, stopped
/// working, and its 204 line works again (the example profile the first run's deleted is
/// restored); it listens on a host name as well as on an address.
#[test]
fn a_second_demo_run_says_it_revoked_the_first_runs_keys() {
    let cli = Cli::new();
    let mut first = Demo::start_on(&cli, "info", "localhost:0");
    assert!(
        !first.preamble.iter().any(|line| line.contains("revoked")),
        "{:#?}",
        first.preamble
    );
    let (status, zones) = first.expectations[0].clone();
    assert_eq!(Demo::send(&zones), status, "served on localhost: {zones}");
    assert_eq!(Demo::send(&first.expectations[1].1), 204);
    Demo::stop(&mut first.child);

    let mut second = Demo::start(&cli, "info");
    assert!(
        second.preamble.iter().any(|line| line
            == "revoked the 2 keys of the previous --demo run: its curl lines now answer 401"),
        "{:#?}",
        second.preamble
    );
    let (status, _) = &second.expectations[0];
    assert_eq!(Demo::send(&second.expectations[0].1), *status);
    // The 204 line deletes the document's example profile: the first run's deleted it, and
    // the second run restored it, so its line answers 204 again.
    for run in [&first, &second] {
        let (status, delete) = &run.expectations[1];
        assert_eq!(*status, 204);
        assert!(
            delete.ends_with(&format!(
                "/{}",
                appzone_contract::openapi::EXAMPLE_PROFILE_ID
            )),
            "{delete}"
        );
    }
    assert_eq!(Demo::send(&second.expectations[1].1), 204);
    let stale = zones.replace(
        zones.rsplit_once(' ').unwrap().1,
        second.expectations[0].1.rsplit_once(' ').unwrap().1,
    );
    assert_eq!(Demo::send(&stale), 401, "the first run's key is revoked");
    Demo::stop(&mut second.child);
}

/// `serve --demo` running: its labelled curl lines (stdout), and its log (stderr) to read.
struct Demo {
    child: std::process::Child,
    /// The demo's stdout, kept open while the server runs (as a terminal would be).
    _stdout: std::io::Lines<BufReader<std::process::ChildStdout>>,
    lines: std::io::Lines<BufReader<std::process::ChildStderr>>,
    /// The lines before the first curl line.
    preamble: Vec<String>,
    /// (status the line is labelled with, the curl command line after `curl `)
    expectations: Vec<(u16, String)>,
}

impl Demo {
    fn start(cli: &Cli, log_filter: &str) -> Self {
        Self::start_on(cli, log_filter, "127.0.0.1:0")
    }

    fn start_on(cli: &Cli, log_filter: &str, listen: &str) -> Self {
        Self::start_with(cli, log_filter, listen, &[])
    }

    /// [`Self::start_on`] with these `APPZONE_*` settings in the environment.
    fn start_with(cli: &Cli, log_filter: &str, listen: &str, env: &[(&str, &str)]) -> Self {
        let mut child = cli
            .command()
            .args(["serve", "--demo", "--listen", listen])
            .env("APPZONE_LOG", log_filter)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The demo's lines come on stdout; stderr carries only the log.
        let stdout = child.stdout.take().unwrap();
        let mut demo_lines = BufReader::new(stdout).lines();
        let stderr = child.stderr.take().unwrap();
        let lines = BufReader::new(stderr).lines();
        let mut expectations = Vec::new();
        let mut preamble = Vec::new();
        let mut label = None;
        while let Some(Ok(line)) = demo_lines.next() {
            if expectations.is_empty() {
                preamble.push(line.clone());
            }
            if let Some(rest) = line.strip_prefix("# ") {
                label = rest.split(':').next().and_then(|s| s.parse::<u16>().ok());
            } else if let Some(curl) = line.strip_prefix("curl ") {
                expectations.push((
                    label.take().expect("each curl line is labelled"),
                    curl.to_owned(),
                ));
                if expectations.len() == 5 {
                    break;
                }
            }
        }
        assert_eq!(expectations.len(), 5, "demo output: {preamble:#?}");
        Self {
            child,
            _stdout: demo_lines,
            lines,
            preamble,
            expectations,
        }
    }

    /// The API key a printed curl line sends.
    fn key(curl: &str) -> &str {
        curl.split("X-API-KEY: ")
            .nth(1)
            .unwrap()
            .split('\'')
            .next()
            .unwrap()
    }

    /// Sends what a printed curl line sends; the status.
    fn send(curl: &str) -> u16 {
        let words: Vec<&str> = curl.split_whitespace().collect();
        let url = words.last().unwrap().trim_matches('\'');
        let key = Demo::key(curl);
        let method = if curl.contains("-X DELETE") {
            reqwest::Method::DELETE
        } else {
            reqwest::Method::GET
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            reqwest::Client::new()
                .request(method, url)
                .header("X-API-KEY", key)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    }

    /// SIGTERM, then waits (bounded) for a clean exit.
    fn stop(child: &mut std::process::Child) {
        crate::server_process::sigterm(child.id());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "server did not stop after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "exit status after SIGTERM: {status}");
    }
}

/// Successful requests' lines are written by a fast path, not as `tracing` events
/// (`logging::request`): the log filter must still decide, per target and level, in the text
/// format the binary uses by default.
#[test]
fn request_lines_follow_the_log_filter_in_the_text_format() {
    let cli = Cli::new();
    let Demo {
        mut child,
        lines,
        expectations,
        ..
    } = Demo::start(&cli, "info,appzone::request=warn");
    for (expected, curl) in &expectations {
        assert_eq!(Demo::send(curl), *expected, "{curl}");
    }
    Demo::stop(&mut child);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let requests: Vec<&String> = rest
        .iter()
        .filter(|l| l.contains("appzone::request"))
        .collect();
    // Answers without an internal detail (all four here) are INFO lines: filtered out.
    assert!(requests.is_empty(), "{requests:#?}");
    // The INFO lines of other targets still pass: the server's own start and stop lines.
    assert!(
        rest.iter()
            .any(|l| l.contains("INFO") && l.contains("drain")),
        "{rest:#?}"
    );
}

/// Request lines are buffered per thread: under concurrent load every request still gets
/// exactly one whole line by the time the server has stopped.
#[test]
fn every_request_gets_one_whole_log_line_under_concurrent_load() {
    const REQUESTS: usize = 400;
    let cli = Cli::new();
    let Demo {
        mut child,
        lines,
        expectations,
        ..
    } = Demo::start_with(
        &cli,
        "info",
        "127.0.0.1:0",
        // The requests all go at once, each on a connection of its own from 127.0.0.1: more
        // than one address may open by default.
        &[("APPZONE_MAX_CONNECTIONS_PER_ADDRESS", "1024")],
    );
    let (_, listing) = expectations
        .iter()
        .find(|(status, curl)| *status == 200 && !curl.contains("DELETE"))
        .expect("the demo prints a listing");
    let url = listing.split_whitespace().last().unwrap().to_owned();
    let key = Demo::key(listing).to_owned();
    // Read the log while it is written: a full pipe would block the server's writes.
    let log = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<String>>());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        let sends = (0..REQUESTS).map(|i| {
            let (http, url, key) = (http.clone(), url.clone(), key.clone());
            async move {
                let status = http
                    .get(&url)
                    .header("X-API-KEY", key)
                    .header("X-Request-Id", format!("load-{i}"))
                    .send()
                    .await
                    .unwrap()
                    .status();
                assert_eq!(status, 200);
            }
        });
        futures_util::future::join_all(sends).await;
    });
    Demo::stop(&mut child);
    let rest = log.join().unwrap();
    let mut seen = vec![0; REQUESTS];
    for line in rest.iter().filter(|l| l.contains("request_id=\"load-")) {
        assert!(
            line.starts_with("20")
                && line.contains(" INFO appzone::request: request method=GET ")
                && line.ends_with('"'),
            "not one whole line: {line:?}"
        );
        let id = line.split("request_id=\"load-").nth(1).unwrap();
        let n: usize = id[..id.find('"').unwrap()].parse().unwrap();
        seen[n] += 1;
    }
    let wrong: Vec<(usize, usize)> = seen
        .iter()
        .enumerate()
        .filter(|(_, count)| **count != 1)
        .map(|(i, count)| (i, *count))
        .collect();
    assert!(
        wrong.is_empty(),
        "requests without exactly one line: {wrong:?}"
    );
}

#[tokio::test]
async fn healthcheck_exits_0_on_a_200_from_the_local_server_and_1_with_one_line_otherwise() {
    let served = Cli::new();
    let database = format!(
        "sqlite://{}",
        served.dir.path().join("appzone.db").display()
    );
    let mut server = ServerProcess::start(&database, &[], "info").await;
    let port = server.addr().rsplit_once(':').unwrap().1.to_owned();
    // Run where no database is: the health check must not open (or create) one.
    let cli = Cli::empty();
    let wildcard = format!("0.0.0.0:{port}");
    assert_eq!(cli.ok(&["healthcheck", "--listen", &wildcard]), "");
    assert_eq!(
        cli.ok(&["healthcheck", "--listen", &wildcard, "--ready"]),
        ""
    );
    let from_env = cli
        .command()
        .env("APPZONE_LISTEN", &wildcard)
        .arg("healthcheck")
        .output()
        .unwrap();
    assert!(from_env.status.success(), "{from_env:?}");
    assert!(!cli.dir.path().join("appzone.db").exists());

    assert!(server.terminate().await.success());
    let error = cli.fails(&["healthcheck", "--listen", &wildcard, "--timeout-secs", "1"]);
    assert!(
        error.starts_with(&format!(
            "error: cannot reach http://127.0.0.1:{port}/healthz"
        )),
        "{error}"
    );
    cli.refused(&["healthcheck", "--listen", "nowhere"]);
    cli.refused(&["healthcheck", "--timeout-secs", "0"]);
}
