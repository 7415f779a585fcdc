//! Before and after side by side: the functions built from another commit (`--before`), each
//! measured just before its namesake of today's build, under the same moto and the same load, so
//! that a busy machine weighs on both alike.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::functions::Kind;
use crate::lambda::Figures;

/// The budget of issue 26 for cold starts and CPU: within 5% of before.
const BUDGET: f64 = 1.05;
/// The budget of issue 26 for every binary, in MB.
const BINARY_MB: f64 = 9.0;

/// The other commit's binaries: a label (its commit) and the directory they are in.
pub struct Baseline {
    pub label: String,
    pub dir: PathBuf,
}

impl Baseline {
    /// Whether it has `kind`'s binary to measure (the floors run once, from today's build: they
    /// are the same code).
    pub fn has(&self, kind: Kind) -> bool {
        !kind.is_floor() && self.dir.join(kind.name()).exists()
    }

    /// How a row of its binary is named in the tables.
    pub fn row_name(&self, kind: Kind) -> String {
        format!("{} ({})", kind.name(), self.label)
    }
}

/// `before -> after: ratio`, with the verdict against [`BUDGET`] when `budget`.
fn cell(before: f64, after: f64, digits: usize, budget: bool) -> String {
    let ratio = after / before;
    let verdict = match budget {
        false => "",
        true if ratio <= BUDGET => " holds",
        true => " **misses**",
    };
    format!("{before:.digits$} -> {after:.digits$}: {ratio:.3}x{verdict}")
}

/// The table of the pairs measured (function, before, after), and their figures as JSON (each
/// function's before figures; after's are in the run's own figures).
pub fn report(baseline: &Baseline, pairs: &[(Kind, Figures, &Figures)]) -> Value {
    println!(
        "\n### Before ({}) -> after, side by side (ratio after / before; budget: at most {BUDGET}x, binaries at most {BINARY_MB} MB)\n",
        baseline.label
    );
    println!(
        "| function | cold first response (ms) | first invocation (ms) | CPU / warm invocation (µs) | warm p50 (ms) | peak RSS (MB) | stripped binary (MB) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut before = Map::new();
    for (kind, b, a) in pairs {
        println!(
            "| {} | {} | {} | {} | {} | {} | {}: {} |",
            kind.name(),
            cell(b.cold_first_response_ms, a.cold_first_response_ms, 2, true),
            cell(b.first_invocation_ms, a.first_invocation_ms, 2, true),
            cell(b.cpu_per_invocation_us, a.cpu_per_invocation_us, 0, true),
            cell(b.warm_p50_ms, a.warm_p50_ms, 3, false),
            cell(b.peak_rss_mb, a.peak_rss_mb, 1, false),
            cell(b.binary_mb, a.binary_mb, 2, false),
            if a.binary_mb <= BINARY_MB {
                "holds"
            } else {
                "**misses**"
            },
        );
        before.insert(kind.name().into(), b.json());
    }
    Value::Object(before)
}
