//! `cargo xtask image`: the container image, and with `--check` the proof that it works.
//!
//! The image is `deploy/container/Containerfile` over the static `appzone-server` of the shared
//! release build (build.rs: musl where installed, else static-pie glibc), stripped into the
//! build context `target/image/context`.
//!
//! `--check` runs what a platform team would, with podman, against the image just built:
//!
//! 1. one container on a named volume with a read-only root filesystem and a published port:
//!    the time to a 200 on `/healthz`, the image's own health check, an organization, key and
//!    profile provisioned through `podman exec`, zones listed and the profile deleted through the
//!    port;
//! 2. `podman stop` (SIGTERM): exit code 0 and the drain in the log;
//! 3. a new container on the same volume: the delete persisted;
//! 4. with `APPZONE_TEST_POSTGRES_URL`: the migration run as its own container (the Kubernetes
//!    Job's step), then two replicas on one scratch database behave as one service.
//!
//! Podman runs with the `containers.conf` in `CONTAINERS_CONF` if set, else with one written to
//! `target/image/` that sets ulimits within this kind of machine's hard limits and the runc
//! runtime when it is installed (crun fails on some VMs' cgroup layout). Without podman the
//! check is skipped with a notice; under CI that fails. Containers, volumes and the scratch
//! database are removed on the way out, failed or not.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use appzone_contract::{headers, paths, ErrorBody, ErrorCode, ZoneList};
use reqwest::Method;

use crate::demo_server::ScratchPostgres;
use crate::http::free_port;
use crate::process::{output, run, skip, stdout_of, succeeds, PROBE_TIMEOUT};

/// Options of `cargo xtask image`.
#[derive(Debug, clap::Args)]
pub struct ImageArgs {
    /// Also run the image as a platform would (volume, operator commands, restart,
    /// two replicas on PostgreSQL) and report sizes and timings
    #[arg(long)]
    check: bool,
    /// Image name; tagged with the server's version and `latest`
    #[arg(long, default_value = "localhost/appzone-server")]
    name: String,
}

impl ImageArgs {
    /// `--check` with the default name, as `cargo xtask ci` runs it.
    pub fn check() -> Self {
        Self {
            check: true,
            name: "localhost/appzone-server".to_owned(),
        }
    }
}

/// Building the image (the binary is built before) and one podman command of the check.
const PODMAN_TIMEOUT: Duration = Duration::from_secs(300);
/// From `podman run` to a 200 on `/healthz`.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// One request of the check to a container.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

pub fn run_task(args: ImageArgs) -> Result<()> {
    if !succeeds(Command::new("podman").arg("--version")) {
        let notice = "image: SKIPPED (podman is not installed; Debian/Ubuntu: `apt-get install \
                      podman runc`)";
        if args.check {
            return skip(notice);
        }
        bail!("podman is needed to build the image (Debian/Ubuntu: `apt-get install podman runc`)");
    }
    let work = crate::target_dir().join("image");
    let release = crate::build::release()?;
    let binary = release.server();
    let size = std::fs::metadata(&binary)
        .with_context(|| format!("no binary at {}", binary.display()))?
        .len();
    eprintln!(
        "image: static server for {}: {} before stripping",
        release.target,
        megabytes(size)
    );
    let image = build_image(&work, &binary, &args.name)?;
    if args.check {
        check(&work, &image)?;
    }
    Ok(())
}

