//! What CI keeps between runs outside the build cache, each thing keyed by its own inputs: the
//! registry packages the tasks run (the npm projects of the spec lint, the generated clients and
//! the browser test, and the Python venv of the generated Python client) by their lock files,
//! and what is built from a release (the old clients' scenarios, the rustdoc JSON semver-checks
//! compares with) by the release's commit and the toolchain.
//!
//! `.ci/run`'s build cache is keyed by `Cargo.lock` and rustc, and emptied when either changes.
//! None of these depends on `Cargo.lock` or on the tree under test, so they stay across such a
//! change, as a hosted CI caches npm and pip packages by their lock files apart from the Rust
//! build. Where: `$APPZONE_KEPT_DIR`, else `$XDG_CACHE_HOME/appzone-kept`, else
//! `$HOME/.cache/appzone-kept`. A directory is used only once it has been filled (a stamp
//! written last, holding the inputs), it is filled under a file lock (two runs on one machine
//! never fill one directory at once), and filling a name under new inputs removes that name's
//! older directories.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::process::{path_arg, run_bounded, stdout_of};

/// The stamp a directory gets once filled: the inputs it was filled from.
const STAMP: &str = ".appzone-filled";

/// Where the kept directories are.
pub(crate) fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("APPZONE_KEPT_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")));
    match cache {
        Some(cache) => cache.join("appzone-kept"),
        // No home at all: inside the build directory, where the build cache empties it.
        None => crate::target_dir().join("kept"),
    }
}

/// The directory of `name` for `inputs` (a lock file's text, say), after `fill` has filled it,
/// once: later calls with the same inputs find it filled.
pub(crate) fn filled(
    name: &str,
    inputs: &str,
    fill: impl FnOnce(&Path) -> Result<()>,
) -> Result<PathBuf> {
    filled_in(&dir(), name, inputs, fill)
}

fn filled_in(
    root: &Path,
    name: &str,
    inputs: &str,
    fill: impl FnOnce(&Path) -> Result<()>,
) -> Result<PathBuf> {
    std::fs::create_dir_all(root).with_context(|| format!("cannot create {}", root.display()))?;
    let key = format!("{name}-{:016x}", fnv1a(inputs.as_bytes()));
    let entry = root.join(&key);
    let stamp = entry.join(STAMP);
    let guard = File::create(root.join(format!("{name}.lock"))).with_context(|| {
        format!(
            "cannot create the lock file of {name} in {}",
            root.display()
        )
    })?;
    guard
        .lock()
        .with_context(|| format!("cannot lock {name}'s directory"))?;
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(inputs) {
        // What is there was not finished (or is other inputs', by chance of the hash): start
        // over.
        crate::fresh_dir(&entry)?;
        eprintln!("kept: filling {}", entry.display());
        fill(&entry).with_context(|| format!("cannot fill {}", entry.display()))?;
        std::fs::write(&stamp, inputs)
            .with_context(|| format!("cannot write {}", stamp.display()))?;
        remove_older(root, name, &key);
    } else {
        eprintln!("kept: {name} from {} (the same inputs)", entry.display());
    }
    Ok(entry)
}

/// Copies `files` from `source` into `dir` and gives it the packages of its lock file, installed
/// once per lock file outside the build cache (this module) and hard-linked into
/// `dir/node_modules`. `source` may be `dir` itself, with no files to copy.
pub(crate) fn npm_project(source: &Path, dir: &Path, files: &[&str]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for file in files {
        std::fs::copy(source.join(file), dir.join(file))
            .with_context(|| format!("cannot copy {}", path_arg(&source.join(file))))?;
    }
    let lock = std::fs::read_to_string(dir.join("package-lock.json"))
        .with_context(|| format!("no package-lock.json in {}", dir.display()))?;
    let project = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let installed = filled(&format!("npm-{project}"), &lock, |entry| {
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(dir.join(file), entry.join(file))
                .with_context(|| format!("cannot copy {file} to {}", entry.display()))?;
        }
        run_bounded(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(entry),
            Duration::from_secs(600),
        )
    })?;
    // A copy of hard links (no bytes copied): a link to the kept directory would make tools
    // that look for the project's files from where their own code really is (`openapi-ts`
    // reads the project's tsconfig) look in the kept directory instead.
    let modules = dir.join("node_modules");
    match std::fs::symlink_metadata(&modules) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&modules),
        Ok(_) => std::fs::remove_file(&modules),
        Err(_) => Ok(()),
    }
    .with_context(|| format!("cannot replace {}", modules.display()))?;
    let copy = |how: &str| {
        run_bounded(
            Command::new("cp")
                .arg(how)
                .arg(installed.join("node_modules"))
                .arg(&modules),
            Duration::from_secs(300),
        )
    };
    // Across file systems hard links cannot be made: a copy then.
    copy("-al").or_else(|_| {
        let _ = std::fs::remove_dir_all(&modules);
        copy("-a")
    })
}

/// `rustc -vV` of the toolchain the tasks build with (the `rustc` beside `$CARGO`, else the
/// one on `PATH`): part of the inputs of whatever is built from a release.
pub(crate) fn toolchain() -> Result<String> {
    stdout_of(
        Command::new(crate::process::toolchain_program("rustc")).arg("-vV"),
        crate::process::PROBE_TIMEOUT,
    )
}

/// Removes `name`'s directories other than `keep` (filled from older inputs).
fn remove_older(root: &Path, name: &str, keep: &str) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let prefix = format!("{name}-");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_older = name != keep
            && name.strip_prefix(&prefix).is_some_and(|hash| {
                hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())
            });
        if is_older && entry.path().is_dir() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// 64-bit FNV-1a: a name for the inputs that stays the same across Rust releases (std's
/// hashers promise no such thing).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{filled_in, fnv1a};

    #[test]
    fn a_directory_is_filled_once_per_inputs_and_older_ones_go() {
        let root = std::env::temp_dir().join(format!("appzone-kept-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let fills = std::cell::Cell::new(0);
        let fill = |dir: &std::path::Path| {
            fills.set(fills.get() + 1);
            std::fs::write(dir.join("made"), "x")?;
            Ok(())
        };
        let first = filled_in(&root, "npm-x", "lock 1", fill).unwrap();
        assert_eq!(filled_in(&root, "npm-x", "lock 1", fill).unwrap(), first);
        assert_eq!(fills.get(), 1, "the same inputs fill once");
        // A fill that fails leaves nothing that passes for filled.
        assert!(filled_in(&root, "npm-x", "lock 2", |_| anyhow::bail!("no network")).is_err());
        assert!(
            first.join("made").is_file(),
            "a failed fill leaves the older one"
        );
        let second = filled_in(&root, "npm-x", "lock 2", fill).unwrap();
        assert_eq!(fills.get(), 2, "a failed fill is tried again");
        assert_ne!(first, second);
        assert!(second.join("made").is_file());
        assert!(
            !first.exists(),
            "filling under new inputs removes the older directory"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn inputs_are_named_by_a_hash_that_does_not_change() {
        // FNV-1a's published test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
