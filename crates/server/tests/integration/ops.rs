//! The service around the operations: limits, overload, observability, docs, replicas and
//! shutdown, a module per theme.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use appzone_server::http::{App, HttpConfig};
use appzone_server::serve::ServeOptions;
use appzone_test_support::raw::{self, RawConnection};
use appzone_test_support::{
    eventually, fast_config, postgres_only, spawn_server, test_catalog, Resp, TestApp,
};
use axum::routing::get;
use axum::Router;
use tokio::net::{TcpListener, TcpStream};

use crate::server_process::ServerProcess;

mod docs_and_headers;
mod lifecycle;
mod limits;
mod metrics;
mod overload;

fn zones() -> String {
    TestApp::zones_path("aws", "us-east-1")
}

/// A TCP proxy to PostgreSQL that the test can cut (closing every connection and refusing new
/// ones) and restore.
pub(crate) struct CuttableProxy {
    pub(crate) addr: String,
    up: Arc<AtomicBool>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl CuttableProxy {
    pub(crate) async fn start(target: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let up = Arc::new(AtomicBool::new(true));
        let (tx, _) = tokio::sync::watch::channel(0u64);
        let generation = Arc::new(tx);
        let (up2, gen2) = (up.clone(), generation.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    continue;
                };
                if !up2.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let mut cut = gen2.subscribe();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Self {
            addr,
            up,
            generation,
        }
    }

    pub(crate) fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    pub(crate) fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

/// A state whose router has a slow route, for timeout and shedding tests.
fn slow_router(app: &TestApp, http: HttpConfig) -> App {
    let state = app.service.state.with_http(http);
    async fn slow() -> &'static str {
        tokio::time::sleep(Duration::from_millis(600)).await;
        "done"
    }
    let routes = Router::new()
        .route("/slow", get(slow))
        .route("/slow2", get(slow));
    appzone_server::http::with_middleware(routes, state)
}

/// An admin's DELETE of the app's profile with a 100 KiB body, over the 64 KiB default limit.
async fn delete_with_an_oversized_body(app: &TestApp) -> Resp {
    let resp = app
        .http
        .delete(app.url(&TestApp::profile_path(app.profile.as_str())))
        .header("x-api-key", &app.admin_key)
        .body(vec![b'x'; 100 * 1024])
        .send()
        .await
        .unwrap();
    Resp::read(resp).await
}
