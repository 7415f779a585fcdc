//! Logging: JSON lines in Lambda (one object per event, with the request id from the enclosing
//! span), readable lines for a person elsewhere. `RUST_LOG` sets the filter, as `level` or
//! `target=level` directives separated by commas (default `info`). Tokens, payloads and e-mail
//! addresses are never logged (a test of every hostile input checks).

use tracing::Subscriber;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;

/// `RUST_LOG`, or `info` when it is unset or unreadable.
pub fn log_filter() -> Targets {
    std::env::var("RUST_LOG")
        .ok()
        .and_then(|directives| directives.parse().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO))
}

/// The Lambda log format, written to `writer`.
pub fn json_subscriber<W>(filter: Targets, writer: W) -> impl Subscriber + Send + Sync + 'static
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let layer = tracing_subscriber::fmt::layer()
        .json()
        .with_current_span(true)
        .with_span_list(false)
        .with_target(false)
        .with_ansi(false)
        .with_writer(writer);
    tracing_subscriber::registry().with(layer).with(filter)
}

/// JSON logs on standard output, for Lambda.
pub fn init_json() {
    let _ = tracing::subscriber::set_global_default(json_subscriber(log_filter(), std::io::stdout));
}

/// The fields of a readable line: `name=value`, a message bare, without styles. The default
/// writer paints each field name (a no-op style when the output is no terminal, still through
/// the formatting machinery), which was half of what the request span of every request cost
/// local-api (BENCHMARKS.md).
fn plain_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> + 'static {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
        if field.name() == "message" {
            write!(writer, "{value:?}")
        } else {
            write!(writer, "{field}={value:?}")
        }
    })
    .delimited(" ")
}

/// Readable logs on standard error, for a person at a terminal.
pub fn init_pretty() {
    let layer = tracing_subscriber::fmt::layer()
        .with_target(false)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .fmt_fields(plain_fields())
        .compact();
    let _ = tracing::subscriber::set_global_default(
        tracing_subscriber::registry()
            .with(layer)
            .with(log_filter()),
    );
}
