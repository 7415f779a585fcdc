//! The real `auth` binary (GET /api/auth/session, POST /api/auth/logout, POST
//! /api/auth/revocations, POST /api/auth/provider-events) and another signed-in function
//! (`me-cash`) beside it, each run through a Lambda Runtime API emulator against moto_server:
//! an ended session is refused by every function at its next request.

use serde_json::{Value, json};
use testkit::events::ApiEvent;
use testkit::purchases::{Function, PurchaseEnv, sibling_binary};
use testkit::tokens::{TestKey, claims, now};

const BINARY: &str = env!("CARGO_BIN_EXE_auth");
const OPERATOR: &str = "arn:aws:iam::123456789012:role/fan-api-operator";
/// The identity provider's webhook secret (Svix's, as Privy's dashboard shows it).
const PROVIDER_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// A token of `fan`'s session `sid` (none: a token without one), issued at `iat`.
fn session_token(fan: &str, sid: Option<&str>, iat: i64) -> String {
    let mut claims = claims(fan, None);
    claims["iat"] = iat.into();
    if let Some(sid) = sid {
        claims["sid"] = sid.into();
    }
    TestKey::Rsa.sign(&claims)
}

async fn spawn(env: &PurchaseEnv) -> (Function, Function) {
    let me_cash = sibling_binary(BINARY, "me-cash");
    let vars = [("AUTH_PROVIDER_WEBHOOK_SECRETS", PROVIDER_SECRET)];
    (
        env.spawn(BINARY, &vars).await,
        env.spawn(
            me_cash.to_str().unwrap(),
            &[("CURSOR_SECRET", testkit::CURSOR_SECRET)],
        )
        .await,
    )
}

async fn cash(me_cash: &Function, token: &str) -> (u16, Option<String>) {
    let answer = me_cash
        .call(&ApiEvent::get("/api/me/cash").bearer(token))
        .await;
    (answer.status, answer.code().map(str::to_owned))
}

fn logout(token: &str, scope: &str) -> ApiEvent {
    ApiEvent::post("/api/auth/logout")
        .bearer(token)
        .json(&json!({ "scope": scope }).to_string())
}

#[tokio::test]
async fn a_logout_ends_this_session_everywhere_at_the_next_request_and_no_other() {
    let env = PurchaseEnv::new().await;
    let (auth, me_cash) = spawn(&env).await;
    let issued = now() - 60;
    let (this, other) = (
        session_token("fan-1", Some("s-this"), issued),
        session_token("fan-1", Some("s-other"), issued),
    );
    let session = auth
        .call(&ApiEvent::get("/api/auth/session").bearer(&this))
        .await;
    assert_eq!(session.status, 200, "{session:?}");
    assert_eq!(session.body["userId"], "fan-1");
    assert_eq!(session.body["sessionId"], "s-this");
    assert_eq!(session.body["valid"], true);
    assert_eq!(cash(&me_cash, &this).await.0, 200);

    assert_eq!(auth.call(&logout(&this, "current")).await.status, 204);
    assert_eq!(
        cash(&me_cash, &this).await,
        (401, Some("session_revoked".into()))
    );
    assert_eq!(
        cash(&me_cash, &other).await.0,
        200,
        "another session goes on"
    );
    let ended = auth
        .call(&ApiEvent::get("/api/auth/session").bearer(&this))
        .await;
    assert_eq!(
        (&ended.body["valid"], &ended.body["ended"]),
        (&json!(false), &json!("revoked"))
    );
    // Ended already: logging out again is done, not refused (RFC 7009's rule).
    assert_eq!(auth.call(&logout(&this, "current")).await.status, 204);
}

#[tokio::test]
async fn all_ends_every_session_so_far_and_others_keeps_the_callers() {
    let env = PurchaseEnv::new().await;
    let (auth, me_cash) = spawn(&env).await;
    let earlier = now() - 60;
    let (a, b, c) = (
        session_token("fan-1", Some("a"), earlier),
        session_token("fan-1", Some("b"), earlier),
        session_token("fan-1", Some("c"), earlier),
    );
    assert_eq!(auth.call(&logout(&a, "others")).await.status, 204);
    assert_eq!(cash(&me_cash, &a).await.0, 200, "the caller's is kept");
    assert_eq!(cash(&me_cash, &b).await.0, 401);
    assert_eq!(auth.call(&logout(&a, "all")).await.status, 204);
    assert_eq!(cash(&me_cash, &a).await.0, 401);
    assert_eq!(cash(&me_cash, &c).await.0, 401);
    // A sign-in after the logout is a new session.
    let later = session_token("fan-1", Some("d"), now() + 2);
    assert_eq!(cash(&me_cash, &later).await.0, 200);
    // `others` needs a session id to keep.
    let no_sid = session_token("fan-2", None, now());
    let refused = auth.call(&logout(&no_sid, "others")).await;
    assert_eq!(
        (refused.status, refused.code()),
        (400, Some("invalid_body"))
    );
    assert_eq!(auth.call(&logout(&no_sid, "current")).await.status, 204);
    assert_eq!(
        cash(&me_cash, &no_sid).await.0,
        401,
        "ended by its token's digest"
    );
}

