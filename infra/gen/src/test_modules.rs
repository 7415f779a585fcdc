//! Each crate's one test binary's modules (`tests/main.rs`, the region `the test modules`):
//! every `tests/<name>.rs` and `tests/<name>/mod.rs` is a module, so that a test file written
//! is a test run (a file no `mod` line names is not even compiled, and nothing says so).

use std::fmt::Write;
use std::path::Path;

/// The test directories of the crates with integration tests.
pub const DIRECTORIES: [&str; 4] = [
    "crates/api/tests",
    "functions/tests",
    "infra/local-api/tests",
    "infra/ops/tests",
];

pub const REGION: &str = "the test modules";

/// The `mod` lines of `directory` (under `root`), sorted.
pub fn modules(root: &Path, directory: &str) -> Result<String, String> {
    let mut names = Vec::new();
    for name in crate::file_names(&root.join(directory))? {
        if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "main" {
                names.push(stem.to_owned());
            }
        } else if root.join(directory).join(&name).join("mod.rs").is_file() {
            names.push(name);
        }
    }
    names.sort();
    let mut lines = String::new();
    for name in names {
        let _ = writeln!(lines, "mod {name};");
    }
    Ok(lines)
}
