//! A drand HTTP relay stub on a free loopback port, serving real quicknet rounds with their true
//! signatures (recorded from drand's relays by the projects named on [`ROUNDS`]; this machine
//! cannot reach drand). It answers as a relay does: `GET /{chain hash}/public/{round}` with
//! `{"round", "randomness", "signature"}`, 404 for another chain, a round it does not hold or one
//! after its [`DrandStub::set_latest`] (drand's answer for a round not yet produced), and it
//! records every path asked. [`Mode`] makes it lie (tampered randomness, another round's
//! signature, garbage), fail (503) or stall.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Response, StatusCode};
use serde_json::json;

/// quicknet's chain hash, written here, not read from the code under test.
pub const CHAIN_HASH: &str = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971";

/// quicknet's chain info, as `https://api.drand.sh/{CHAIN_HASH}/info` serves it (the same bytes
/// are pinned in drand's own interop tests and Filecoin's drand configuration).
pub const CHAIN_INFO: &str = r#"{"public_key":"83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a","period":3,"genesis_time":1692803367,"hash":"52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971","groupHash":"f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e","schemeID":"bls-unchained-g1-rfc9380","metadata":{"beaconID":"quicknet"}}"#;

/// One recorded quicknet round, as a relay serves it (lowercase hex).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    pub round: u64,
    pub randomness: &'static str,
    pub signature: &'static str,
}

/// Real quicknet rounds. 1-3: drand's interop tests (`internal/interop`, fetched from
/// api.drand.sh); 123: drand-verify 0.6's tests (api3.drand.sh); 1000: the relays' answer pinned
/// by several drand consumers; 9367912: a recent round pinned by a Stylus drand verifier. Where
/// a source gave only the signature, the randomness is its SHA-256 (Python's hashlib).
pub const ROUNDS: [Round; 6] = [
    Round {
        round: 1,
        randomness: "1466a6cd24e327188770752f6134001c64d6efcc590ccc26b721611ad96f165a",
        signature: "b55e7cb2d5c613ee0b2e28d6750aabbb78c39dcc96bd9d38c2c2e12198df95571de8e8e402a0cc48871c7089a2b3af4b",
    },
    Round {
        round: 2,
        randomness: "5782d6987841c654515a0e72b2d1ebb4e741234042c37cb19608ae50d93fb60c",
        signature: "b6b6a585449b66eb12e875b64fcbab3799861a00e4dbf092d99e969a5eac57dd3f798acf61e705fe4f093db926626807",
    },
    Round {
        round: 3,
        randomness: "7ef4621ace1c6da4eb2eee7cd901f81385bca5b189771ec0f08d0d2566dd1a21",
        signature: "b3fab6df720b68cc47175f2c777e86d84187caab5770906f515ff1099cb01e4deaa027075d860823e49477b93c72bd64",
    },
    Round {
        round: 123,
        randomness: "fb8f7bc29bf24db51871ec8c79f3a1e4bd0557bc0dfcee9ed1d924e69d1c60dc",
        signature: "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92",
    },
    Round {
        round: 1000,
        randomness: "fe290beca10872ef2fb164d2aa4442de4566183ec51c56ff3cd603d930e54fdd",
        signature: "b44679b9a59af2ec876b1a6b1ad52ea9b1615fc3982b19576350f93447cb1125e342b73a8dd2bacbe47e4b6b63ed5e39",
    },
    Round {
        round: 9_367_912,
        randomness: "a646d1f17493408fdd89ee2ff71a0d1eab6087f23fdef7f60a2baec60436a496",
        signature: "845091b99635a8a5f93a15cd8622fae0c7ee5307fb5b888dc67ee4fe997b5b326dbd637bd7ab39e3188fd507ea94b314",
    },
];

/// The recorded round `round`.
///
/// # Panics
/// If it is not one of [`ROUNDS`] (a mistake in the test).
pub fn round(round: u64) -> Round {
    *ROUNDS
        .iter()
        .find(|r| r.round == round)
        .unwrap_or_else(|| panic!("round {round} is not recorded"))
}

