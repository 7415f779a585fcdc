//! Cloudflare Turnstile's siteverify (`POST /turnstile/v0/siteverify`, a form of `secret`,
//! `response`, `remoteip` and `idempotency_key`), over the app's own HTTP client stack.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use lambda_http::http::{Request, header};

use crate::http_client::{Roots, Schemes, https_connector};
use domain::humancheck::{Answer, Failure, token_hash};
use domain::secret::Secret;

/// Cloudflare's siteverify.
pub const DEFAULT_URL: &str = "https://challenges.cloudflare.com/turnstile/v0/siteverify";

/// Cloudflare's published test secrets: every token passes, fails, or is already spent.
pub const TEST_SECRET_PASSES: &str = "1x0000000000000000000000000000000AA";
pub const TEST_SECRET_FAILS: &str = "2x0000000000000000000000000000000AA";
pub const TEST_SECRET_SPENT: &str = "3x0000000000000000000000000000000AA";

/// A fan waits for the check: it must answer well within API Gateway's 30 s.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// An answer is a few hundred bytes.
const MAX_ANSWER_BYTES: usize = 16 * 1024;

/// siteverify at `url` (`https://`, or `http://` on a loopback host: the testkit's stub), with
/// the widget's secret (`TURNSTILE_SECRET`).
pub struct Siteverify {
    url: String,
    secret: Secret,
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl Siteverify {
    pub fn new(url: &str, secret: Secret) -> Self {
        let schemes = if url.starts_with("https://") {
            Schemes::HttpsOnly
        } else {
            Schemes::HttpsOrHttp
        };
        Self {
            url: url.to_owned(),
            secret,
            client: Client::builder(TokioExecutor::new()).build(https_connector(
                Roots::WebPki,
                schemes,
                Some(CONNECT_TIMEOUT),
            )),
        }
    }

    /// Cloudflare's answer for `token` from `remote_ip`. The `idempotency_key` is made from
    /// the token, so that a retry of this call for the same token is answered as the first was
    /// rather than as a spent token.
    pub async fn verify(&self, token: &str, remote_ip: Option<&str>) -> Result<Answer, Failure> {
        let hash = token_hash(token);
        let idempotency_key = format!(
            "{}-{}-{}-{}-{}",
            &hash[0..8],
            &hash[8..12],
            &hash[12..16],
            &hash[16..20],
            &hash[20..32]
        );
        // Built in its own scope: the serializer is not `Send`, and the call awaits below.
        let form = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("secret", self.secret.expose())
                .append_pair("response", token)
                .append_pair("idempotency_key", &idempotency_key);
            if let Some(ip) = remote_ip {
                form.append_pair("remoteip", ip);
            }
            form.finish()
        };
        let request = Request::post(&self.url)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::USER_AGENT, "fan-api")
            .body(Full::new(Bytes::from(form)))
            .map_err(|e| Failure::Unavailable(format!("bad request: {e}")))?;
        let unavailable = |what: &str| Failure::Unavailable(format!("siteverify: {what}"));
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|_| unavailable("unreachable"))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|_| unavailable("answer unreadable"))?
                .to_bytes();
            if !status.is_success() {
                return Err(unavailable(status.as_str()));
            }
            serde_json::from_slice::<Answer>(&body).map_err(|_| unavailable("answer not JSON"))
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| unavailable("too slow"))?
    }
}
