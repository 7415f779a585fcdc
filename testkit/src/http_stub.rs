//! A scriptable HTTP server on a free loopback port: it answers every request with the current
//! [`Reply`] and counts requests. Stopped when dropped.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
    /// How long the first answer on each new connection waits, in nanoseconds.
    connection_setup_nanos: Arc<AtomicU64>,
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
        let connection_setup_nanos = Arc::new(AtomicU64::new(0));
        let (task_reply, task_hits, task_setup) =
            (reply.clone(), hits.clone(), connection_setup_nanos.clone());
        let task = crate::fault_proxy::spawn_connection_server(
            listener,
            move |_request, first_on_connection| {
                task_hits.fetch_add(1, Ordering::SeqCst);
                let mut reply = task_reply.lock().unwrap().clone();
                let setup = task_setup.load(Ordering::SeqCst);
                if first_on_connection && setup > 0 {
                    reply = Reply::Delay(Duration::from_nanos(setup), Box::new(reply));
                }
                answer(reply)
            },
        );
        Self {
            addr,
            reply,
            hits,
            connection_setup_nanos,
            task,
        }
    }

    /// From now on, the first answer on each new connection waits `setup` more: the time a real
    /// connection to the identity provider takes to set up (TCP and TLS handshakes), which
    /// loopback does not show. Later answers on the same connection are not delayed.
    /// `Duration::ZERO` turns it off.
    pub fn delay_new_connections(&self, setup: Duration) {
        let nanos = u64::try_from(setup.as_nanos()).unwrap_or(u64::MAX);
        self.connection_setup_nanos.store(nanos, Ordering::SeqCst);
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