/// Builds the image from `deploy/container` and `binary`; returns `name:version`.
fn build_image(work: &Path, binary: &Path, name: &str) -> Result<String> {
    let context = work.join("context");
    crate::fresh_dir(&context)?;
    let source = crate::root().join("deploy").join("container");
    for file in [
        "Containerfile",
        "rootfs/etc/passwd",
        "rootfs/etc/group",
        "rootfs/data/.keep",
    ] {
        let to = context.join(file);
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::copy(source.join(file), &to)
            .with_context(|| format!("cannot copy deploy/container/{file}"))?;
    }
    // Stripped into the context rather than built stripped: the build stays the one the
    // other tasks share (a changed profile would rebuild every crate).
    run(Command::new("strip")
        .arg("--strip-all")
        .arg("-o")
        .arg(context.join("appzone-server"))
        .arg(binary))?;
    let version = stdout_of(Command::new(binary).arg("--version"), PROBE_TIMEOUT)?;
    let version = version.split_whitespace().last().context("no version")?;
    let image = format!("{name}:{version}");
    // The docker format keeps HEALTHCHECK (the OCI format has no field for it).
    let started = Instant::now();
    run(podman(work)
        .args(["build", "--format", "docker", "-t", &image])
        .args(["-t", &format!("{name}:latest"), "-f"])
        .arg(context.join("Containerfile"))
        .arg(&context))?;
    let size: u64 = podman_out(work, &["image", "inspect", "--format", "{{.Size}}", &image])?
        .trim()
        .parse()
        .context("podman image inspect gave no size")?;
    eprintln!(
        "image: {image}: {} ({:.1} s to build from the binary)",
        megabytes(size),
        started.elapsed().as_secs_f64()
    );
    Ok(image)
}

/// What the check started, removed on drop whatever happened.
struct Scratch<'w> {
    work: &'w Path,
    containers: Vec<String>,
    volumes: Vec<String>,
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        for container in &self.containers {
            let _ = output(
                podman(self.work).args(["rm", "-f", "-t", "0", container]),
                PODMAN_TIMEOUT,
            );
        }
        for volume in &self.volumes {
            let _ = output(
                podman(self.work).args(["volume", "rm", "-f", volume]),
                PODMAN_TIMEOUT,
            );
        }
    }
}

fn check(work: &Path, image: &str) -> Result<()> {
    let tag = format!("appzone-check-{}", std::process::id());
    let volume = format!("{tag}-data");
    let mut scratch = Scratch {
        work,
        containers: Vec::new(),
        volumes: vec![volume.clone()],
    };
    let mut report = Vec::new();

    // 1. One container on a named volume, root filesystem read-only, no /tmp at all.
    let first = format!("{tag}-1");
    let port = free_port()?.port();
    let volume_mount = format!("{volume}:/data");
    let started = start(
        &mut scratch,
        &first,
        image,
        &[
            "--read-only",
            "--read-only-tmpfs=false",
            "-v",
            &volume_mount,
        ],
        Some(port),
        &[],
    )?;
    let base = format!("http://127.0.0.1:{port}");
    let ready_in = started + wait_healthy(&base)?;
    report.push(format!(
        "SQLite on a named volume, read-only root filesystem: 200 on /healthz {:.2} s after \
         `podman run` started ({:.2} s of it in `podman run` itself)",
        ready_in.as_secs_f64(),
        started.as_secs_f64()
    ));
    run(podman(work).args(["healthcheck", "run", &first]))?;
    let (key, profile) = provision(work, &first)?;
    let zones = list_zones(&base, &key)?;
    delete_profile(&base, &key, &profile, 204)?;
    report.push(format!(
        "listed {zones} zones of aws/us-east-1 and deleted {profile} through 127.0.0.1:{port}"
    ));

    // 2. SIGTERM: drained, exit code 0.
    report.push(stop(work, &first)?);

    // 3. A new container on the same volume: the delete persisted.
    let second = format!("{tag}-2");
    let port = free_port()?.port();
    start(
        &mut scratch,
        &second,
        image,
        &["--read-only", "-v", &volume_mount],
        Some(port),
        &[],
    )?;
    let base = format!("http://127.0.0.1:{port}");
    wait_healthy(&base)?;
    delete_profile(&base, &key, &profile, 404)
        .context("the delete did not persist across a restart on the same volume")?;
    list_zones(&base, &key)?;
    report.push(format!(
        "restarted on the same volume: the key still works and {profile} is still deleted (404)"
    ));
    report.push(stop(work, &second)?);

    // 4. Two replicas on one PostgreSQL database.
    match std::env::var("APPZONE_TEST_POSTGRES_URL") {
        Ok(admin) if !admin.is_empty() => {
            report.extend(two_replicas(&mut scratch, image, &admin, &tag)?);
        }
        _ => skip(
            "image: SKIPPED the two replicas on PostgreSQL (set APPZONE_TEST_POSTGRES_URL, e.g. \
             postgres://postgres@127.0.0.1:5432/test)",
        )?,
    }
    drop(scratch);
    println!("image check: all held");
    for line in report {
        println!("  {line}");
    }
    Ok(())
}

