//! CORS as the deployed API Gateway does it (`template.yaml`'s `CorsConfiguration`, from the
//! same declaration, `api::http::cors`): a preflight (`OPTIONS` with `Origin` and
//! `Access-Control-Request-Method`) is answered here, `204`, before any route or rate limit, with
//! the allowed methods, headers and max age for a listed origin and no CORS header for any other;
//! an actual request from a listed origin gets `Access-Control-Allow-Origin` and the exposed
//! headers on its answer, from any other origin none, and the browser keeps the answer from the
//! page. Any other `OPTIONS` is routed like every request (the `$default` route's 405).
//!
//! Not tower-http's `CorsLayer`: it answers every `OPTIONS` as a preflight and adds its
//! `Vary` and `Access-Control-Expose-Headers` for origins it does not allow, where API Gateway
//! sends a disallowed origin nothing.

use api::http::cors::{ALLOW_HEADERS, EXPOSE_HEADERS, MAX_AGE_SECONDS, allow_methods};
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use tower::ServiceExt;

/// The variable that lists the allowed origins, comma-separated.
pub const ORIGINS_VAR: &str = "LOCAL_API_CORS_ORIGINS";
/// The usual front-end dev servers' origins (Vite's 5173; 3000 of Create React App, Next.js).
pub const DEFAULT_ORIGINS: &str = "http://localhost:5173,http://localhost:3000";

/// The allowed origins and the header values answered to them.
#[derive(Debug, Clone)]
pub struct Cors {
    origins: Vec<HeaderValue>,
    allow_methods: HeaderValue,
    allow_headers: HeaderValue,
    expose_headers: HeaderValue,
    max_age: HeaderValue,
}

impl Cors {
    /// Allows `origins` (each `scheme://host[:port]`, as the template's `CorsAllowedOrigins`).
    pub fn new<'a>(origins: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let origins = origins
            .into_iter()
            .map(|origin| {
                check_origin(origin)?;
                HeaderValue::from_str(origin).map_err(|_| format!("not an origin: {origin}"))
            })
            .collect::<Result<_, String>>()?;
        let methods: Vec<String> = allow_methods().iter().map(ToString::to_string).collect();
        let joined = |names: &[&str]| HeaderValue::from_str(&names.join(",")).expect("ASCII names");
        Ok(Self {
            origins,
            allow_methods: HeaderValue::from_str(&methods.join(",")).expect("method names"),
            allow_headers: joined(ALLOW_HEADERS),
            expose_headers: joined(EXPOSE_HEADERS),
            max_age: HeaderValue::from(MAX_AGE_SECONDS),
        })
    }

    /// The origins of [`ORIGINS_VAR`], else [`DEFAULT_ORIGINS`]; empty: none.
    pub fn from_env() -> Result<Self, String> {
        let listed = std::env::var(ORIGINS_VAR).unwrap_or_else(|_| DEFAULT_ORIGINS.to_owned());
        Self::new(listed.split(',').map(str::trim).filter(|o| !o.is_empty()))
            .map_err(|problem| format!("{ORIGINS_VAR}: {problem}"))
    }

    /// No origin allowed: no browser on another origin reads an answer.
    pub fn none() -> Self {
        Self::new([]).expect("no origins")
    }

    /// The allowed origins, as the banner lists them.
    pub fn origins(&self) -> String {
        let origins: Vec<&str> = self
            .origins
            .iter()
            .filter_map(|o| o.to_str().ok())
            .collect();
        origins.join(", ")
    }

    /// `request` answered by `service`, or here when it is a preflight, with CORS headers for
    /// an allowed origin.
    pub async fn serve<S>(&self, request: Request, service: S) -> Result<Response, S::Error>
    where
        S: tower::Service<Request, Response = Response>,
    {
        let origin = self.allowed(request.headers());
        let preflight = is_preflight(&request);
        let mut answer = if preflight {
            let mut answer = Response::new(Body::empty());
            *answer.status_mut() = StatusCode::NO_CONTENT;
            answer
        } else {
            service.oneshot(request).await?
        };
        let Some(origin) = origin else {
            return Ok(answer);
        };
        let headers = answer.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        // What API Gateway adds: to a preflight, what may be sent; to an answer, what may be read.
        if preflight {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                self.allow_methods.clone(),
            );
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                self.allow_headers.clone(),
            );
            headers.insert(header::ACCESS_CONTROL_MAX_AGE, self.max_age.clone());
        } else {
            headers.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                self.expose_headers.clone(),
            );
        }
        Ok(answer)
    }

    /// The request's `Origin`, when it is one of the allowed.
    fn allowed(&self, headers: &HeaderMap) -> Option<HeaderValue> {
        let origin = headers.get(header::ORIGIN)?;
        self.origins.contains(origin).then(|| origin.clone())
    }
}

/// A CORS preflight, as API Gateway tells one: `OPTIONS` with `Origin` and
/// `Access-Control-Request-Method`.
fn is_preflight(request: &Request) -> bool {
    request.method() == Method::OPTIONS
        && request.headers().contains_key(header::ORIGIN)
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// `scheme://host[:port]` with http or https, a lower-case host and no path: what a browser
/// sends as `Origin`, and the template's `CorsAllowedOrigins` pattern.
fn check_origin(origin: &str) -> Result<(), String> {
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or_else(|| format!("not an http(s) origin: {origin}"))?;
    let (host, port) = rest.split_once(':').unwrap_or((rest, "1"));
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
    let port_ok = (1..=5).contains(&port.len()) && port.bytes().all(|b| b.is_ascii_digit());
    if host_ok && port_ok {
        Ok(())
    } else {
        Err(format!(
            "not an origin (scheme://host[:port], lower case, no path, no *): {origin}"
        ))
    }
}
