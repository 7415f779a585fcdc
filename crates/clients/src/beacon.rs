//! Fetching a round from drand's HTTP relays (`GET {relay}/{chain hash}/public/{round}`, answered
//! `{"round", "randomness", "signature"}`) over the app's one HTTP client stack
//! ([`crate::http_client`], Mozilla's roots). Relays are tried in order, each within
//! [`RELAY_TIMEOUT`]; one that is down, slow, answers garbage or serves a beacon that does not
//! verify is skipped (logged with the reason, never the answer) for the next. The first beacon
//! that verifies is the answer: any valid one is *the* round's beacon, since only the network's
//! key signs it and the randomness is its signature's SHA-256.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use lambda_http::http::{Request, StatusCode, header};

use crate::http_client::{Roots, Schemes, https_connector};
use domain::beacon::{Beacon, BeaconError, LOCAL_CHAIN, local, quicknet, verify, verify_local};
use domain::timestamp::unix_now;

/// drand's relays of the League of Entropy, used when `DRAND_URLS` is not set.
pub const DEFAULT_RELAYS: [&str; 3] = [
    "https://api.drand.sh",
    "https://api2.drand.sh",
    "https://drand.cloudflare.com",
];

/// How long a relay may take to accept a connection, and to answer whole. A relay answers a
/// past round from its store in milliseconds; a slow one is skipped rather than waited for, as
/// the next may answer at once and the keeper asks again on its next pass anyway.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
pub const RELAY_TIMEOUT: Duration = Duration::from_secs(2);
/// The most of an answer read: a quicknet beacon is about 250 bytes of JSON.
const MAX_ANSWER_BYTES: usize = 4096;

/// Where beacons come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeaconSource {
    /// drand's HTTP relays (base addresses, `https://`, or `http://` on a loopback host for
    /// tests), tried in order.
    Relays(Vec<String>),
    /// The local beacon of scripts/local ([`local`]); such a client also accepts local beacons
    /// in [`BeaconClient::verify`]. Never a deployed function's.
    Local,
}

/// Gets verified beacons from a [`BeaconSource`].
pub struct BeaconClient {
    source: BeaconSource,
    http: Client<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>,
}

/// Why one relay gave no beacon (logged, then the next relay is tried).
#[derive(Debug, thiserror::Error)]
enum Skip {
    /// 404 or 425: the relay does not have the round (yet).
    #[error("it does not have the round yet")]
    NotYet,
    #[error("it answered HTTP {0}")]
    Status(u16),
    #[error("it could not be reached")]
    Unreachable,
    #[error("it did not answer within the relay timeout")]
    TimedOut,
    #[error("its answer is not a beacon")]
    Garbage,
    #[error("its answer is another round")]
    WrongRound,
    #[error("its beacon fails verification")]
    FailsVerification,
}

impl BeaconClient {
    pub fn new(source: BeaconSource) -> Self {
        let schemes = match &source {
            BeaconSource::Relays(relays) if relays.iter().any(|r| r.starts_with("http://")) => {
                Schemes::HttpsOrHttp
            }
            _ => Schemes::HttpsOnly,
        };
        Self {
            source,
            http: Client::builder(TokioExecutor::new()).build(https_connector(
                Roots::WebPki,
                schemes,
                Some(CONNECT_TIMEOUT),
            )),
        }
    }

    /// The beacon of `round`, verified. [`BeaconError::NotYet`] before the round's time (no
    /// request made) or when every relay answers that it does not have it;
    /// [`BeaconError::Unavailable`] when no relay gave a beacon that verifies.
    pub async fn fetch(&self, round: u64) -> Result<Beacon, BeaconError> {
        let now = unix_now();
        if round == 0 || quicknet::time_of(round) > now {
            return Err(BeaconError::NotYet);
        }
        let relays = match &self.source {
            BeaconSource::Local => return Ok(local(round)),
            BeaconSource::Relays(relays) => relays,
        };
        let mut not_yet = 0;
        for relay in relays {
            match self.ask(relay, round).await {
                Ok(beacon) => return Ok(beacon),
                Err(Skip::NotYet) => not_yet += 1,
                Err(skip) => {
                    tracing::warn!(relay = %relay, round, reason = %skip, "skipped a drand relay");
                }
            }
        }
        if not_yet > 0 && not_yet == relays.len() {
            Err(BeaconError::NotYet)
        } else {
            Err(BeaconError::Unavailable)
        }
    }

    /// [`verify`], and, for a client of [`BeaconSource::Local`] only, a local beacon that is
    /// exactly [`local`]'s for its round.
    pub fn verify(&self, beacon: &Beacon) -> Result<(), BeaconError> {
        if self.source == BeaconSource::Local && beacon.chain == LOCAL_CHAIN {
            verify_local(beacon)
        } else {
            verify(beacon)
        }
    }

    async fn ask(&self, relay: &str, round: u64) -> Result<Beacon, Skip> {
        let url = format!(
            "{}/{}/public/{round}",
            relay.trim_end_matches('/'),
            quicknet::CHAIN_HASH
        );
        let request = Request::get(url)
            .header(header::ACCEPT, "application/json")
            .header(header::USER_AGENT, "fan-api")
            .body(Empty::new())
            .map_err(|_| Skip::Unreachable)?;
        let exchange = async {
            let response = self
                .http
                .request(request)
                .await
                .map_err(|_| Skip::Unreachable)?;
            let status = response.status();
            match status {
                StatusCode::OK => {}
                StatusCode::NOT_FOUND | StatusCode::TOO_EARLY => return Err(Skip::NotYet),
                _ => return Err(Skip::Status(status.as_u16())),
            }
            Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map(|body| body.to_bytes())
                .map_err(|_| Skip::Garbage)
        };
        let body = tokio::time::timeout(RELAY_TIMEOUT, exchange)
            .await
            .map_err(|_| Skip::TimedOut)??;
        let answer: RelayAnswer = serde_json::from_slice(&body).map_err(|_| Skip::Garbage)?;
        if answer.round != round {
            return Err(Skip::WrongRound);
        }
        let beacon = Beacon {
            chain: quicknet::CHAIN_HASH.to_owned(),
            round,
            randomness: answer.randomness,
            signature: answer.signature,
        };
        verify(&beacon).map_err(|_| Skip::FailsVerification)?;
        Ok(beacon)
    }
}

/// A relay's answer (a chained network's `previous_signature`, absent on quicknet, is ignored).
#[derive(serde::Deserialize)]
struct RelayAnswer {
    round: u64,
    #[serde(with = "domain::hex::bytes32")]
    randomness: [u8; 32],
    #[serde(with = "domain::hex::bytes")]
    signature: Vec<u8>,
}
