//! A scripted HTTP server on 127.0.0.1: it answers each attempt with the next scripted reply
//! (repeating the last one) and records what it received. The client's, the conformance kit's
//! and the `appzone` command's tests share it.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use appzone_contract::headers::REQUEST_ID;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::Router;
use tokio::net::{TcpListener, TcpSocket};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: StatusCode,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: String,
    delay: Option<Duration>,
    echo_request_id: bool,
}

impl Reply {
    /// A reply with this status and an empty body.
    pub fn status(status: u16) -> Self {
        Self {
            status: StatusCode::from_u16(status).unwrap(),
            headers: Vec::new(),
            body: String::new(),
            delay: None,
            echo_request_id: true,
        }
    }

    /// A JSON reply.
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Self::status(status)
            .header("content-type", "application/json")
            .body(body.to_string())
    }

    /// A reply with a raw body.
    pub fn text(status: u16, content_type: &str, body: &str) -> Self {
        Self::status(status)
            .header("content-type", content_type)
            .body(body.to_owned())
    }

    /// The contract's zone list.
    pub fn zones(zones: &[&str]) -> Self {
        Self::json(
            200,
            serde_json::json!({
                "data": zones,
                "id": "srv-id",
                "message": format!("{} zones in aws/us-east-1", zones.len()),
                "status": "success",
            }),
        )
    }

    /// The contract's provider list.
    pub fn providers(providers: &[&str]) -> Self {
        Self::json(
            200,
            serde_json::json!({
                "data": providers,
                "id": "srv-id",
                "message": format!("{} providers", providers.len()),
                "status": "success",
            }),
        )
    }

    /// The contract's region list (of `aws`).
    pub fn regions(regions: &[&str]) -> Self {
        Self::json(
            200,
            serde_json::json!({
                "data": regions,
                "id": "srv-id",
                "message": format!("{} regions in aws", regions.len()),
                "status": "success",
            }),
        )
    }

    /// The contract's error body.
    pub fn error(status: u16, code: &str, message: &str) -> Self {
        Self::json(
            status,
            serde_json::json!({"error": message, "error_code": code}),
        )
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        ));
        if HeaderName::from_bytes(name.as_bytes()).unwrap() == REQUEST_ID {
            self.echo_request_id = false;
        }
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: String) -> Self {
        self.body = body;
        self
    }

    /// Waits this long before answering.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Does not echo the caller's `X-Request-Id` (by default the server echoes it, as the
    /// contract's server does).
    pub fn without_request_id(mut self) -> Self {
        self.echo_request_id = false;
        self
    }
}

/// The contract's zone-identity list of aws/us-east-1, with mapping `prod` applied when
/// `mapped` (the names of the AWS fixture), else with null names.
pub fn identities_reply(mapped: bool) -> Reply {
    let name = |n: &str| {
        if mapped {
            serde_json::json!(n)
        } else {
            serde_json::Value::Null
        }
    };
    Reply::json(
        200,
        serde_json::json!({
            "data": [
                {"zone_id": "use1-az1", "zone_name": name("us-east-1d"), "name_scope": "account",
                 "zone_type": "availability-zone", "visibility": "all_accounts",
                 "note": "name mapped per account"},
                {"zone_id": "use1-az2", "zone_name": name("us-east-1a"), "name_scope": "account",
                 "zone_type": "availability-zone", "visibility": "all_accounts"}
            ],
            "id": "srv-id",
            "mapping": if mapped {
                serde_json::json!({"id": "prod", "provider": "aws", "label": "production account",
                                   "imported_at": "2026-11-27T10:00:00Z"})
            } else {
                serde_json::Value::Null
            },
            "message": "2 zones in aws/us-east-1",
            "source": {"compiled_on": "2026-11-27", "references": [
                {"id": "S1", "what": "AWS AZ IDs", "where": "https://docs.aws.amazon.com/", "date": "2026-11-27"}
            ]},
            "status": "success",
        }),
    )
    .header("etag", "W/\"ids-1\"")
}

