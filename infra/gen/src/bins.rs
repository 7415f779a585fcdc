//! functions/Cargo.toml's `[[bin]]` entries, in the region `the functions' binaries`: each
//! deployed function's binary says `test = false`, since a function's own code is wiring, tested
//! through the crate's one test binary (functions/tests), and an empty unit-test harness per
//! binary would be linked for nothing.

use std::fmt::Write;

use crate::functions::Function;

pub const FILE: &str = "functions/Cargo.toml";
pub const REGION: &str = "the functions' binaries";

/// The entries, one a function, in the order of [`crate::functions::functions`].
pub fn entries(functions: &[Function]) -> String {
    let mut toml = String::new();
    for function in functions {
        let _ = writeln!(toml, "[[bin]]\nname = \"{}\"\ntest = false", function.name);
    }
    toml
}
