//! `lambda-bench readstorm`: what one pack page costs the origin while a crowd polls it during a
//! drop (issue 45), with the edge on and off. A model, not a run: its inputs are the crowd, the
//! ages each route's declaration gives its answers (`api::http::response::Freshness`, read here
//! so that the model follows the code), CloudFront's caches, AWS's quotas, and each route's
//! DynamoDB requests per request as `functions/tests/get_pack.rs` and `request_costs.rs` count
//! them through the binaries. The figures and their reading are in BENCHMARKS.md.

use api::http::response::Freshness;

/// The crowd and the page.
pub struct Crowd {
    pub fans: f64,
    /// Seconds between two polls of one fan's page.
    pub poll_seconds: f64,
}

/// One public read a page polls.
struct Read {
    name: &'static str,
    freshness: Freshness,
    /// Read units one request reaching the origin spends on its busiest key.
    hot_key_units: f64,
    /// That key, and what a request reads of it.
    hot_key: &'static str,
    /// Warm CPU time of a request at the origin (ms), for the concurrency it keeps busy:
    /// BENCHMARKS.md's warm p50 on moto is an upper bound of DynamoDB's own latency.
    origin_ms: f64,
}

/// What AWS gives by default, and CloudFront's shape (AWS's published figures).
struct Quotas {
    /// API Gateway's rate on this API's stage (`ThrottlingRateLimit`).
    stage_rps: f64,
    /// API Gateway's account rate per region.
    account_rps: f64,
    /// Lambda's concurrent executions per account and region.
    lambda_concurrency: f64,
    /// CloudFront's requests per second per distribution.
    distribution_rps: f64,
    /// Read units per second one partition key serves.
    key_read_units: f64,
    /// CloudFront's regional edge caches, and its points of presence (the bound if no regional
    /// cache collapsed their misses).
    regional_caches: f64,
    points_of_presence: f64,
    /// The keys a route's answer is kept under per URL: the web app's `Origin` and none (the
    /// native apps).
    origin_variants: f64,
}

const QUOTAS: Quotas = Quotas {
    stage_rps: 2_000.0,
    account_rps: 10_000.0,
    lambda_concurrency: 1_000.0,
    distribution_rps: 250_000.0,
    key_read_units: 3_000.0,
    regional_caches: 13.0,
    points_of_presence: 600.0,
    origin_variants: 2.0,
};

/// The page: the pack (answered by get-pack from its instance's 5 s copy: one `BatchGetItem`
/// of 1 unit per instance and 5 s, none per request) and the line's status (one `BatchGetItem`
/// of the pack and the line per request, 0.5 unit each, eventually consistent). The fan's own
/// place is not polled: the status's `admittedThrough` beside the position read once.
fn page() -> [Read; 2] {
    [
        Read {
            name: "GET /api/packs/{packId}",
            freshness: Freshness::PACKS,
            hot_key_units: 0.0,
            hot_key: "`PACK#<id>`: 1 unit per instance and 5 s, none per request",
            origin_ms: 1.0,
        },
        Read {
            name: "GET /api/packs/{packId}/queue",
            freshness: Freshness::QUEUE,
            hot_key_units: 0.5,
            hot_key: "`PACK#<id>` and `QUEUE#<id>`: 0.5 unit each per request",
            origin_ms: 12.0,
        },
    ]
}

/// `max-age` of a `Cache-Control` value.
fn max_age(freshness: Freshness) -> f64 {
    freshness
        .cache_control()
        .split(',')
        .find_map(|part| part.trim().strip_prefix("max-age="))
        .and_then(|seconds| seconds.parse().ok())
        .expect("a public read has a max-age")
}

/// Prints the model's table for `crowd`.
pub fn run(crowd: &Crowd) {
    let q = &QUOTAS;
    println!(
        "### One pack page polled by {} fans every {} s\n",
        crowd.fans, crowd.poll_seconds
    );
    println!(
        "| route | viewer requests/s | edge off, all let through: Lambda concurrency | edge off: read units/s on the busiest key | max-age (s) | edge on: requests/s reaching the origin (regional caches .. every PoP) | edge on: read units/s on the busiest key (every PoP) | busiest key |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let (mut viewers_all, mut origin_all, mut busy_off, mut busy_on) = (0.0, 0.0, 0.0, 0.0);
    for read in page() {
        let viewers = crowd.fans / crowd.poll_seconds;
        let age = max_age(read.freshness);
        let (collapsed, scattered) = (
            q.regional_caches * q.origin_variants / age,
            q.points_of_presence * q.origin_variants / age,
        );
        let concurrency_off = viewers * read.origin_ms / 1000.0;
        println!(
            "| {} | {viewers:.0} | {concurrency_off:.0} | {:.0} | {age} | {collapsed:.0} .. {scattered:.0} | {:.0} | {} |",
            read.name,
            viewers * read.hot_key_units,
            scattered * read.hot_key_units,
            read.hot_key
        );
        viewers_all += viewers;
        origin_all += scattered;
        busy_off += concurrency_off;
        busy_on += scattered * read.origin_ms / 1000.0;
    }
    println!(
        "\nViewer requests: {viewers_all:.0}/s. Edge off: API Gateway takes {:.0}/s (the stage's \
         `ThrottlingRateLimit`; the account's quota is {:.0}) and answers the rest 429 before any \
         function; let through, they would keep {busy_off:.0} executions busy (the account's \
         quota: {:.0}). Edge on: CloudFront answers {:.0}% of its {:.0} requests/s a \
         distribution; the origin sees at most {origin_all:.0} requests/s, {busy_on:.1} \
         executions busy.",
        q.stage_rps,
        q.account_rps,
        q.lambda_concurrency,
        viewers_all / q.distribution_rps * 100.0,
        q.distribution_rps,
    );
    println!(
        "(A key serves {:.0} read units/s; CloudFront: {} regional edge caches, about {} points of \
         presence, {} keys per URL: the web app's Origin and the native apps'.)\n",
        q.key_read_units, q.regional_caches, q.points_of_presence, q.origin_variants
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_ages_are_read_from_the_declarations() {
        assert_eq!(super::max_age(api::http::response::Freshness::PACKS), 2.0);
        assert_eq!(
            super::max_age(api::http::response::Freshness::CATALOG),
            60.0
        );
    }
}
