//! Logging: JSON lines in Lambda (one object per event, with the invocation's request id from
//! the enclosing span), readable lines for a person elsewhere. `RUST_LOG` sets the filter
//! (default `info`). Tokens, payloads and e-mail addresses are never logged by this crate.

use tracing_subscriber::EnvFilter;

fn filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"))
}

/// JSON logs, for Lambda.
pub fn init_json() {
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter())
        .with_current_span(true)
        .with_span_list(false)
        .with_target(false)
        .with_ansi(false)
        .init();
}

/// Readable logs on standard error, for a person at a terminal.
pub fn init_pretty() {
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_target(false)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .compact()
        .init();
}
