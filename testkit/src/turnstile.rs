//! A Cloudflare Turnstile siteverify stub on a free loopback port
//! (`POST /turnstile/v0/siteverify`): it checks the form it receives (`application/x-www-form-
//! urlencoded`, `secret` and `response` required, `remoteip` and `idempotency_key` recorded)
//! and answers as Cloudflare documents: `success`, `challenge_ts`, `hostname`, `action`,
//! `cdata`, `error-codes`. Tokens come from [`TurnstileStub::solve`] (the widget's part): each
//! passes once with [`SITE_SECRET`], then is `timeout-or-duplicate` (a repeat of the same
//! `idempotency_key` is answered as the first was). Cloudflare's published test secrets are
//! honoured whatever the token: always pass, always fail, already spent. Written from
//! Cloudflare's documentation, not read from the code under test.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use hyper::StatusCode;
use serde_json::{Value, json};

/// Cloudflare's test secret whose every token passes.
pub const ALWAYS_PASSES: &str = "1x0000000000000000000000000000000AA";
/// Cloudflare's test secret whose every token fails.
pub const ALWAYS_FAILS: &str = "2x0000000000000000000000000000000AA";
/// Cloudflare's test secret whose every token is already spent.
pub const ALREADY_SPENT: &str = "3x0000000000000000000000000000000AA";
/// The stub's own widget secret: tokens are judged as solved ([`TurnstileStub::solve`]).
pub const SITE_SECRET: &str = "0x4AAAAAAAstubstubstubstubstubstub";
/// What the test secrets answer for `hostname` (Cloudflare's dummy answers name example.com).
pub const TEST_HOSTNAME: &str = "example.com";

/// One solved challenge.
#[derive(Debug, Clone)]
struct Solved {
    action: String,
    hostname: String,
    challenge_ts: String,
    /// The `idempotency_key` of the siteverify that spent it, and its answer.
    spent: Option<(Option<String>, Value)>,
}

#[derive(Default)]
struct State {
    received: Vec<Vec<(String, String)>>,
    solved: HashMap<String, Solved>,
    /// Answer `internal-error` to the next this many requests.
    internal_errors: usize,
    next: u64,
}

pub struct TurnstileStub {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl TurnstileStub {
    pub async fn start() -> Self {
        let (addr, state, task) =
            crate::spawn_json_stub("Turnstile", |state: &mut State, parts, body| {
                let form_typed = parts
                    .headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
                if parts.method != hyper::Method::POST
                    || parts.uri.path() != "/turnstile/v0/siteverify"
                {
                    (StatusCode::NOT_FOUND, json!({}))
                } else if !form_typed {
                    (StatusCode::OK, failed("bad-request"))
                } else {
                    let form = url::form_urlencoded::parse(body).into_owned().collect();
                    (StatusCode::OK, answer(state, form))
                }
            })
            .await;
        Self { addr, state, task }
    }

    /// One stub for a whole test binary, served by a thread and runtime of its own, so that
    /// tests (each on its runtime) and states built outside any runtime can share it.
    pub fn shared() -> &'static TurnstileStub {
        static STUB: std::sync::OnceLock<TurnstileStub> = std::sync::OnceLock::new();
        STUB.get_or_init(|| {
            let (started, stub) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime for the Turnstile stub");
                runtime.block_on(async move {
                    let _ = started.send(TurnstileStub::start().await);
                    std::future::pending::<()>().await
                });
            });
            stub.recv().expect("the Turnstile stub started")
        })
    }

    /// `TURNSTILE_SITEVERIFY_URL` for this stub.
    pub fn url(&self) -> String {
        format!("http://{}/turnstile/v0/siteverify", self.addr)
    }

    /// A token, as the widget rendered with `action` on `hostname` hands it, solved at
    /// `challenge_ts` (RFC 3339). Turnstile renders no widget whose `action` is more than 32
    /// characters or holds anything but `[A-Za-z0-9_-]`: neither does this.
    pub fn solve(&self, action: &str, hostname: &str, challenge_ts: &str) -> String {
        assert!(
            action.len() <= 32
                && action
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "Turnstile renders no widget with action {action:?}"
        );
        let mut state = self.state.lock().unwrap();
        state.next += 1;
        let token = format!("0.stub-token-{}.{}", state.next, "x".repeat(40));
        state.solved.insert(
            token.clone(),
            Solved {
                action: action.to_owned(),
                hostname: hostname.to_owned(),
                challenge_ts: challenge_ts.to_owned(),
                spent: None,
            },
        );
        token
    }

    /// The next `count` requests are answered `internal-error`.
    pub fn internal_errors(&self, count: usize) {
        self.state.lock().unwrap().internal_errors = count;
    }

    /// Every form received so far, in order.
    pub fn received(&self) -> Vec<Vec<(String, String)>> {
        self.state.lock().unwrap().received.clone()
    }
}

