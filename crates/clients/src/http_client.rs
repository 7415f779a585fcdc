//! The one HTTP client stack of the app: hyper's HTTP/1.1 client over rustls (aws-lc), for the
//! DynamoDB SDK ([`sdk_http_client`]) and the JWKS fetches ([`https_connector`]).
//!
//! The SDK's default client would also link HTTP/2 (DynamoDB answers HTTP/1.1), proxy support
//! and a second TLS set-up: about 0.6 MB of every function binary, for nothing a function uses.
//! Trust is compiled in, so building a client reads no file: [`Roots::Amazon`] (the roots every
//! AWS endpoint chains to) for AWS, [`Roots::WebPki`] (Mozilla's store) for anything else.

use std::error::Error;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector as TcpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// The roots of Amazon Trust Services, to which every AWS endpoint chains.
pub const AMAZON_ROOTS: &[u8] = include_bytes!("../certs/amazon-roots.pem");

/// Which certificate authorities a client trusts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roots {
    /// Amazon Trust Services only: for AWS endpoints.
    Amazon,
    /// Mozilla's root store (webpki-roots): for other servers.
    WebPki,
}

/// Whether plain `http://` addresses are allowed (local servers, tests) or only `https://`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schemes {
    HttpsOnly,
    HttpsOrHttp,
}

/// A connector for hyper's client: TCP (no Nagle delay, connect bounded by `connect_timeout`),
/// then TLS 1.2/1.3 for `https://`, HTTP/1.1 only.
pub fn https_connector(
    roots: Roots,
    schemes: Schemes,
    connect_timeout: Option<Duration>,
) -> HttpsConnector<TcpConnector> {
    let mut tcp = TcpConnector::new();
    tcp.set_connect_timeout(connect_timeout);
    tcp.set_nodelay(true);
    tcp.enforce_http(false);
    let builder = hyper_rustls::HttpsConnectorBuilder::new();
    let builder = match roots {
        Roots::WebPki => builder.with_webpki_roots(),
        Roots::Amazon => {
            let mut store = rustls::RootCertStore::empty();
            for certificate in CertificateDer::pem_slice_iter(AMAZON_ROOTS) {
                store
                    .add(certificate.expect("the embedded Amazon roots are valid PEM"))
                    .expect("the embedded Amazon roots are valid certificates");
            }
            builder.with_tls_config(
                rustls::ClientConfig::builder_with_provider(Arc::new(
                    rustls::crypto::aws_lc_rs::default_provider(),
                ))
                .with_safe_default_protocol_versions()
                .expect("aws-lc supports the default protocol versions")
                .with_root_certificates(store)
                .with_no_client_auth(),
            )
        }
    };
    let builder = match schemes {
        Schemes::HttpsOnly => builder.https_only(),
        Schemes::HttpsOrHttp => builder.https_or_http(),
    };
    builder.enable_http1().wrap_connector(tcp)
}

/// The SDK's HTTP client on [`https_connector`]. Each distinct connect timeout the SDK asks for
/// gets one connection pool, kept for the life of the process.
pub fn sdk_http_client(roots: Roots) -> SharedHttpClient {
    SharedHttpClient::new(SdkHttpClient::new(roots))
}

/// The SDK's HTTP client, and a way to open its connection to an endpoint before the first
/// request needs it ([`Warmer::warm`]).
pub fn warmable_sdk_http_client(roots: Roots) -> (SharedHttpClient, Warmer) {
    let client = Arc::new(SdkHttpClient::new(roots));
    (
        SharedHttpClient::new(SharedClient(client.clone())),
        Warmer(client),
    )
}

/// Opens connections in the pool of a [`warmable_sdk_http_client`].
#[derive(Debug, Clone)]
pub struct Warmer(Arc<SdkHttpClient>);

