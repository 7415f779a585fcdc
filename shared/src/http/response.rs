//! JSON responses.

use lambda_http::http::{HeaderValue, StatusCode, header};
use lambda_http::{Body, Response};
use serde::Serialize;

/// A response with `status`, `content-type: application/json` and `value` serialised as its body.
pub fn json_response<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> Response<Body> {
    // Serialising our own response types cannot fail: they hold only strings, numbers, maps with
    // string keys and already-validated raw JSON.
    json_text_response(
        status,
        serde_json::to_string(value).expect("response types always serialise"),
    )
}

/// A response with `status`, `content-type: application/json` and `text`, which is JSON.
pub fn json_text_response(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Body::Text(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
