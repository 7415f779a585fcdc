//! A webhook receiver on a free loopback port: it keeps every request it gets (headers and body
//! bytes) and answers each with the next scripted [`Answer`], or its default once the script is
//! spent. Stopped when dropped.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Response;

/// How the receiver answers one request.
#[derive(Debug, Clone)]
pub enum Answer {
    /// This status, these headers and this body.
    Status(u16, Vec<(&'static str, String)>, String),
    /// Answers 200 only after `Duration`: longer than the sender's 15 s timeout, no answer; shorter,
    /// a slow success.
    Stall(Duration),
}

impl Answer {
    pub fn status(code: u16) -> Self {
        Self::Status(code, Vec::new(), String::new())
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header == name)
            .map(|(_, value)| value.as_str())
    }
}

pub struct WebhookReceiver {
    addr: SocketAddr,
    script: Arc<Mutex<VecDeque<Answer>>>,
    received: Arc<Mutex<Vec<Request>>>,
    task: tokio::task::JoinHandle<()>,
}

impl WebhookReceiver {
    /// A receiver answering `default` once its script is spent.
    pub async fn start(default: Answer) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the receiver");
        let addr = listener.local_addr().expect("bound");
        let script = Arc::new(Mutex::new(VecDeque::new()));
        let received = Arc::new(Mutex::new(Vec::new()));
        let (task_script, task_received) = (script.clone(), received.clone());
        let task = crate::fault_proxy::spawn_connection_server(listener, move |request, _| {
            let answer = task_script
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| default.clone());
            let received = task_received.clone();
            async move {
                let method = request.method().to_string();
                let headers = request
                    .headers()
                    .iter()
                    .map(|(name, value)| {
                        (
                            name.as_str().to_owned(),
                            String::from_utf8_lossy(value.as_bytes()).into_owned(),
                        )
                    })
                    .collect();
                let body = request
                    .into_body()
                    .collect()
                    .await
                    .map(|body| body.to_bytes().to_vec())
                    .unwrap_or_default();
                received.lock().unwrap().push(Request {
                    method,
                    headers,
                    body,
                });
                answer_with(answer).await
            }
        });
        Self {
            addr,
            script,
            received,
            task,
        }
    }

    /// Answers the next requests with `answers`, in order.
    pub fn script(&self, answers: impl IntoIterator<Item = Answer>) {
        self.script.lock().unwrap().extend(answers);
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Request> {
        self.received.lock().unwrap().clone()
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer_with(answer: Answer) -> Response<Full<Bytes>> {
    let (code, headers, body) = match answer {
        Answer::Status(code, headers, body) => (code, headers, body),
        Answer::Stall(wait) => {
            tokio::time::sleep(wait).await;
            (200, Vec::new(), String::new())
        }
    };
    let mut response = Response::builder().status(code);
    for (name, value) in headers {
        response = response.header(name, value);
    }
    response
        .body(Full::new(Bytes::from(body)))
        .expect("a valid answer")
}
