//! API Gateway HTTP API (payload format 2.0) events, as API Gateway sends them to a function.

use std::sync::Arc;

use api::http::routes::Routes;
use base64::Engine;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
pub struct ApiEvent {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    base64: bool,
    source_ip: String,
    /// The IAM caller API Gateway's `AWS_IAM` authorizer recorded (its ARN).
    iam_caller: Option<String>,
}

impl ApiEvent {
    pub fn new(method: &str, path: &str) -> Self {
        Self {
            method: method.into(),
            path: path.into(),
            query: String::new(),
            headers: Vec::new(),
            body: None,
            base64: false,
            source_ip: "192.0.2.1".into(),
            iam_caller: None,
        }
    }

    pub fn get(path: &str) -> Self {
        Self::new("GET", path)
    }

    pub fn post(path: &str) -> Self {
        Self::new("POST", path)
    }

    /// The raw query string, without `?`.
    pub fn query(mut self, query: &str) -> Self {
        self.query = query.into();
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    pub fn bearer(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// A JSON body with `content-type: application/json`.
    pub fn json(self, body: &str) -> Self {
        self.header("content-type", "application/json").body(body)
    }

    /// The TCP peer API Gateway saw (`requestContext.http.sourceIp`; `192.0.2.1` by default).
    pub fn source_ip(mut self, ip: &str) -> Self {
        self.source_ip = ip.into();
        self
    }

    /// Signed with SigV4 by `arn`, as API Gateway's `AWS_IAM` authorizer passes it on
    /// (`requestContext.authorizer.iam`).
    pub fn iam(mut self, arn: &str) -> Self {
        self.iam_caller = Some(arn.into());
        self
    }

    /// Sends the body base64-encoded, as API Gateway does for binary media.
    pub fn base64(mut self) -> Self {
        self.base64 = true;
        self
    }

    /// The event JSON.
    pub fn to_json(&self) -> Value {
        let mut headers = serde_json::Map::new();
        for (name, value) in &self.headers {
            // API Gateway joins repeated headers with commas.
            let joined = match headers.get(name) {
                Some(Value::String(earlier)) => format!("{earlier},{value}"),
                _ => value.clone(),
            };
            headers.insert(name.clone(), joined.into());
        }
        let body = self.body.as_ref().map(|bytes| {
            if self.base64 {
                base64::engine::general_purpose::STANDARD.encode(bytes)
            } else {
                String::from_utf8(bytes.clone()).expect("a non-base64 body must be UTF-8")
            }
        });
        let authorizer = self.iam_caller.as_ref().map(|arn| {
            json!({"iam": {
                "accessKey": "AKIAIOSFODNN7EXAMPLE",
                "accountId": "123456789012",
                "callerId": "AIDAJQABLZS4A3QDU576Q",
                "cognitoIdentity": null,
                "principalOrgId": null,
                "userArn": arn,
                "userId": "AIDAJQABLZS4A3QDU576Q"
            }})
        });
        let mut event = json!({
            "version": "2.0",
            "routeKey": "$default",
            "rawPath": self.path,
            "rawQueryString": self.query,
            "headers": headers,
            "requestContext": {
                "accountId": "123456789012",
                "apiId": "api-id",
                "domainName": "id.execute-api.us-east-1.amazonaws.com",
                "domainPrefix": "id",
                "http": {
                    "method": self.method,
                    "path": self.path,
                    "protocol": "HTTP/1.1",
                    "sourceIp": self.source_ip,
                    "userAgent": "testkit"
                },
                "requestId": "test-request-id",
                "routeKey": "$default",
                "stage": "$default",
                "time": "21/Nov/2026:05:00:00 +0000",
                "timeEpoch": 1795237200000u64
            },
            "body": body,
            "isBase64Encoded": self.base64
        });
        if let Some(authorizer) = authorizer {
            event["requestContext"]["authorizer"] = authorizer;
        }
        event
    }

    /// The request lambda_http builds from this event.
    pub fn request(&self) -> lambda_http::Request {
        lambda_http::request::from_str(&self.to_json().to_string())
            .expect("valid API Gateway v2 event")
    }
}

/// Sends `request` to the function of `routes` over `state` (its router,
/// [`Routes::function_app`], in the API's layers), as the function serves it, and gives the
/// answer as lambda_http's.
pub async fn call<St: Send + Sync + 'static>(
    routes: Routes<Arc<St>>,
    state: &Arc<St>,
    request: lambda_http::Request,
) -> lambda_http::Response<lambda_http::Body> {
    use tower::ServiceExt;
    // Not rate limited: the limits have their own tests (crates/api/tests/rate_limits.rs).
    let response = api::http::layers::api_layers(routes.function_app(state.clone()), None)
        .oneshot(request)
        .await
        .unwrap_or_else(|never| match never {});
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .expect("a response body");
    let body = match String::from_utf8(bytes.to_vec()) {
        Ok(text) => lambda_http::Body::Text(text),
        Err(error) => lambda_http::Body::Binary(error.into_bytes()),
    };
    lambda_http::Response::from_parts(parts, body)
}

/// Status and JSON body of a response.
pub fn parts(response: &lambda_http::Response<lambda_http::Body>) -> (u16, Value) {
    let body = serde_json::from_slice(response.body().as_ref()).unwrap_or(Value::Null);
    (response.status().as_u16(), body)
}
