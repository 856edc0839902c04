//! `.ci/source-times`, which `.ci/run` calls around `cargo xtask ci` so that a clean clone
//! reuses the workspace crates the build cache compiled, is a shell script (it must run before
//! cargo builds this program); its promises are tested here, on a scratch repository holding a
//! one-crate workspace, with cargo's own verdict on what is fresh.

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::path::{Path, PathBuf};
    use std::process::Command;

    struct Scratch {
        root: PathBuf,
    }

    impl Scratch {
        fn new(name: &str) -> Self {
            let root = std::env::temp_dir().join(format!(
                "appzone-source-times-{name}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&root);
            let origin = root.join("origin");
            std::fs::create_dir_all(origin.join("src")).unwrap();
            std::fs::write(
                origin.join("Cargo.toml"),
                "[package]\nname = \"scratch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n",
            )
            .unwrap();
            std::fs::write(origin.join("src/lib.rs"), "pub mod a;\n").unwrap();
            std::fs::write(origin.join("src/a.rs"), "pub fn one() -> u32 { 1 }\n").unwrap();
            // What a test does to find its fixtures: the build keeps the directory it was
            // compiled in.
            std::fs::write(
                origin.join("src/main.rs"),
                "fn main() { print!(\"{}\", env!(\"CARGO_MANIFEST_DIR\")); }\n",
            )
            .unwrap();
            git(&origin, &["init", "-q"]);
            commit(&origin, "first");
            Self { root }
        }

        fn origin(&self) -> PathBuf {
            self.root.join("origin")
        }

        /// Commits `src/a.rs` with a new body, the change a later run builds.
        fn change_code(&self, value: u32) {
            let body = format!("pub fn one() -> u32 {{ {value} }}\n");
            std::fs::write(self.origin().join("src/a.rs"), body).unwrap();
            commit(&self.origin(), &format!("one is {value}"));
        }

        /// A clean clone of the origin, as CI makes one, in the directory every run uses.
        fn clean_clone(&self) -> PathBuf {
            self.clean_clone_in("checkout")
        }

        /// A clean clone in a directory of its own: of a CI that clones somewhere new each
        /// time, or of a clone made while another run held the usual directory.
        fn clean_clone_in(&self, name: &str) -> PathBuf {
            let dir = self.root.join(name);
            let _ = std::fs::remove_dir_all(&dir);
            let status = Command::new("git")
                .args(["clone", "-q"])
                .arg(self.origin())
                .arg(&dir)
                .status()
                .unwrap();
            assert!(status.success());
            dir
        }

        fn script(&self, checkout: &Path, verb: &str) {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/source-times");
            let output = Command::new("bash")
                .arg(script)
                .arg(verb)
                .current_dir(checkout)
                .env("CARGO_TARGET_DIR", self.root.join("cache"))
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "source-times {verb} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }

        /// Builds the clone with the shared cache; true when cargo compiled the crate.
        fn compiled(&self, checkout: &Path) -> bool {
            let output = Command::new(env!("CARGO"))
                .args(["build", "--offline", "-v"])
                .current_dir(checkout)
                .env("CARGO_TARGET_DIR", self.root.join("cache"))
                .env_remove("RUSTC_WRAPPER")
                .env_remove("RUSTC_WORKSPACE_WRAPPER")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(output.status.success(), "{stderr}");
            stderr.contains("Compiling scratch")
        }

        /// The directory the clone's build names as its own.
        fn built_in(&self) -> PathBuf {
            let output = Command::new(self.root.join("cache/debug/scratch"))
                .output()
                .unwrap();
            assert!(output.status.success());
            PathBuf::from(String::from_utf8(output.stdout).unwrap())
        }

        /// One CI run: restore, build, and record when the run passes.
        fn run(&self, passes: bool) -> bool {
            let checkout = self.clean_clone();
            self.script(&checkout, "restore");
            let compiled = self.compiled(&checkout);
            if passes {
                self.script(&checkout, "record");
            }
            compiled
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    fn commit(dir: &Path, message: &str) {
        git(dir, &["add", "-A"]);
        git(
            dir,
            &[
                "-c",
                "user.name=test",
                "-c",
                "user.email=test@example.invalid",
                "commit",
                "-qm",
                message,
            ],
        );
    }

    #[test]
    fn a_clean_clone_of_what_the_cache_built_compiles_nothing_and_a_change_compiles_again() {
        let scratch = Scratch::new("reuse");
        assert!(scratch.run(true), "an empty cache compiles");
        assert!(
            !scratch.run(true),
            "a second clone of the same contents is fresh"
        );
        scratch.change_code(2);
        assert!(scratch.run(true), "a changed file compiles again");
        assert!(!scratch.run(true), "and is fresh in the clone after");
    }

    #[test]
    fn after_a_run_that_did_not_pass_nothing_is_taken_for_fresh() {
        let scratch = Scratch::new("failed");
        assert!(scratch.run(true));
        // A run of other contents builds them into the cache, then fails: the record of the
        // first contents must not make their clone take those builds for its own.
        scratch.change_code(3);
        assert!(scratch.run(false));
        git(&scratch.origin(), &["reset", "-q", "--hard", "HEAD~1"]);
        assert!(
            scratch.run(true),
            "the first contents compile again after a failed run of others"
        );
    }

    #[test]
    fn a_clone_made_before_another_run_built_does_not_take_that_build_for_its_own() {
        let scratch = Scratch::new("early");
        assert!(scratch.run(true));
        let early = scratch.clean_clone_in("early");
        // Other contents, cloned later, built and recorded while the early clone waited.
        scratch.change_code(4);
        assert!(scratch.run(true));
        scratch.script(&early, "restore");
        assert!(
            scratch.compiled(&early),
            "the early clone's own contents compile, though its files are older than the cache's build"
        );
    }

    #[test]
    fn a_run_that_changed_a_tracked_file_records_nothing() {
        let scratch = Scratch::new("rewritten");
        assert!(scratch.run(true));
        // A step rewrites a tracked file, the build takes it, the run passes: the clone after
        // holds the committed contents, which no tree was built from.
        let checkout = scratch.clean_clone();
        scratch.script(&checkout, "restore");
        std::fs::write(checkout.join("src/a.rs"), "pub fn one() -> u32 { 5 }\n").unwrap();
        assert!(scratch.compiled(&checkout));
        scratch.script(&checkout, "record");
        assert!(
            scratch.run(true),
            "the committed contents compile again after a run that built rewritten ones"
        );
    }

    #[test]
    fn a_change_to_the_manifests_restores_nothing() {
        let scratch = Scratch::new("key");
        assert!(scratch.run(true));
        let manifest = scratch.origin().join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(&manifest, format!("{text}# a comment\n")).unwrap();
        commit(&scratch.origin(), "manifest");
        let checkout = scratch.clean_clone();
        scratch.script(&checkout, "restore");
        let lib = std::fs::metadata(checkout.join("src/lib.rs"))
            .unwrap()
            .modified()
            .unwrap();
        let day = std::time::Duration::from_secs(86_400);
        assert!(
            lib.elapsed().unwrap() < day,
            "an unchanged file keeps today's date when the key changed"
        );
    }

    #[test]
    fn a_clone_in_another_directory_compiles_again_and_its_build_names_that_directory() {
        let scratch = Scratch::new("moved");
        assert!(scratch.run(true));
        let elsewhere = scratch.clean_clone_in("elsewhere");
        scratch.script(&elsewhere, "restore");
        assert!(
            scratch.compiled(&elsewhere),
            "the same contents in another directory compile again"
        );
        assert_eq!(
            scratch.built_in(),
            // cargo names the directory as the kernel resolves it (a temporary directory may
            // sit behind a symbolic link, as on macOS).
            elsewhere.canonicalize().unwrap(),
            "a build reused from another directory would read that directory's files"
        );
    }
}
