//! Logging: JSON lines in Lambda (one object per event, with the request id from the enclosing
//! span), readable lines for a person elsewhere. `RUST_LOG` sets the filter (default `info`).
//! Tokens, payloads and e-mail addresses are never logged (a test of every hostile input checks).

use tracing::Subscriber;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// `RUST_LOG`, or `info`.
pub fn env_filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"))
}

/// The Lambda log format, written to `writer`.
pub fn json_subscriber<W>(filter: EnvFilter, writer: W) -> impl Subscriber + Send + Sync + 'static
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(true)
        .with_span_list(false)
        .with_target(false)
        .with_ansi(false)
        .with_writer(writer)
        .finish()
}

/// JSON logs on standard output, for Lambda.
pub fn init_json() {
    let _ = tracing::subscriber::set_global_default(json_subscriber(env_filter(), std::io::stdout));
}

/// Readable logs on standard error, for a person at a terminal.
pub fn init_pretty() {
    tracing_subscriber::fmt()
        .with_env_filter(env_filter())
        .with_target(false)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .compact()
        .init();
}
