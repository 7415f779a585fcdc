//! The HTTP part of delivering a webhook (issue 46; docs/events.md, "Delivery"): one POST of the
//! event's bytes with its Standard Webhooks headers, within [`TIMEOUT`], no redirect followed, to
//! an address checked first. Each attempt resolves the host, refuses the whole delivery if ANY
//! address is special ([`domain::webhooks::address`]: loopback, private, link-local, ...), then
//! connects to the addresses it checked (a resolver that answers only them: no second lookup a
//! rebinding DNS could answer differently), with no connection kept for a later attempt.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use domain::webhooks::address::{Special, special};
use domain::webhooks::delivery::{EXCERPT_BYTES, Failure, excerpt};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;

/// The longest an attempt waits for its answer (connection, request and the answer's head).
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// Which addresses deliveries may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Public unicast addresses, over `https`: every deployed stack.
    PublicOnly,
    /// Also loopback, and plain `http` to loopback only: tests
    /// (`WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS`, which no deployed function sets).
    AlsoLoopbackForTests,
}

/// One delivery attempt's request.
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    pub url: &'a str,
    /// `webhook-id`: the event's id.
    pub id: &'a str,
    /// `webhook-timestamp`, Unix seconds.
    pub timestamp: i64,
    /// `webhook-signature`: one signature per secret, space-separated.
    pub signature: &'a str,
    /// The event's bytes as stored.
    pub body: &'a Bytes,
}

/// What the receiver answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub status: u16,
    pub retry_after: Option<String>,
    /// The answer's first 1 KB, as text.
    pub excerpt: String,
}

/// An attempt's result and how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub result: Result<Answered, Failure>,
    pub latency: Duration,
}

/// The webhook sender's HTTP client (Mozilla's roots, TLS 1.2/1.3, HTTP/1.1).
#[derive(Clone)]
pub struct WebhookClient {
    tls: Arc<rustls::ClientConfig>,
    reach: Reach,
    timeout: Duration,
}

impl std::fmt::Debug for WebhookClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookClient")
            .field("reach", &self.reach)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl WebhookClient {
    pub fn new(reach: Reach) -> Self {
        let roots =
            rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("aws-lc supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        Self {
            tls: Arc::new(tls),
            reach,
            timeout: TIMEOUT,
        }
    }

    /// The same client with another timeout (local-api's shortened retries; tests).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// POSTs `outgoing`, its address checked first.
    pub async fn post(&self, outgoing: Outgoing<'_>) -> Sent {
        let started = Instant::now();
        let result = tokio::time::timeout(self.timeout, self.attempt(outgoing))
            .await
            .unwrap_or(Err(Failure::Timeout));
        Sent {
            result,
            latency: started.elapsed(),
        }
    }

    async fn attempt(&self, outgoing: Outgoing<'_>) -> Result<Answered, Failure> {
        let url = url::Url::parse(outgoing.url).map_err(|_| Failure::RefusedScheme)?;
        let addresses = self.checked_addresses(&url).await?;
        let mut tcp = HttpConnector::new_with_resolver(Checked(Arc::new(addresses)));
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config((*self.tls).clone())
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        // No pool: every attempt resolves and checks again.
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(0)
            .build(connector);
        let request = hyper::Request::post(url.as_str())
            .header("content-type", "application/json")
            .header("user-agent", "fan-api-webhooks/1")
            .header("webhook-id", outgoing.id)
            .header("webhook-timestamp", outgoing.timestamp)
            .header("webhook-signature", outgoing.signature)
            .body(Full::new(outgoing.body.clone()))
            .map_err(|_| Failure::RefusedScheme)?;
        let response = client.request(request).await.map_err(|error| {
            if source_is::<rustls::Error>(&error) {
                Failure::Tls
            } else {
                Failure::Connection
            }
        })?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let mut body = response.into_body();
        let mut head = Vec::with_capacity(EXCERPT_BYTES);
        // Only the first 1 KB is read; the rest is dropped with the connection.
        while head.len() < EXCERPT_BYTES {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        head.extend_from_slice(data);
                    }
                }
                _ => break,
            }
        }
        Ok(Answered {
            status,
            retry_after,
            excerpt: excerpt(&head),
        })
    }

    /// Every address `url`'s host resolves to, once each is allowed.
    async fn checked_addresses(&self, url: &url::Url) -> Result<Vec<SocketAddr>, Failure> {
        let port = url.port_or_known_default().ok_or(Failure::RefusedScheme)?;
        let host = match url.host() {
            Some(url::Host::Domain(name)) => name.to_owned(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => return Err(Failure::RefusedScheme),
        };
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|_| Failure::Dns)?
            .collect();
        check(url.scheme(), &addresses, self.reach)?;
        Ok(addresses)
    }
}

/// Whether a delivery over `scheme` may go to `addresses` (all of them).
pub fn check(scheme: &str, addresses: &[SocketAddr], reach: Reach) -> Result<(), Failure> {
    if addresses.is_empty() {
        return Err(Failure::Dns);
    }
    let loopback_allowed = reach == Reach::AlsoLoopbackForTests;
    let mut all_loopback = true;
    for address in addresses {
        match special(address.ip()) {
            None => all_loopback = false,
            Some(Special::Loopback) if loopback_allowed => {}
            Some(_) => return Err(Failure::RefusedAddress),
        }
    }
    match scheme {
        "https" => Ok(()),
        "http" if loopback_allowed && all_loopback => Ok(()),
        _ => Err(Failure::RefusedScheme),
    }
}

fn source_is<E: std::error::Error + 'static>(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(error) = source {
        if error.is::<E>()
            || error
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.get_ref().is_some_and(|inner| inner.is::<E>()))
        {
            return true;
        }
        source = error.source();
    }
    false
}

/// A resolver that answers only the addresses already checked.
#[derive(Clone)]
struct Checked(Arc<Vec<SocketAddr>>);

impl tower_service::Service<Name> for Checked {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Name) -> Self::Future {
        let addresses = self.0.as_ref().clone();
        Box::pin(async move { Ok(addresses.into_iter()) })
    }
}
