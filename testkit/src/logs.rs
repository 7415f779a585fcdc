//! Captures what the code under test logs, in the production (Lambda JSON) format, at debug
//! level, for the current thread (a `#[tokio::test]` runs on one thread).

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing::subscriber::DefaultGuard;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::MakeWriter;

#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<u8>>>);

pub struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'w> MakeWriter<'w> for Logs {
    type Writer = LogWriter;

    fn make_writer(&'w self) -> LogWriter {
        LogWriter(self.0.clone())
    }
}

/// Starts capturing; logging goes back to what it was when the guard drops.
pub fn capture() -> (Logs, DefaultGuard) {
    let logs = Logs::default();
    let subscriber = shared::telemetry::json_subscriber(
        Targets::new().with_default(tracing::Level::DEBUG),
        logs.clone(),
    );
    (logs.clone(), tracing::subscriber::set_default(subscriber))
}

impl Logs {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// Panics when any of `secrets` appears in the logs (and when nothing was logged at all, since
    /// then the check proves nothing).
    pub fn assert_free_of<S: AsRef<str>>(&self, secrets: &[S]) {
        let text = self.text();
        assert!(!text.is_empty(), "nothing was logged");
        for secret in secrets {
            let secret = secret.as_ref();
            assert!(!secret.is_empty());
            assert!(
                !text.contains(secret),
                "the logs hold a secret ({secret}):\n{text}"
            );
        }
    }
}
