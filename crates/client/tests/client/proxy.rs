//! A proxy in front of the real server that breaks one promise of the API, for the
//! conformance kit's proof that it can fail: each [`Mutation`] must fail the check named after
//! the promise it breaks.

use std::sync::Arc;

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::response::Response;
use axum::Router;
use http::{HeaderValue, Method, StatusCode};
use tokio::net::TcpListener;

/// The promise the proxy breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// None: the proxy forwards faithfully (the control row).
    Faithful,
    /// Every answer loses its `X-Request-Id`.
    DropRequestId,
    /// Error bodies become `text/plain` with the bare message.
    TextErrorBodies,
    /// The admin's `DELETE` of another organization's profile answers 403 `forbidden`.
    ForbiddenForeignProfile,
    /// Every `ETag` is replaced with a stale one.
    StaleEtag,
    /// `HEAD` answers lose `Content-Type` and `ETag` (hyper never sends a body on a `HEAD`).
    HeadUnlikeGet,
    /// 405 answers lose `Allow`.
    DropAllow,
    /// A listing's `id` differs from its `X-Request-Id`.
    BodyIdDiffers,
    /// 404 `region_not_found` comes as 410, a status the document does not list for the zones.
    UndocumentedStatus,
    /// 413 comes as 503 `unavailable` without `Retry-After`.
    UnavailableWithoutRetryAfter,
    /// `RateLimit` loses its policy name and parameters.
    MalformedRateLimit,
}

struct Shared {
    upstream: String,
    mutation: Mutation,
    foreign_profile: String,
    http: reqwest::Client,
}

/// Starts the proxy to `upstream` (such as `http://127.0.0.1:PORT`) on an ephemeral port;
/// returns its base URL. It runs until the test's runtime ends.
pub async fn start(upstream: &str, mutation: Mutation, foreign_profile: &str) -> String {
    let shared = Arc::new(Shared {
        upstream: upstream.to_owned(),
        mutation,
        foreign_profile: foreign_profile.to_owned(),
        http: reqwest::Client::builder()
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

async fn forward(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let body = to_bytes(body, usize::MAX).await.unwrap();
    let mut upstream = shared
        .http
        .request(parts.method.clone(), format!("{}{path}", shared.upstream));
    for (name, value) in &parts.headers {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            upstream = upstream.header(name, value);
        }
    }
    if !body.is_empty() {
        upstream = upstream.body(body);
    }
    let answer = upstream.send().await.unwrap();
    let mut status = answer.status();
    let mut headers = answer.headers().clone();
    let mut body = answer.bytes().await.unwrap().to_vec();
    for name in HOP_BY_HOP {
        // A HEAD keeps the length of the GET it stands for.
        if parts.method != Method::HEAD || name != "content-length" {
            headers.remove(name);
        }
    }
    let json = |body: &[u8]| serde_json::from_slice::<serde_json::Value>(body).ok();
    match shared.mutation {
        Mutation::Faithful => {}
        Mutation::DropRequestId => {
            headers.remove("x-request-id");
        }
        Mutation::TextErrorBodies if status.as_u16() >= 400 => {
            let message = json(&body)
                .and_then(|b| b["error"].as_str().map(ToOwned::to_owned))
                .unwrap_or_default();
            body = message.into_bytes();
            headers.insert("content-type", HeaderValue::from_static("text/plain"));
        }
        Mutation::ForbiddenForeignProfile
            if parts.method == Method::DELETE && path.ends_with(&shared.foreign_profile) =>
        {
            status = StatusCode::FORBIDDEN;
            body = serde_json::json!({"error": "forbidden", "error_code": "forbidden"})
                .to_string()
                .into_bytes();
        }
        Mutation::StaleEtag if headers.contains_key("etag") => {
            headers.insert("etag", HeaderValue::from_static("W/\"stale\""));
        }
        Mutation::HeadUnlikeGet if parts.method == Method::HEAD => {
            headers.remove("content-type");
            headers.remove("etag");
        }
        Mutation::DropAllow => {
            headers.remove("allow");
        }
        Mutation::BodyIdDiffers => {
            if let Some(mut value) = json(&body).filter(|b| b.get("id").is_some()) {
                value["id"] = "01AAAAAAAAAAAAAAAAAAAAAAAA".into();
                body = value.to_string().into_bytes();
            }
        }
        Mutation::UndocumentedStatus
            if status == StatusCode::NOT_FOUND && path.ends_with("/zones") =>
        {
            status = StatusCode::GONE;
        }
        Mutation::UnavailableWithoutRetryAfter if status == StatusCode::PAYLOAD_TOO_LARGE => {
            status = StatusCode::SERVICE_UNAVAILABLE;
            body = serde_json::json!({"error": "unavailable", "error_code": "unavailable"})
                .to_string()
                .into_bytes();
            headers.remove("retry-after");
        }
        Mutation::MalformedRateLimit if headers.contains_key("ratelimit") => {
            headers.insert("ratelimit", HeaderValue::from_static("998"));
        }
        _ => {}
    }
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}
