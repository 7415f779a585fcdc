//! Issue 46's delivery engine (`api::handlers::webhooks::attempt` over
//! `clients::webhooks::WebhookClient`) against receivers on loopback, reached only through the
//! test-only `Reach::AlsoLoopbackForTests`: the bytes sent are the bytes stored, signed so that
//! PyPI's `standardwebhooks` verifies them under either secret of a rotation; each answer
//! decides what Standard Webhooks says; and with the setting off, loopback is refused before
//! anything is sent.

use std::net::SocketAddr;
use std::time::Duration;

use api::handlers::webhooks::attempt;
use bytes::Bytes;
use clients::webhooks::{Reach, WebhookClient, check};
use domain::events::EventId;
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::{AttemptResult, Failure};
use domain::webhooks::endpoint::{
    DisabledReason, Endpoint, EndpointId, EndpointState, EndpointUrl, SecretText, Secrets,
    Subscription, UrlPolicy,
};
use domain::webhooks::retry::{Streak, Verdict};
use testkit::standard_webhooks::verifies;
use testkit::webhook_receiver::{Answer, WebhookReceiver};

const BODY: &str = r#"{"id":"evt_x","type":"wallet.linked","data":{"userId":"fan-1"}}"#;

fn endpoint(url: &str, policy: UrlPolicy) -> Endpoint {
    Endpoint {
        id: EndpointId::generate(),
        url: EndpointUrl::parse(url, policy).unwrap(),
        subscription: Subscription::All,
        description: "test".into(),
        state: EndpointState::Enabled,
        secrets: Secrets {
            current: SecretText::generate().unwrap(),
            previous: None,
        },
        failing_since: None,
        revision: 1,
    }
}

fn test_client() -> WebhookClient {
    WebhookClient::new(Reach::AlsoLoopbackForTests)
}

fn event_id() -> EventId {
    EventId::new(Timestamp::now())
}

#[tokio::test]
async fn the_stored_bytes_arrive_signed_under_both_secrets_of_a_rotation() {
    let receiver = WebhookReceiver::start(Answer::status(204)).await;
    let mut endpoint = endpoint(&receiver.url("/hooks"), UrlPolicy::AlsoLoopbackHttp);
    let old = endpoint.secrets.current.clone();
    let new = SecretText::generate().unwrap();
    endpoint.secrets = endpoint.secrets.rotated(new.clone(), Timestamp::now());
    let id = event_id();
    let body = Bytes::from_static(BODY.as_bytes());

    let attempted = attempt(&test_client(), &endpoint, &id, &body, 1, 0).await;
    assert_eq!(attempted.verdict, Verdict::Delivered);
    assert_eq!(attempted.attempt.result, AttemptResult::Status(204));
    assert_eq!(attempted.streak, Streak::Unchanged);

    let received = receiver.received();
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.body, BODY.as_bytes(), "the stored bytes, unchanged");
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("webhook-id"), Some(id.as_str()));
    let timestamp: i64 = request
        .header("webhook-timestamp")
        .unwrap()
        .parse()
        .unwrap();
    let signature = request.header("webhook-signature").unwrap();
    assert_eq!(signature.split(' ').count(), 2, "{signature}");
    for secret in [&new, &old] {
        assert_eq!(
            verifies(
                secret.expose(),
                id.as_str(),
                timestamp,
                signature,
                &request.body
            ),
            Ok(())
        );
    }
    let (_, stranger) = domain::webhooks::SigningSecret::generate().unwrap();
    assert!(verifies(&stranger, id.as_str(), timestamp, signature, &request.body).is_err());
}

/// What one answer decides: (the answer, the attempt's result, the verdict).
async fn answered(answer: Answer, client: WebhookClient) -> (AttemptResult, Verdict, usize) {
    let receiver = WebhookReceiver::start(answer).await;
    let endpoint = endpoint(&receiver.url("/"), UrlPolicy::AlsoLoopbackHttp);
    let body = Bytes::from_static(BODY.as_bytes());
    let attempted = attempt(&client, &endpoint, &event_id(), &body, 2, 30_000).await;
    (
        attempted.attempt.result,
        attempted.verdict,
        receiver.received().len(),
    )
}