impl Warmer {
    /// Opens (TCP, TLS) a connection to `endpoint` in the pool the SDK uses with
    /// `connect_timeout`, by an unsigned `GET /` (DynamoDB answers it with a health line), so
    /// that the first real request finds it open. A failure is logged and changes nothing.
    pub async fn warm(&self, endpoint: &str, connect_timeout: Duration) {
        let connector = self.0.connector(Some(connect_timeout), None);
        let request = match lambda_http::http::Request::get(endpoint).body(SdkBody::empty()) {
            Ok(request) => request,
            Err(error) => {
                tracing::warn!(error = %error, "cannot warm a connection to this endpoint");
                return;
            }
        };
        let Ok(request) = HttpRequest::try_from(request) else {
            return;
        };
        match connector.call(request).await {
            // The answer is read whole, so the connection goes back to the pool, open.
            Ok(response) => {
                let _ = http_body_util::BodyExt::collect(response.into_body()).await;
                tracing::debug!("warmed the DynamoDB connection");
            }
            Err(error) => tracing::warn!(error = %error, "warming the DynamoDB connection failed"),
        }
    }
}

/// An [`SdkHttpClient`] shared with its [`Warmer`].
#[derive(Debug)]
struct SharedClient(Arc<SdkHttpClient>);

impl HttpClient for SharedClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        self.0.http_connector(settings, components)
    }
}

/// A connector (and its pool) per connect timeout.
type Connectors = Vec<(Option<Duration>, SharedHttpConnector)>;

#[derive(Debug)]
struct SdkHttpClient {
    roots: Roots,
    connectors: Mutex<Connectors>,
}

impl SdkHttpClient {
    fn new(roots: Roots) -> Self {
        Self {
            roots,
            connectors: Mutex::default(),
        }
    }

    /// The connector (and pool) for `connect_timeout`, made on first use.
    fn connector(
        &self,
        connect_timeout: Option<Duration>,
        read_timeout: Option<Duration>,
    ) -> SharedHttpConnector {
        let mut connectors = self
            .connectors
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((_, connector)) = connectors.iter().find(|(t, _)| *t == connect_timeout) {
            return connector.clone();
        }
        let connector = SharedHttpConnector::new(SdkConnector {
            client: Client::builder(TokioExecutor::new()).build(https_connector(
                self.roots,
                Schemes::HttpsOrHttp,
                connect_timeout,
            )),
            read_timeout,
        });
        connectors.push((connect_timeout, connector.clone()));
        connector
    }
}

impl HttpClient for SdkHttpClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        self.connector(settings.connect_timeout(), settings.read_timeout())
    }
}

#[derive(Debug, Clone)]
struct SdkConnector {
    client: Client<HttpsConnector<TcpConnector>, SdkBody>,
    read_timeout: Option<Duration>,
}

impl HttpConnector for SdkConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let request = match request.try_into_http1x() {
            Ok(request) => request,
            Err(error) => {
                return HttpConnectorFuture::ready(Err(ConnectorError::user(error.into())));
            }
        };
        let sent = self.client.request(request);
        let read_timeout = self.read_timeout;
        HttpConnectorFuture::new(async move {
            let answer = match read_timeout {
                Some(limit) => tokio::time::timeout(limit, sent)
                    .await
                    .map_err(|elapsed| ConnectorError::timeout(elapsed.into()))?,
                None => sent.await,
            };
            let response = answer.map_err(classify)?;
            HttpResponse::try_from(response.map(SdkBody::from_body_1_x))
                .map_err(|error| ConnectorError::other(error.into(), None))
        })
    }
}

/// What the SDK's retry rules need to know of a failed exchange: a timeout or an I/O failure
/// (connection refused, reset, closed early) is transient and retried; anything else is not.
fn classify(error: hyper_util::client::legacy::Error) -> ConnectorError {
    let mut timed_out = false;
    let mut transient = error.is_connect();
    let mut next: Option<&(dyn Error + 'static)> = Some(&error);
    while let Some(cause) = next {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            transient = true;
            timed_out |= io.kind() == std::io::ErrorKind::TimedOut;
        }
        if let Some(hyper) = cause.downcast_ref::<hyper::Error>() {
            timed_out |= hyper.is_timeout();
            transient |= hyper.is_closed() || hyper.is_canceled() || hyper.is_incomplete_message();
        }
        next = cause.source();
    }
    if timed_out {
        ConnectorError::timeout(error.into())
    } else if transient {
        ConnectorError::io(error.into())
    } else {
        ConnectorError::other(error.into(), None)
    }
}
