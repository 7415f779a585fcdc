//! The floor of the local-api load test: a bare hyper server answering every request with the
//! bytes of a file, as JSON. `floor-server PORT FILE`.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(port), Some(file)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: floor-server PORT FILE");
        std::process::exit(2);
    };
    let body = Bytes::from(std::fs::read(file).expect("read the body file"));
    let port: u16 = port.parse().expect("a port number");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let body = body.clone();
            tokio::spawn(async move {
                let service = service_fn(move |_request| {
                    let body = body.clone();
                    async move {
                        let mut response = hyper::Response::new(Full::new(body));
                        response
                            .headers_mut()
                            .insert("content-type", "application/json".parse().expect("valid"));
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}
