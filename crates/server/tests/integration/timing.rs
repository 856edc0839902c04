//! API2 (broken authentication): how long a wrong key takes to refuse must not tell an attacker
//! how much of it was right.
//!
//! A wall clock cannot show that: a naive comparison of a 49-byte key differs by nanoseconds
//! with the position of the first wrong byte, far below a connection's noise, so a timing test
//! would pass with or without the property. What makes a comparison constant-time is that it
//! executes the same instructions whatever the bytes; that is what is counted here,
//! deterministically. The real server binary runs under valgrind's callgrind, answers wrong
//! keys over one keep-alive connection, and callgrind counts the instructions of every call of
//! `keys::same_secret`, through which every comparison of secret material goes, writing one
//! profile per call.

use std::path::Path;
use std::process::Command;

use appzone_test_support::raw::RawConnection;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::server_process::{acme_database, acme_key, ServerProcess};

/// The one function that compares secrets (never inlined, so callgrind sees it by name).
const COMPARISON: &str = "appzone_server::keys::same_secret";

/// Whether valgrind can run (see `found_or_skipped`).
fn valgrind_or_skip() -> bool {
    let found = Command::new("valgrind").arg("--version").output().is_ok();
    appzone_test_support::found_or_skipped(
        found,
        "valgrind is not installed (Debian: apt-get install valgrind); the comparison's \
         instructions were not counted",
    )
}

/// The instructions callgrind counted in each numbered profile `<out>.1`, `<out>.2`, ... in
/// order: one per call of the comparison.
fn per_call_counts(out: &Path) -> Vec<u64> {
    let mut counts = Vec::new();
    for n in 1.. {
        let Ok(profile) = std::fs::read_to_string(format!("{}.{n}", out.display())) else {
            break;
        };
        let total = profile
            .lines()
            .find_map(|line| line.strip_prefix("summary: "))
            .and_then(|count| count.trim().parse().ok())
            .unwrap_or_else(|| panic!("no summary line in profile {n}"));
        counts.push(total);
    }
    counts
}

#[tokio::test]
async fn api2_wrong_key_timing_does_not_depend_on_how_much_of_the_key_matches() {
    if !valgrind_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let key = acme_key(&url, "member");
    let out = dir.path().join("callgrind.out");
    let wrapper = [
        "valgrind".to_owned(),
        "--tool=callgrind".to_owned(),
        format!("--toggle-collect={COMPARISON}"),
        format!("--dump-after={COMPARISON}"),
        format!("--callgrind-out-file={}", out.display()),
    ];
    // Under callgrind the server runs tens of times slower: on a loaded machine its first
    // connection took longer than the default second the pool waits, and it exited at start-up.
    // What this test counts is instructions, not time, so the pool may wait as long as it takes.
    let serve_args = ["--db-acquire-timeout-ms", "60000"];
    let mut server = ServerProcess::start_wrapped(&wrapper, &url, &serve_args, "info").await;
    let mut connection = RawConnection::open(server.addr()).await;
    let zones = "/api/v1/providers/aws/regions/us-east-1/zones";
    // The right key first, so that its record is cached: every wrong key with its key id has
    // its digest compared with the stored one.
    assert_eq!(
        connection.request("GET", zones, Some(&key)).await.status,
        200
    );

    // Wrong keys of the same length, right up to byte `shared`: the key id is `apz_` and 12
    // characters then `_` (17 bytes), the secret the rest. Below 17 the key id is unknown, so
    // the digest is compared with a digest no key has.
    let flip = |shared: usize| -> String {
        let mut wrong = key.clone().into_bytes();
        wrong[shared] = if wrong[shared] == b'A' { b'B' } else { b'A' };
        String::from_utf8(wrong).unwrap()
    };
    let mut classes: Vec<usize> = [5, 17, 25, 33, 41, key.len() - 1]
        .iter()
        .flat_map(|shared| [*shared; 3])
        .collect();
    classes.shuffle(&mut rand::rngs::StdRng::seed_from_u64(7));
    let mut refusal = None;
    for shared in &classes {
        let answer = connection.request("GET", zones, Some(&flip(*shared))).await;
        assert_eq!(answer.status, 401, "key right up to byte {shared}");
        let refusal = refusal.get_or_insert_with(|| answer.body.clone());
        assert_eq!(&answer.body, refusal, "every wrong key gets the same body");
    }
    drop(connection);
    server.terminate().await;

    // One comparison of digests per key: the right one, then each wrong one.
    let counts = per_call_counts(&out);
    assert_eq!(
        counts.len(),
        1 + classes.len(),
        "comparisons counted; every comparison of a secret must go through {COMPARISON}"
    );
    let counted: Vec<(usize, u64)> = classes
        .iter()
        .copied()
        .zip(counts[1..].iter().copied())
        .collect();
    eprintln!("instructions per comparison of digests, by bytes right: {counted:?}");
    assert!(
        counted.iter().all(|(_, count)| *count == counted[0].1),
        "the comparison of digests costs a different number of instructions depending on how \
         many bytes of the key are right (bytes right, instructions): {counted:?}"
    );
}
