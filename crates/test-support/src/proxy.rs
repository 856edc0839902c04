//! A proxy in front of the real server that breaks one promise of the API, for the
//! conformance kit's (and the `appzone conformance` command's) proof that it can fail: each [`Mutation`] must fail the check named after
//! the promise it breaks. This file forwards; `proxy/mutation.rs` says what each mutation does.

mod mutation;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::TestApp;
use appzone_contract::headers::API_KEY;
use axum::body::{to_bytes, Body, Bytes};
use axum::extract::{Request, State};
use axum::response::Response;
use axum::Router;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use tokio::net::TcpListener;

pub use mutation::Mutation;

struct Shared {
    upstream: String,
    mutation: Mutation,
    foreign_profile: String,
    /// A valid key of the fixture (a member's), for the mutations that validate before they
    /// authenticate.
    valid_key: String,
    /// The admin's key, for the mutation that lets a member delete.
    admin_key: String,
    /// The paths whose `DELETE` got 204 through the proxy.
    deleted: Mutex<HashSet<String>>,
    http: reqwest::Client,
}

/// A request as it goes upstream; the mutations may rewrite it.
#[derive(Clone)]
struct Outgoing {
    method: Method,
    /// Path and query.
    path: String,
    headers: HeaderMap,
    body: Bytes,
}

impl Outgoing {
    fn has_key(&self) -> bool {
        self.headers.contains_key(API_KEY)
    }

    /// The same request with the key `key`.
    fn with_key(&self, key: &str) -> Outgoing {
        let mut again = self.clone();
        again
            .headers
            .insert(API_KEY, HeaderValue::from_str(key).unwrap());
        again
    }
}

/// An answer on its way back; the mutations may rewrite it.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    fn error_code(&self) -> Option<String> {
        self.json()?
            .get("error_code")?
            .as_str()
            .map(ToOwned::to_owned)
    }

    /// Whether it is `status` with the error code `code`.
    fn is_error(&self, status: StatusCode, code: &str) -> bool {
        self.status == status && self.error_code().as_deref() == Some(code)
    }

    /// Makes it `status` with the JSON error body of `code`, keeping the other headers.
    fn set_error(&mut self, status: StatusCode, code: &str) {
        self.status = status;
        self.body = serde_json::json!({"error": code.replace('_', " "), "error_code": code})
            .to_string()
            .into_bytes();
        self.headers
            .insert("content-type", HeaderValue::from_static("application/json"));
    }
}

/// Starts the proxy to `server` on an ephemeral port; returns its base URL. It runs until the
/// test's runtime ends.
pub async fn start(server: &TestApp, mutation: Mutation) -> String {
    let shared = Arc::new(Shared {
        upstream: server.base.clone(),
        mutation,
        foreign_profile: server.other_profile.as_str().to_owned(),
        valid_key: server.member_key.clone(),
        admin_key: server.admin_key.clone(),
        deleted: Mutex::new(HashSet::new()),
        http: crate::app::plain_http()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
    });
    let app = Router::new().fallback(forward).with_state(shared);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

const HOP_BY_HOP: [&str; 4] = ["host", "connection", "transfer-encoding", "content-length"];

impl Shared {
    /// Sends `request` upstream and reads the whole answer.
    async fn send(&self, request: &Outgoing) -> Answer {
        let mut upstream = self.http.request(
            request.method.clone(),
            format!("{}{}", self.upstream, request.path),
        );
        for (name, value) in &request.headers {
            if !HOP_BY_HOP.contains(&name.as_str()) {
                upstream = upstream.header(name, value);
            }
        }
        if !request.body.is_empty() {
            upstream = upstream.body(request.body.clone());
        }
        let answer = upstream.send().await.unwrap();
        let status = answer.status();
        let mut headers = answer.headers().clone();
        let body = answer.bytes().await.unwrap().to_vec();
        for name in HOP_BY_HOP {
            // A HEAD keeps the length of the GET it stands for.
            if request.method != Method::HEAD || name != "content-length" {
                headers.remove(name);
            }
        }
        Answer {
            status,
            headers,
            body,
        }
    }
}

async fn forward(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let mut received = Outgoing {
        method: parts.method,
        path,
        headers: parts.headers,
        body: to_bytes(body, usize::MAX).await.unwrap(),
    };
    // A HEAD of a rewritten listing is the rewritten GET without its body.
    let head_as_get = received.method == Method::HEAD && shared.mutation.rewrites_listing_bodies();
    if head_as_get {
        received.method = Method::GET;
    }
    let mut sent = received.clone();
    shared.mutation.rewrite_request(&mut sent);
    let mut answer = shared.send(&sent).await;
    shared
        .mutation
        .rewrite_answer(&shared, &received, &mut answer)
        .await;
    if head_as_get {
        answer
            .headers
            .insert("content-length", HeaderValue::from(answer.body.len()));
        answer.body.clear();
    }
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() = answer.status;
    *response.headers_mut() = answer.headers;
    response
}
