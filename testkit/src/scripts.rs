//! Running the repository's scripts (`scripts/verify-draw`, `scripts/verify-queue`) from tests:
//! their input files, and what a run printed.

use std::path::PathBuf;
use std::process::Child;
use std::sync::atomic::{AtomicU32, Ordering};

/// Files under the temp directory with names no other test or process uses; removed on drop.
pub struct TempFiles {
    prefix: &'static str,
    paths: Vec<PathBuf>,
}

impl TempFiles {
    /// Files named `fan-api-<prefix>-<pid>-<n>.json`.
    pub fn new(prefix: &'static str) -> Self {
        Self {
            prefix,
            paths: Vec::new(),
        }
    }

    pub fn write(&mut self, text: &str) -> PathBuf {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "fan-api-{}-{}-{}.json",
            self.prefix,
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, text).unwrap();
        self.paths.push(path.clone());
        path
    }
}

impl Drop for TempFiles {
    fn drop(&mut self) {
        for path in &self.paths {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What a script run printed, and its exit status.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Waits for `child` (spawned with piped stdout and stderr) and collects its output.
pub fn finish(child: Child) -> Run {
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().expect("exited"),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Runs the repository's Python script `scripts/<name>` with `args`, stdin empty.
pub fn run_python<I, A>(name: &str, args: I) -> Run
where
    I: IntoIterator<Item = A>,
    A: AsRef<std::ffi::OsStr>,
{
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(name);
    let child = std::process::Command::new("python3")
        .arg(script)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    finish(child)
}
