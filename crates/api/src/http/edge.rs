//! The edge in front of the API (`template.yaml`'s CloudFront distribution and its WAF web ACL):
//! what CloudFront forwards to the origin, the secret header it adds, and the header the fan's
//! own address arrives in. docs/edge.md says why each is what it is; a test holds the template
//! to these lists.

use std::net::IpAddr;

use crate::http::cors;
use crate::http::error::{ApiError, ErrorCode};

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
/// reads of a preflight and the viewer's address. `Origin` is in every cache policy's key
/// (API Gateway's CORS answer differs per origin), which forwards it.
pub fn forwarded_headers() -> Vec<&'static str> {
    let owned_elsewhere = ["authorization", "if-none-match"];
    cors::ALLOW_HEADERS
        .iter()
        .chain(cors::NOT_FROM_BROWSERS)
        .copied()
        .filter(|name| !owned_elsewhere.contains(&name.to_ascii_lowercase().as_str()))
        .chain([
            "Access-Control-Request-Method",
            "Access-Control-Request-Headers",
            "CloudFront-Viewer-Address",
        ])
        .collect()
}

/// The values of [`ORIGIN_VERIFY_HEADER`] the origin accepts (`EDGE_ORIGIN_SECRETS`: the one
/// CloudFront sends, and during a rotation the other): where the edge is on, a request must
/// carry one of them. Read once per cold start.
pub struct EdgeOrigin {
    accepted: Vec<Box<[u8]>>,
}

/// The shortest secret accepted: 128 bits of base64 or hex, so that guessing is out of reach
/// within WAF's and API Gateway's rates.
pub const MIN_SECRET_LEN: usize = 22;

impl EdgeOrigin {
    /// The check for `accepted` (each at least [`MIN_SECRET_LEN`] bytes); `None` when there is
    /// none (no edge: local-api, `cargo lambda watch`, a stack deployed with the edge off).
    pub fn new<'a>(accepted: impl IntoIterator<Item = &'a str>) -> Result<Option<Self>, String> {
        let accepted: Vec<Box<[u8]>> = accepted
            .into_iter()
            .map(str::trim)
            .filter(|secret| !secret.is_empty())
            .map(|secret| match secret.len() >= MIN_SECRET_LEN {
                true => Ok(secret.as_bytes().into()),
                false => Err(format!(
                    "each secret must be {MIN_SECRET_LEN} bytes at least"
                )),
            })
            .collect::<Result<_, _>>()?;
        Ok((!accepted.is_empty()).then_some(Self { accepted }))
    }

    /// Admits `request` when it carries an accepted secret (compared in constant time), taking
    /// the header off so that nothing after this reads or logs it, and makes the viewer's
    /// address ([`VIEWER_ADDRESS_HEADER`], which CloudFront writes) the request's source
    /// address, where API Gateway saw only CloudFront's: the rate limits and the human check's
    /// `remoteip` then read the fan's. `edge_required` (403) otherwise. An operator's request,
    /// which API Gateway's `AWS_IAM` authorizer checked, is admitted as it is: a SigV4 signature
    /// covers the host it was sent to, so operators call API Gateway's own address.
    pub fn admit<B>(&self, request: &mut axum::http::Request<B>) -> Result<(), ApiError> {
        let presented = request.headers_mut().remove(ORIGIN_VERIFY_HEADER);
        if crate::http::operator::iam_caller(request.extensions()).is_some() {
            return Ok(());
        }
        let admitted = presented.is_some_and(|presented| {
            self.accepted.iter().any(|secret| {
                aws_lc_rs::constant_time::verify_slices_are_equal(presented.as_bytes(), secret)
                    .is_ok()
            })
        });
        if !admitted {
            return Err(ApiError::refused(
                ErrorCode::EdgeRequired,
                "Call the API through its published address.",
            ));
        }
        let viewer = request
            .headers()
            .get(VIEWER_ADDRESS_HEADER)
            .and_then(|value| value.to_str().ok())
            .and_then(viewer_ip);
        if viewer.is_none() {
            tracing::warn!("a request through the edge came without the viewer's address");
        }
        if let Some(lambda_http::request::RequestContext::ApiGatewayV2(context)) = request
            .extensions_mut()
            .get_mut::<lambda_http::request::RequestContext>()
        {
            context.http.source_ip = viewer.map(|address| address.to_string());
        }
        Ok(())
    }
}

/// The address of CloudFront's `ip:port` (an IPv6 address unbracketed: the port is after the
/// last colon).
fn viewer_ip(value: &str) -> Option<IpAddr> {
    let (address, port) = value.trim().rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    address
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_viewer_address_is_read_from_both_forms() {
        for (value, address) in [
            ("198.51.100.7:443", "198.51.100.7"),
            ("2001:db8::1:443", "2001:db8::1"),
            ("[2001:db8::1]:443", "2001:db8::1"),
        ] {
            assert_eq!(viewer_ip(value), address.parse().ok(), "{value}");
        }
        for value in ["198.51.100.7", "198.51.100.7:x", "", "host:443"] {
            assert_eq!(viewer_ip(value), None, "{value}");
        }
    }

    #[test]
    fn short_secrets_are_refused_and_none_is_no_edge() {
        assert!(EdgeOrigin::new(["short"]).is_err());
        assert!(EdgeOrigin::new(["", " "]).unwrap().is_none());
    }
}
