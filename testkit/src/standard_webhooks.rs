//! The Standard Webhooks specification's own Python library (`standardwebhooks` from PyPI, in
//! `.venv`: infra/requirements-dev.txt), as a judge nobody here wrote: it verifies what the API
//! signs, and signs what the API must verify.

use std::io::Write;
use std::process::{Command, Stdio};

/// What the library answered: `Ok` with its output, or `Err` with why it refused.
fn python(script: &str, vars: &[(&str, &str)], body: &[u8]) -> Result<String, String> {
    let mut child = Command::new(crate::moto::python_command())
        .arg("-c")
        .arg(script)
        .envs(vars.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the .venv's python runs (scripts/setup)");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(body)
        .expect("the body is written");
    let output = child.wait_with_output().expect("python ends");
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if output.status.success() {
        Ok(text)
    } else {
        Err(format!(
            "{text} {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// A message's secret, id and timestamp, as the scripts read them from their environment.
struct Message<'a> {
    secret: &'a str,
    id: &'a str,
    timestamp: String,
}

impl<'a> Message<'a> {
    fn new(secret: &'a str, id: &'a str, timestamp: i64) -> Self {
        Self {
            secret,
            id,
            timestamp: timestamp.to_string(),
        }
    }

    fn vars(&'a self, more: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut vars = vec![
            ("WEBHOOK_SECRET", self.secret),
            ("WEBHOOK_ID", self.id),
            ("WEBHOOK_TIMESTAMP", self.timestamp.as_str()),
        ];
        vars.extend_from_slice(more);
        vars
    }
}

/// Whether the library, given `secret`, accepts `body` sent with these three headers (its own
/// clock and tolerance: the timestamp must be within 5 minutes of now).
pub fn verifies(
    secret: &str,
    id: &str,
    timestamp: i64,
    signature: &str,
    body: &[u8],
) -> Result<(), String> {
    const SCRIPT: &str = r#"
import os, sys
from standardwebhooks.webhooks import Webhook
headers = {
    "webhook-id": os.environ["WEBHOOK_ID"],
    "webhook-timestamp": os.environ["WEBHOOK_TIMESTAMP"],
    "webhook-signature": os.environ["WEBHOOK_SIGNATURE"],
}
try:
    Webhook(os.environ["WEBHOOK_SECRET"]).verify(sys.stdin.buffer.read(), headers)
except Exception as error:
    print(type(error).__name__, error)
    sys.exit(1)
"#;
    let message = Message::new(secret, id, timestamp);
    python(
        SCRIPT,
        &message.vars(&[("WEBHOOK_SIGNATURE", signature)]),
        body,
    )
    .map(drop)
}

/// The `webhook-signature` value the library makes of `body` (UTF-8) as message `id` at
/// `timestamp`, with `secret`.
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &str) -> String {
    const SCRIPT: &str = r#"
import os, sys
from datetime import datetime, timezone
from standardwebhooks.webhooks import Webhook
at = datetime.fromtimestamp(int(os.environ["WEBHOOK_TIMESTAMP"]), tz=timezone.utc)
body = sys.stdin.buffer.read().decode("utf-8")
print(Webhook(os.environ["WEBHOOK_SECRET"]).sign(os.environ["WEBHOOK_ID"], at, body))
"#;
    let message = Message::new(secret, id, timestamp);
    python(SCRIPT, &message.vars(&[]), body.as_bytes()).expect("the library signs")
}