/// The machine's PostgreSQL is reached on the host's loopback (`--network host`), as a
/// database on another host would be by its address.
fn two_replicas(
    scratch: &mut Scratch<'_>,
    image: &str,
    admin_url: &str,
    tag: &str,
) -> Result<Vec<String>> {
    let work = scratch.work;
    let database = ScratchPostgres::create(admin_url, "image")?;
    let url = format!("APPZONE_DATABASE_URL={}", database.url);
    let mut report = Vec::new();
    // The migration as its own step, before any replica starts (the Kubernetes Job).
    let migrated = Instant::now();
    run(podman(work)
        .args("run --rm --network host -e".split(' '))
        .args([&url, image, "migrate"]))?;
    report.push(format!(
        "PostgreSQL: `migrate` in its own container took {:.2} s",
        migrated.elapsed().as_secs_f64()
    ));
    let mut bases = Vec::new();
    for replica in ["a", "b"] {
        let name = format!("{tag}-pg-{replica}");
        let port = free_port()?.port();
        let listen = format!("APPZONE_LISTEN=127.0.0.1:{port}");
        start(
            scratch,
            &name,
            image,
            &["--read-only", "--network", "host"],
            None,
            &[&url, &listen],
        )?;
        let base = format!("http://127.0.0.1:{port}");
        wait_healthy(&base)?;
        bases.push((name, base));
    }
    let (key, profile) = provision(work, &bases[0].0)?;
    delete_profile(&bases[0].1, &key, &profile, 204)?;
    delete_profile(&bases[1].1, &key, &profile, 404)
        .context("replica b did not see replica a's delete")?;
    let zones = list_zones(&bases[1].1, &key)?;
    report.push(format!(
        "two replicas: a key and profile made through replica a work on b; deleted {profile} \
         through a (204), then b answered 404; b listed {zones} zones"
    ));
    for (name, _) in &bases {
        report.push(stop(work, name)?);
    }
    drop(database);
    Ok(report)
}

/// `podman run -d` of `image` as `name`; returns how long `podman run` took.
fn start(
    scratch: &mut Scratch<'_>,
    name: &str,
    image: &str,
    options: &[&str],
    port: Option<u16>,
    env: &[&str],
) -> Result<Duration> {
    let mut command = podman(scratch.work);
    // The image's HEALTHCHECK is run by hand below (`podman healthcheck run`): no interval,
    // because podman schedules periodic checks with systemd timers, absent on some hosts.
    command
        .args(["run", "-d", "--name", name, "--stop-timeout", "30"])
        .args(["--health-interval", "0"])
        .args(options);
    if let Some(port) = port {
        command.args(["-p", &format!("127.0.0.1:{port}:8080")]);
    }
    for setting in env {
        command.args(["-e", setting]);
    }
    scratch.containers.push(name.to_owned());
    let started = Instant::now();
    run(command.arg(image))?;
    Ok(started.elapsed())
}

/// An organization, an admin key and a profile, made with the operator CLI inside `container`.
fn provision(work: &Path, container: &str) -> Result<(String, String)> {
    // The operator command `line` (words between single spaces).
    let exec = |line: &str| -> Result<String> {
        let mut all = vec!["exec", container, "/appzone-server"];
        all.extend(line.split(' '));
        Ok(podman_out(work, &all)?.trim().to_owned())
    };
    exec("org create acme --name Acme")?;
    let key = exec("key create --org acme --role admin --name check")?;
    let profile = exec("profile create --org acme --name checkout")?;
    Ok((key, profile))
}

/// `podman stop` (SIGTERM), then the exit code and the log's drain line; a line for the report.
fn stop(work: &Path, container: &str) -> Result<String> {
    let started = Instant::now();
    run(podman(work).args(["stop", container]))?;
    let took = started.elapsed();
    let code = podman_out(
        work,
        &["inspect", "--format", "{{.State.ExitCode}}", container],
    )?;
    ensure!(
        code.trim() == "0",
        "{container} exited with {} after SIGTERM",
        code.trim()
    );
    let logs = output(podman(work).args(["logs", container]), PODMAN_TIMEOUT)?;
    ensure!(
        logs.stderr.contains("all connections drained")
            || logs.stdout.contains("all connections drained"),
        "{container}: no drain in its log: {}",
        logs.stderr
    );
    Ok(format!(
        "{container}: SIGTERM, drained, exit code 0 ({:.2} s)",
        took.as_secs_f64()
    ))
}