#[tokio::test]
async fn an_operator_signed_by_iam_ends_a_fans_sessions_and_no_one_else_can() {
    let env = PurchaseEnv::new().await;
    let (auth, me_cash) = spawn(&env).await;
    let token = session_token("fan-1", None, now() - 60);
    let revoke =
        || ApiEvent::post("/api/auth/revocations").json(&json!({"userId": "fan-1"}).to_string());
    let refused = auth.call(&revoke().bearer(&token)).await;
    assert_eq!(
        (refused.status, refused.code()),
        (403, Some("operator_required"))
    );
    assert_eq!(cash(&me_cash, &token).await.0, 200);
    assert_eq!(auth.call(&revoke().iam(OPERATOR)).await.status, 204);
    assert_eq!(
        cash(&me_cash, &token).await,
        (401, Some("session_revoked".into()))
    );
}

/// `event` as the identity provider sends it: signed by PyPI's standardwebhooks (Svix's scheme).
fn provider_event(id: &str, event: &Value, secret: &str) -> ApiEvent {
    let body = event.to_string();
    let timestamp = now();
    let signature = testkit::standard_webhooks::signature(secret, id, timestamp, &body);
    ApiEvent::post("/api/auth/provider-events")
        .header("webhook-id", id)
        .header("webhook-timestamp", &timestamp.to_string())
        .header("webhook-signature", &signature)
        .json(&body)
}

#[tokio::test]
async fn the_providers_signed_events_end_a_session_or_an_account_once_and_only_signed() {
    let env = PurchaseEnv::new().await;
    let (auth, me_cash) = spawn(&env).await;
    let issued = now() - 60;
    let (s1, s2) = (
        session_token("fan-1", Some("s1"), issued),
        session_token("fan-1", Some("s2"), issued),
    );
    let revoked = json!({"type": "user.session.revoked",
        "data": {"user_id": "fan-1", "session_id": "s1"}});
    let forged = provider_event(
        "msg_1",
        &revoked,
        "whsec_dGhpcyBpcyBub3QgdGhlIHByb3ZpZGVyJ3Mga2V5IQ==",
    );
    let answer = auth.call(&forged).await;
    assert_eq!(
        (answer.status, answer.code()),
        (400, Some("invalid_signature"))
    );
    assert_eq!(
        cash(&me_cash, &s1).await.0,
        200,
        "a forged event changes nothing"
    );

    for _ in 0..2 {
        let answer = auth
            .call(&provider_event("msg_2", &revoked, PROVIDER_SECRET))
            .await;
        assert_eq!(answer.status, 204, "{answer:?}");
    }
    assert_eq!(cash(&me_cash, &s1).await.0, 401);
    assert_eq!(cash(&me_cash, &s2).await.0, 200);
    let ignored = json!({"type": "user.created", "data": {"user_id": "fan-9"}});
    let answer = auth
        .call(&provider_event("msg_3", &ignored, PROVIDER_SECRET))
        .await;
    assert_eq!(answer.status, 204);

    let deleted = json!({"type": "user.deleted", "data": {"user_id": "fan-1"}});
    let answer = auth
        .call(&provider_event("msg_4", &deleted, PROVIDER_SECRET))
        .await;
    assert_eq!(answer.status, 204);
    let refused = me_cash
        .call(&ApiEvent::get("/api/me/cash").bearer(&s2))
        .await;
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.body["error"]["message"],
        "This account was deleted."
    );
    let after = session_token("fan-1", Some("s3"), now() + 5);
    assert_eq!(cash(&me_cash, &after).await.0, 401, "whenever issued");
}

#[tokio::test]
async fn without_the_providers_secret_the_function_stops_naming_it() {
    let env = PurchaseEnv::new().await;
    let vars = env.vars(&[]);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    testkit::runtime_api::assert_init_fails_naming(BINARY, &vars, "AUTH_PROVIDER_WEBHOOK_SECRETS")
        .await;
}