impl Drop for TurnstileStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn failed(code: &str) -> Value {
    json!({"success": false, "error-codes": [code], "messages": []})
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

fn answer(state: &mut State, form: Vec<(String, String)>) -> Value {
    state.received.push(form.clone());
    if state.internal_errors > 0 {
        state.internal_errors -= 1;
        return failed("internal-error");
    }
    let Some(secret) = field(&form, "secret").filter(|s| !s.is_empty()) else {
        return failed("missing-input-secret");
    };
    let Some(token) = field(&form, "response").filter(|s| !s.is_empty()) else {
        return failed("missing-input-response");
    };
    if token.len() > 2048 {
        return failed("invalid-input-response");
    }
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let solved = state.solved.get_mut(token);
    match secret {
        ALWAYS_PASSES => {
            let (action, hostname, ts) = solved
                .map_or((String::new(), TEST_HOSTNAME.to_owned(), now), |s| {
                    (s.action.clone(), s.hostname.clone(), s.challenge_ts.clone())
                });
            json!({"success": true, "challenge_ts": ts, "hostname": hostname, "error-codes": [],
                   "action": action, "cdata": "", "metadata": {"interactive": false}})
        }
        ALWAYS_FAILS => failed("invalid-input-response"),
        ALREADY_SPENT => failed("timeout-or-duplicate"),
        SITE_SECRET => {
            let Some(solved) = solved else {
                return failed("invalid-input-response");
            };
            let key = field(&form, "idempotency_key").map(str::to_owned);
            match &solved.spent {
                Some((spent_key, answer)) if key.is_some() && *spent_key == key => answer.clone(),
                Some(_) => failed("timeout-or-duplicate"),
                None => {
                    let answer = json!({"success": true, "challenge_ts": solved.challenge_ts,
                        "hostname": solved.hostname, "error-codes": [], "action": solved.action,
                        "cdata": "", "metadata": {"interactive": false}});
                    solved.spent = Some((key, answer.clone()));
                    answer
                }
            }
        }
        _ => failed("invalid-input-secret"),
    }
}

/// The hostname [`TurnstileStub::solve`]'s tokens are solved on in the functions' tests, and the
/// one their `HUMAN_CHECK_HOSTNAMES` names (beside another, to show the list is read).
pub const FUNCTION_HOSTNAME: &str = "fans.example";

/// A function's human-check variables for siteverify at `url` with `secret`, as
/// `PurchaseEnv::spawn` takes them (with `more` after).
pub fn function_vars<'a>(
    url: &'a str,
    secret: &'a str,
    more: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut vars = vec![
        ("TURNSTILE_SECRET", secret),
        ("TURNSTILE_SITEVERIFY_URL", url),
        ("HUMAN_CHECK_HOSTNAMES", "app.example, fans.example"),
    ];
    vars.extend_from_slice(more);
    vars
}

/// The human check of a handler under test: the shared stub, [`SITE_SECRET`], tokens solved on
/// [`FUNCTION_HOSTNAME`].
pub fn human_check() -> api::http::human_check::HumanCheck {
    api::http::human_check::HumanCheck {
        siteverify: clients::siteverify::Siteverify::new(
            &TurnstileStub::shared().url(),
            domain::secret::Secret::new(SITE_SECRET),
        ),
        hostnames: vec![FUNCTION_HOSTNAME.into()],
    }
}
