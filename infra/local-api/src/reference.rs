//! The API reference a person reads, at `/docs`: Swagger UI (`swagger-ui-dist`, pinned in
//! `infra/local-api/docs-viewer/package-lock.json`, installed by scripts/setup's `npm ci`) over
//! the document this server serves at `/openapi.json`, whose local server is this server's own
//! address ([`served_document`]). The viewer's two files are read from the repository as asked
//! (no CDN: the page loads nothing from elsewhere); without them `/docs` says how to install
//! them. Why Swagger UI: docs/api.md, "The reference page".

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;

/// Where `npm ci` puts the viewer.
const VIEWER_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/docs-viewer/node_modules/swagger-ui-dist"
);

/// The viewer's files the page loads, and their types: nothing else of the directory is served.
const ASSETS: &[(&str, &str)] = &[
    ("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
    ("swagger-ui.css", "text/css; charset=utf-8"),
];

const PAGE: &str = include_str!("reference.html");

/// `/docs` and its assets; any other path under it goes where every unrouted request goes (the
/// `$default` route's JSON 404).
pub fn router() -> Router {
    ASSETS.iter().fold(
        Router::new().route("/docs", get(page)),
        |router, &(file, content_type)| {
            router.route(
                &format!("/docs/{file}"),
                get(move || std::future::ready(asset(file, content_type))),
            )
        },
    )
}

async fn page() -> Response {
    if std::path::Path::new(VIEWER_DIR).is_dir() {
        Html(PAGE).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "The reference page's viewer is not installed: run scripts/setup (or npm ci \
                 --ignore-scripts --prefix infra/local-api/docs-viewer). The document itself is \
                 at /openapi.json.\n(looked in {VIEWER_DIR})\n"
            ),
        )
            .into_response()
    }
}

fn asset(file: &str, content_type: &'static str) -> Response {
    match std::fs::read(format!("{VIEWER_DIR}/{file}")) {
        Ok(bytes) => ([(header::CONTENT_TYPE, content_type)], bytes).into_response(),
        Err(error) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{file}: {error}: run scripts/setup\n"),
        )
            .into_response(),
    }
}

/// The document as this server serves it: its local server is `base` (the port it listens on),
/// listed first, so that the reference page's requests come here.
pub fn served_document(mut document: Value, base: &str) -> Value {
    if let Some(servers) = document["servers"].as_array_mut() {
        let local = servers
            .iter()
            .position(|server| server["url"].as_str().is_some_and(is_loopback_url));
        if let Some(local) = local {
            let mut server = servers.remove(local);
            server["url"] = Value::from(base);
            servers.insert(0, server);
        }
    }
    document
}

fn is_loopback_url(url: &str) -> bool {
    url.starts_with("http://127.0.0.1:") || url.starts_with("http://localhost:")
}