/// How the stub answers a round it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The recorded beacon.
    Honest,
    /// The true signature with the randomness altered (one bit): caught by
    /// randomness == SHA-256(signature).
    TamperedRandomness,
    /// Another recorded round's signature and its randomness, consistent with each other: caught
    /// only by the BLS check of the signature against the round.
    ForgedSignature,
    /// 200 with a body that is not a beacon.
    Garbage,
    /// 503 to every request, as a relay whose backend is down.
    Down,
    /// Answers honestly after 30 s: longer than any client waits.
    Stalled,
}

struct State {
    mode: Mode,
    latest: u64,
    received: Vec<String>,
}

pub struct DrandStub {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl DrandStub {
    /// An honest relay that has every round up to the current one (by the clock).
    pub async fn start() -> Self {
        Self::start_with(Mode::Honest).await
    }

    pub async fn start_with(mode: Mode) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the drand stub");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            mode,
            latest: current_round(),
            received: Vec::new(),
        }));
        let shared = state.clone();
        let task = crate::spawn_server(listener, move |request| {
            let state = shared.clone();
            async move {
                let path = request.uri().path().to_owned();
                let (mode, answer) = {
                    let mut state = state.lock().unwrap();
                    state.received.push(path.clone());
                    (state.mode, answer(&state, request.method(), &path))
                };
                if mode == Mode::Stalled {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
                let (status, body) = answer;
                Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(body)))
                    .unwrap()
            }
        });
        Self { addr, state, task }
    }

    /// The relay's base address, as `DRAND_URLS` lists it.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn set_mode(&self, mode: Mode) {
        self.state.lock().unwrap().mode = mode;
    }

    /// Rounds after `round` are answered 404, as a relay answers a round not yet produced.
    pub fn set_latest(&self, round: u64) {
        self.state.lock().unwrap().latest = round;
    }

    /// The paths asked so far, in order.
    pub fn received(&self) -> Vec<String> {
        self.state.lock().unwrap().received.clone()
    }
}

impl Drop for DrandStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// quicknet's current round by the clock: genesis 1692803367, a round every 3 s.
fn current_round() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    (now - 1_692_803_367) / 3 + 1
}

fn answer(state: &State, method: &Method, path: &str) -> (StatusCode, String) {
    if state.mode == Mode::Down {
        return (StatusCode::SERVICE_UNAVAILABLE, String::new());
    }
    let not_found = (StatusCode::NOT_FOUND, String::new());
    let Some(rest) = path
        .strip_prefix('/')
        .and_then(|p| p.strip_prefix(CHAIN_HASH))
    else {
        return not_found;
    };
    let Some(number) = rest.strip_prefix("/public/") else {
        return not_found;
    };
    if method != Method::GET {
        return (StatusCode::METHOD_NOT_ALLOWED, String::new());
    }
    let Ok(number) = number.parse::<u64>() else {
        return (StatusCode::BAD_REQUEST, String::new());
    };
    let Some(recorded) = ROUNDS.iter().find(|r| r.round == number) else {
        return not_found;
    };
    if number > state.latest {
        return not_found;
    }
    let (randomness, signature) = match state.mode {
        Mode::Honest | Mode::Stalled => (recorded.randomness.to_owned(), recorded.signature),
        Mode::TamperedRandomness => (flip_first_bit(recorded.randomness), recorded.signature),
        Mode::ForgedSignature => {
            let other = ROUNDS.iter().find(|r| r.round != number).unwrap();
            (other.randomness.to_owned(), other.signature)
        }
        Mode::Garbage => return (StatusCode::OK, "<html>relay error</html>".into()),
        Mode::Down => unreachable!("answered above"),
    };
    let body = json!({"round": number, "randomness": randomness, "signature": signature});
    (StatusCode::OK, body.to_string())
}

/// The hex text with its first digit's lowest bit flipped.
fn flip_first_bit(hex: &str) -> String {
    let first = u8::from_str_radix(&hex[..1], 16).unwrap() ^ 1;
    format!("{first:x}{}", &hex[1..])
}
