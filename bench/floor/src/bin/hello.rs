//! The floor of the Lambda benchmarks: a hello-world lambda_http function, built with the same
//! features and release profile as the real functions, doing nothing else.

use std::convert::Infallible;

use lambda_http::{Body, Request, Response, service_fn};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    lambda_http::run(service_fn(|_request: Request| async {
        let mut response = Response::new(Body::Text(r#"{"hello":"world"}"#.to_owned()));
        response
            .headers_mut()
            .insert("content-type", "application/json".parse().expect("valid"));
        Ok::<_, Infallible>(response)
    }))
    .await
}