/// The contract's answer of a zone mapping's `GET` or `PUT`, with `status`.
pub fn mapping_reply(status: u16, message: &str) -> Reply {
    Reply::json(
        status,
        serde_json::json!({
            "data": {
                "id": "prod", "provider": "aws", "label": "production account",
                "imported_at": "2026-11-27T10:00:00Z",
                "regions": [{"region": "us-east-1", "zones": [
                    {"zone_id": "use1-az2", "zone_name": "us-east-1a"},
                    {"zone_id": "use1-az4", "zone_name": "us-east-1b"}
                ]}]
            },
            "id": "srv-id",
            "message": message,
            "status": "success",
        }),
    )
}

/// The contract's zone-mapping list with `prod`.
pub fn mappings_reply() -> Reply {
    Reply::json(
        200,
        serde_json::json!({
            "data": [{"id": "prod", "provider": "aws", "label": "production account",
                      "imported_at": "2026-11-27T10:00:00Z", "regions": ["us-east-1"]}],
            "id": "srv-id",
            "message": "1 zone mapping",
            "status": "success",
        }),
    )
}

/// What the server received in one attempt.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: Method,
    pub path: String,
    /// The query string, without the `?`, when the request had one.
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Debug)]
struct Shared {
    script: Vec<Reply>,
    seen: Mutex<Vec<Seen>>,
}

/// A running scripted server.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl Server {
    /// Starts on an ephemeral port of 127.0.0.1.
    pub async fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve(listener, script)
    }

    /// Starts listening on `port` after `delay`; the port refuses connections until then.
    pub async fn start_later(port: ReservedPort, delay: Duration, script: Vec<Reply>) -> Self {
        let shared = Arc::new(Shared {
            script,
            seen: Mutex::new(Vec::new()),
        });
        let state = Arc::clone(&shared);
        let addr = port.addr;
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let listener = port.socket.listen(128).unwrap();
            serve(listener, state).await;
        });
        Self { addr, shared }
    }

    fn serve(listener: TcpListener, script: Vec<Reply>) -> Self {
        assert!(!script.is_empty(), "a script needs at least one reply");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            script,
            seen: Mutex::new(Vec::new()),
        });
        tokio::spawn(serve(listener, Arc::clone(&shared)));
        Self { addr, shared }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// How many requests arrived.
    pub fn attempts(&self) -> usize {
        self.shared.seen.lock().unwrap().len()
    }

    /// The requests that arrived, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }
}

async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let app = Router::new().fallback(answer).with_state(shared);
    axum::serve(listener, app).await.unwrap();
}

async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 8 * 1024 * 1024)
        .await
        .map(|bytes| bytes.to_vec())
        .unwrap_or_default();
    let request_id = parts.headers.get(REQUEST_ID).cloned();
    let index = {
        let mut seen = shared.seen.lock().unwrap();
        seen.push(Seen {
            method: parts.method,
            path: parts.uri.path().to_owned(),
            query: parts.uri.query().map(str::to_owned),
            headers: parts.headers,
            body,
        });
        seen.len() - 1
    };
    let reply = shared.script[index.min(shared.script.len() - 1)].clone();
    if let Some(delay) = reply.delay {
        tokio::time::sleep(delay).await;
    }
    let mut response = Response::new(Body::from(reply.body));
    *response.status_mut() = reply.status;
    for (name, value) in reply.headers {
        response.headers_mut().append(name, value);
    }
    if let (true, Some(id)) = (reply.echo_request_id, request_id) {
        response.headers_mut().insert(REQUEST_ID, id);
    }
    response
}

/// A port of 127.0.0.1 that refuses connections (it was bound, then released).
pub async fn closed_port() -> SocketAddr {
    // Held until the test binary exits: a port that was bound and dropped can be handed to
    // another test's listener a moment later (CI once saw `Address already in use`).
    static HELD: Mutex<Vec<TcpSocket>> = Mutex::new(Vec::new());
    let port = reserve_port();
    let addr = port.addr;
    HELD.lock().unwrap().push(port.socket);
    addr
}

/// A port of 127.0.0.1 that is bound but not listening: connections to it are refused, and
/// no other socket of this machine can take it until it is dropped.
#[derive(Debug)]
pub struct ReservedPort {
    socket: TcpSocket,
    pub addr: SocketAddr,
}

/// Binds a [`ReservedPort`].
pub fn reserve_port() -> ReservedPort {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
    let addr = socket.local_addr().unwrap();
    ReservedPort { socket, addr }
}
