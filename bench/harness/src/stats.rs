//! What every part of the harness measures with: medians and percentiles, a process's CPU time
//! and peak memory, long-lived test tokens.

use std::path::Path;

use testkit::tokens::{TestKey, claims, now};

/// The median of `values` (sorted in place); 0 when empty.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The `p` quantile (0 to 1) of already sorted values, nearest rank; 0 when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// CPU time of a process so far (user and system, all its live threads), in seconds, from the
/// scheduler's nanosecond counters (`/proc/PID/task/*/schedstat`): utime and stime in
/// `/proc/PID/stat` count 10 ms ticks, too coarse for a floor of a few tens of microseconds per
/// invocation.
pub fn cpu_seconds(pid: u32) -> f64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("process tasks");
    let nanos: u64 = tasks
        .map(|task| {
            let path = task.expect("task entry").path().join("schedstat");
            let stat = std::fs::read_to_string(path).expect("task schedstat");
            stat.split_whitespace()
                .next()
                .and_then(|ns| ns.parse::<u64>().ok())
                .expect("time on CPU in schedstat")
        })
        .sum();
    nanos as f64 / 1e9
}

/// Peak resident set size (VmHWM), in MB.
pub fn peak_rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("process status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM");
    line.split_whitespace()
        .nth(1)
        .and_then(|kb| kb.parse::<f64>().ok())
        .expect("VmHWM in kB")
        / 1024.0
}

/// Size of a file in MB (10^6 bytes).
pub fn file_mb(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

/// A session token for `sub` signed with `key`, valid for a day (a whole benchmark run).
pub fn day_token(key: TestKey, sub: &str) -> String {
    let mut claims = claims(sub, None);
    claims["exp"] = (now() + 86_400).into();
    key.sign(&claims)
}

/// Milliseconds in a duration.
pub fn ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
