//! The edge in front of the API (`template.yaml`'s CloudFront distribution and its WAF web ACL):
//! what CloudFront forwards to the origin, the secret header it adds, and the header the fan's
//! own address arrives in. docs/edge.md says why each is what it is; a test holds the template
//! to these lists.

use crate::http::cors;

/// The header CloudFront adds to every request it sends to the origin, holding the secret the
/// functions accept (`EDGE_ORIGIN_SECRETS`): a request without it did not come through the edge
/// (and its WAF rules) and is refused where the edge is on.
pub const ORIGIN_VERIFY_HEADER: &str = "x-origin-verify";

/// The viewer's address and port, written by CloudFront itself (never by the client): where the
/// edge is on, the address the rate limits and the human check read.
pub const VIEWER_ADDRESS_HEADER: &str = "cloudfront-viewer-address";

/// The request headers CloudFront forwards to the origin besides the cache key's (the origin
/// request policy's list): what the API reads ([`cors::ALLOW_HEADERS`] and
/// [`cors::NOT_FROM_BROWSERS`]) less the two a cache policy owns or CloudFront answers itself
/// (`Authorization`, which CloudFront forwards only as part of a cache key, and
/// `If-None-Match`, which the edge answers from its own copy), plus what API Gateway's CORS
/// reads (`Origin` and a preflight's two) and the viewer's address.
pub fn forwarded_headers() -> Vec<&'static str> {
    let owned_elsewhere = ["authorization", "if-none-match"];
    cors::ALLOW_HEADERS
        .iter()
        .chain(cors::NOT_FROM_BROWSERS)
        .copied()
        .filter(|name| !owned_elsewhere.contains(&name.to_ascii_lowercase().as_str()))
        .chain([
            "Origin",
            "Access-Control-Request-Method",
            "Access-Control-Request-Headers",
            "CloudFront-Viewer-Address",
        ])
        .collect()
}
