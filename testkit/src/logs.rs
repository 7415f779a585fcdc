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

/// The process's global subscriber in tests that capture: it logs nothing, but calls every
/// callsite "sometimes" interesting. tracing caches a callsite's interest from the subscribers
/// alive when it is first hit; a test that hit one while no capture was alive would cache
/// "never", and a capturing test running beside it would miss that event (seen: a top-up test
/// failing 3 runs in 5 after its file was split).
struct Undecided;

impl tracing::Subscriber for Undecided {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        false
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Starts capturing; logging goes back to what it was when the guard drops.
pub fn capture() -> (Logs, DefaultGuard) {
    static UNDECIDED: std::sync::Once = std::sync::Once::new();
    // Another global subscriber set first (a test's own) keeps its place.
    UNDECIDED.call_once(|| drop(tracing::subscriber::set_global_default(Undecided)));
    let logs = Logs::default();
    let subscriber = lambda::telemetry::json_subscriber(
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
