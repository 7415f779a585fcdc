//! Webhook delivery (issue 46; docs/events.md, "Delivery"): the attempt engine both the Lambda
//! sender and local-api run ([`attempt`]: sign, POST through [`clients::webhooks`], judge the
//! answer with [`domain::webhooks::retry`]).

use bytes::Bytes;
use clients::webhooks::{Outgoing, WebhookClient};
use domain::events::EventId;
use domain::timestamp::Timestamp;
use domain::webhooks::delivery::{Attempt, AttemptResult};
use domain::webhooks::endpoint::Endpoint;
use domain::webhooks::retry::{Answer, Streak, Verdict, streak, verdict};
use domain::webhooks::signature_header;

/// An attempt made: its record, what it decides for the delivery and for the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempted {
    pub attempt: Attempt,
    pub verdict: Verdict,
    pub streak: Streak,
}

/// Makes attempt `number` of delivering `body` (event `event_id`'s bytes as stored) to
/// `endpoint`, signed with every secret that signs now; `jitter` is random (the retry's).
pub async fn attempt(
    client: &WebhookClient,
    endpoint: &Endpoint,
    event_id: &EventId,
    body: &Bytes,
    number: u32,
    jitter: u64,
) -> Attempted {
    let at = Timestamp::now();
    let timestamp = i64::try_from(at.unix_seconds()).unwrap_or(i64::MAX);
    let signature = signature_header(
        &endpoint.secrets.signing(at),
        event_id.as_str(),
        timestamp,
        body,
    );
    let sent = client
        .post(Outgoing {
            url: endpoint.url.as_str(),
            id: event_id.as_str(),
            timestamp,
            signature: &signature,
            body,
        })
        .await;
    let (answer, result, excerpt) = match sent.result {
        Ok(answered) => (
            Answer::Status {
                code: answered.status,
                retry_after: answered.retry_after,
            },
            AttemptResult::Status(answered.status),
            answered.excerpt,
        ),
        Err(failure) => (
            Answer::Failed(failure),
            AttemptResult::Failed(failure),
            String::new(),
        ),
    };
    let now = Timestamp::now();
    let verdict = verdict(&answer, number, now, jitter);
    Attempted {
        streak: streak(&verdict, endpoint.failing_since, now),
        verdict,
        attempt: Attempt {
            number,
            at,
            result,
            latency_ms: u64::try_from(sent.latency.as_millis()).unwrap_or(u64::MAX),
            excerpt,
        },
    }
}