/// Polls `/healthz` until it answers 200; how long that took.
fn wait_healthy(base: &str) -> Result<Duration> {
    let started = Instant::now();
    let url = format!("{base}/healthz");
    loop {
        let answer = crate::http::send(Method::GET, &url, &[], None, Duration::from_secs(1));
        if answer.is_ok_and(|a| a.status == 200) {
            return Ok(started.elapsed());
        }
        if started.elapsed() > START_TIMEOUT {
            bail!("no 200 from {url} within {} s", START_TIMEOUT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One request of the check, with `key` in `X-API-KEY`.
fn keyed(method: Method, url: &str, key: &str) -> Result<crate::http::Answer> {
    let name = headers::API_KEY;
    crate::http::send(method, url, &[(name.as_str(), key)], None, REQUEST_TIMEOUT)
}

/// How many zones `base` lists for aws/us-east-1 with `key`: a 200 whose `data` is not empty.
fn list_zones(base: &str, key: &str) -> Result<usize> {
    let provider = "aws".parse().context("aws is a provider id")?;
    let region = "us-east-1".parse().context("us-east-1 is a region id")?;
    let url = format!("{base}{}", paths::list_zones(&provider, &region));
    let answer = keyed(Method::GET, &url, key)?;
    ensure!(answer.status == 200, "GET {url}: {}", answer.status);
    let zones: ZoneList = serde_json::from_slice(&answer.body)
        .with_context(|| format!("GET {url}: not a zone list"))?;
    ensure!(!zones.data.is_empty(), "no zones for aws/us-east-1");
    Ok(zones.data.len())
}

/// A `DELETE` of `profile` on `base` with `key`, answered with `want`: 204, or 404
/// `profile_not_found` for a profile deleted before.
fn delete_profile(base: &str, key: &str, profile: &str, want: u16) -> Result<()> {
    let profile = profile
        .parse()
        .with_context(|| format!("{profile:?} is no profile id"))?;
    let url = format!("{base}{}", paths::delete_profile(&profile));
    let answer = keyed(Method::DELETE, &url, key)?;
    let code = serde_json::from_slice::<ErrorBody>(&answer.body).ok();
    let code = code.map(|body| body.error_code);
    let expected = (want == 404).then_some(ErrorCode::ProfileNotFound);
    ensure!(
        answer.status == want && code == expected,
        "DELETE {url}: {} {code:?}, want {want} {expected:?}",
        answer.status
    );
    Ok(())
}

fn podman_out(work: &Path, args: &[&str]) -> Result<String> {
    stdout_of(podman(work).args(args), PODMAN_TIMEOUT)
}

/// podman with this machine's containers.conf (see the module docs), written once per run.
fn podman(work: &Path) -> Command {
    static CONF: OnceLock<Option<PathBuf>> = OnceLock::new();
    let conf = CONF.get_or_init(|| {
        if std::env::var_os("CONTAINERS_CONF").is_some() {
            return None;
        }
        let conf = work.join("containers.conf");
        let runtime = if succeeds(Command::new("runc").arg("--version")) {
            "\n[engine]\nruntime = \"runc\"\n"
        } else {
            ""
        };
        let text = format!(
            "# Written by `cargo xtask image`.\n[containers]\ndefault_ulimits = [\n  \
             \"nofile=20000:20000\",\n  \"nproc=32768:32768\",\n]\n{runtime}"
        );
        let written = std::fs::create_dir_all(work).and_then(|()| std::fs::write(&conf, text));
        written.is_ok().then_some(conf)
    });
    let mut command = Command::new("podman");
    if let Some(conf) = conf {
        command.env("CONTAINERS_CONF", conf);
    }
    command
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB ({bytes} bytes)", bytes as f64 / 1e6)
}
