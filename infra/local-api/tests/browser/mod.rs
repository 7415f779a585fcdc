//! Tests in a real browser: headless Chromium (Debian's `chromium`, which scripts/setup installs;
//! without it these tests fail, they never skip) loads a page and the test reads what the page
//! wrote into its DOM (`--dump-dom` once the page is idle: `--virtual-time-budget` lets no
//! virtual time pass while a fetch is pending, so the page's awaited calls all finish first).
//! Each run has its own profile directory, and only loopback addresses are used.

mod cors_page;
mod reference_page;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

/// How long one Chromium run may take at most on a slow machine; it ends as soon as the page is
/// idle.
const RUN_LIMIT: Duration = Duration::from_secs(180);
/// Virtual time the page gets once idle (its timers run in it, not in wall time).
const VIRTUAL_TIME_MS: u32 = 30_000;

/// The browser: `CHROMIUM` if set, else `chromium` on PATH.
fn chromium() -> String {
    let program = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".to_owned());
    let found = std::process::Command::new(&program)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        found,
        "{program} is not installed: scripts/setup installs Debian's chromium package"
    );
    program
}

/// Runs headless Chromium on `url` with `extra` arguments; its standard output.
async fn run_chromium(url: &str, extra: &[String], profile: &Path) -> String {
    let mut command = tokio::process::Command::new(chromium());
    command
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--no-proxy-server",
            "--disable-extensions",
            "--disable-background-networking",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--virtual-time-budget={VIRTUAL_TIME_MS}"))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(RUN_LIMIT, command.output())
        .await
        .unwrap_or_else(|_| panic!("chromium did not finish with {url} within {RUN_LIMIT:?}"))
        .expect("start chromium");
    assert!(
        output.status.success(),
        "chromium on {url}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("the DOM is UTF-8")
}

/// The page's DOM once it is idle.
pub async fn dump_dom(url: &str, profile: &Path) -> String {
    run_chromium(url, &["--dump-dom".to_owned()], profile).await
}

/// A screenshot of the page, once idle, into `path` (PNG).
pub async fn screenshot(url: &str, path: &Path, profile: &Path) {
    let extra = [
        format!("--screenshot={}", path.display()),
        "--window-size=1280,2400".to_owned(),
    ];
    run_chromium(url, &extra, profile).await;
    let png = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(png.starts_with(b"\x89PNG"), "{} is no PNG", path.display());
}

/// Where CI keeps what a run leaves to look at: `CI_ARTIFACTS_DIR`, else
/// `target/ci-artifacts` of the workspace.
pub fn artifacts_dir() -> PathBuf {
    let dir = std::env::var_os("CI_ARTIFACTS_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci-artifacts"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// Serves `html` at every path on a free loopback port, until the test ends; its origin.
pub async fn serve_page(html: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let html = bytes::Bytes::from_static(html.as_bytes());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let html = html.clone();
            tokio::spawn(async move {
                let service = service_fn(move |_: hyper::Request<hyper::body::Incoming>| {
                    let page = hyper::Response::builder()
                        .header("content-type", "text/html; charset=utf-8")
                        .body(http_body_util::Full::new(html.clone()));
                    std::future::ready(page)
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    origin
}

/// The text of the element `<tag id="id">` in `dom`, its entities (`&amp;`, `&lt;`, `&gt;`)
/// read back; `None` if there is none.
pub fn text_of(dom: &str, tag: &str, id: &str) -> Option<String> {
    let start = format!("<{tag} id=\"{id}\">");
    let from = dom.find(&start)? + start.len();
    let to = from + dom[from..].find(&format!("</{tag}>"))?;
    Some(
        dom[from..to]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}
