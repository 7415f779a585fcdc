//! A scriptable HTTP server on a free loopback port: it answers every request with the current
//! [`Reply`] and counts requests. Stopped when dropped.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};

#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with this JSON body.
    Json(String),
    /// This status with an empty body.
    Status(u16),
    /// Waits this long, then answers with the inner reply.
    Delay(Duration, Box<Reply>),
}

pub struct HttpStub {
    addr: SocketAddr,
    reply: Arc<Mutex<Reply>>,
    hits: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpStub {
    pub async fn start(reply: Reply) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind stub");
        let addr = listener.local_addr().unwrap();
        let reply = Arc::new(Mutex::new(reply));
        let hits = Arc::new(AtomicUsize::new(0));
        let (task_reply, task_hits) = (reply.clone(), hits.clone());
        let task = crate::spawn_server(listener, move |_request| {
            task_hits.fetch_add(1, Ordering::SeqCst);
            let reply = task_reply.lock().unwrap().clone();
            answer(reply)
        });
        Self {
            addr,
            reply,
            hits,
            task,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn set(&self, reply: Reply) {
        *self.reply.lock().unwrap() = reply;
    }

    /// Requests answered (or being answered) so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for HttpStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(mut reply: Reply) -> Response<Full<Bytes>> {
    while let Reply::Delay(delay, inner) = reply {
        tokio::time::sleep(delay).await;
        reply = *inner;
    }
    let (status, body) = match reply {
        Reply::Json(body) => (StatusCode::OK, body),
        Reply::Status(status) => (StatusCode::from_u16(status).unwrap(), String::new()),
        Reply::Delay(..) => unreachable!("unwrapped above"),
    };
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}