#[tokio::test]
async fn each_answer_decides_as_standard_webhooks_says() {
    let schedule = Verdict::Retry(Duration::from_secs(300));
    let (result, verdict, _) = answered(Answer::status(410), test_client()).await;
    assert_eq!(
        (result, verdict),
        (AttemptResult::Status(410), Verdict::Gone)
    );

    let retry_after = Answer::Status(429, vec![("retry-after", "3600".into())], String::new());
    let (result, verdict, _) = answered(retry_after, test_client()).await;
    assert_eq!(
        (result, verdict),
        (
            AttemptResult::Status(429),
            Verdict::Retry(Duration::from_secs(3600))
        )
    );

    let (result, verdict, _) = answered(Answer::status(500), test_client()).await;
    assert_eq!(
        (result, verdict),
        (AttemptResult::Status(500), schedule.clone())
    );

    // A redirect is not followed: it is an answer like any other that is not 2xx.
    let elsewhere = WebhookReceiver::start(Answer::status(200)).await;
    let redirect = Answer::Status(302, vec![("location", elsewhere.url("/"))], String::new());
    let (result, verdict, hits) = answered(redirect, test_client()).await;
    assert_eq!(
        (result, verdict, hits),
        (AttemptResult::Status(302), schedule.clone(), 1)
    );
    assert_eq!(elsewhere.received().len(), 0, "the redirect was followed");

    // A receiver that stalls past the timeout (shortened here from 15 s).
    let stall = Answer::Stall(Duration::from_secs(30));
    let short = test_client().with_timeout(Duration::from_millis(300));
    let (result, verdict, _) = answered(stall, short).await;
    assert_eq!(
        (result, verdict),
        (AttemptResult::Failed(Failure::Timeout), schedule)
    );
}

#[tokio::test]
async fn the_answers_first_kilobyte_is_kept_and_a_failing_streak_starts() {
    let receiver = WebhookReceiver::start(Answer::Status(
        503,
        vec![],
        format!("down{}", "x".repeat(3000)),
    ))
    .await;
    let endpoint = endpoint(&receiver.url("/"), UrlPolicy::AlsoLoopbackHttp);
    let body = Bytes::from_static(BODY.as_bytes());
    let attempted = attempt(&test_client(), &endpoint, &event_id(), &body, 1, 0).await;
    assert_eq!(attempted.attempt.excerpt.len(), 1024);
    assert!(attempted.attempt.excerpt.starts_with("down"));
    assert!(matches!(attempted.streak, Streak::Started(_)));

    let mut failing = endpoint.clone();
    failing.failing_since = Timestamp::parse("2020-01-01T00:00:00Z").ok();
    let attempted = attempt(&test_client(), &failing, &event_id(), &body, 4, 0).await;
    assert_eq!(attempted.streak, Streak::Disable(DisabledReason::Failing));
}

#[tokio::test]
async fn without_the_test_setting_loopback_is_refused_before_anything_is_sent() {
    let receiver = WebhookReceiver::start(Answer::status(200)).await;
    let client = WebhookClient::new(Reach::PublicOnly);
    let body = Bytes::from_static(BODY.as_bytes());
    let port = receiver.port();
    for url in [
        format!("https://127.0.0.1:{port}/"),
        format!("https://localhost:{port}/"),
        format!("https://[::ffff:127.0.0.1]:{port}/"),
    ] {
        let endpoint = endpoint(&url, UrlPolicy::HttpsOnly);
        let attempted = attempt(&client, &endpoint, &event_id(), &body, 1, 0).await;
        assert_eq!(
            attempted.attempt.result,
            AttemptResult::Failed(Failure::RefusedAddress),
            "{url}"
        );
    }
    // Plain http is refused even where the test setting allows loopback, unless every address
    // is loopback.
    let endpoint = endpoint(&receiver.url("/"), UrlPolicy::AlsoLoopbackHttp);
    let attempted = attempt(&client, &endpoint, &event_id(), &body, 1, 0).await;
    assert_eq!(
        attempted.attempt.result,
        AttemptResult::Failed(Failure::RefusedAddress)
    );
    assert_eq!(receiver.received().len(), 0);
}

#[test]
fn one_special_address_among_public_ones_refuses_the_delivery() {
    let addresses =
        |list: &[&str]| -> Vec<SocketAddr> { list.iter().map(|a| a.parse().unwrap()).collect() };
    let public = addresses(&["93.184.216.34:443", "[2606:4700::1111]:443"]);
    assert_eq!(check("https", &public, Reach::PublicOnly), Ok(()));
    assert_eq!(
        check("http", &public, Reach::AlsoLoopbackForTests),
        Err(Failure::RefusedScheme)
    );
    for special in [
        "169.254.169.254:443",
        "10.0.0.1:443",
        "100.64.0.1:443",
        "[::1]:443",
        "[fd00::1]:443",
        "[::ffff:192.168.0.1]:443",
    ] {
        let mixed = addresses(&["93.184.216.34:443", special]);
        assert_eq!(
            check("https", &mixed, Reach::PublicOnly),
            Err(Failure::RefusedAddress),
            "{special}"
        );
        if special != "[::1]:443" {
            assert_eq!(
                check("https", &mixed, Reach::AlsoLoopbackForTests),
                Err(Failure::RefusedAddress),
                "{special}, with the test setting"
            );
        }
    }
    let loopback = addresses(&["127.0.0.1:8080"]);
    assert_eq!(
        check("http", &loopback, Reach::AlsoLoopbackForTests),
        Ok(())
    );
    assert_eq!(
        check("http", &loopback, Reach::PublicOnly),
        Err(Failure::RefusedAddress)
    );
    assert_eq!(check("https", &[], Reach::PublicOnly), Err(Failure::Dns));
}
