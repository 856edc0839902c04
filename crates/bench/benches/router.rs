//! Criterion micro-benchmarks of appzone's in-process request path: the production router
//! (`appzone_server::service`, every middleware layer on) driven with `tower::ServiceExt::oneshot`,
//! no sockets. A regression in auth, zone lookup, serialization or error mapping shows here
//! without a load generator.
//!
//! Run: `cargo bench -p appzone-bench --bench router` (add `-- zones/` to filter).
//!
//! Groups:
//! - `zones/*`: `GET .../zones` answered 200 and 304, with no log subscriber (`tracing` macros
//!   then cost a branch), with production-like INFO text logging to a sink, and with the
//!   per-key rate limiter switched on at a quota it never reaches (its bookkeeping cost alone);
//!   plus the snapshot lookup and body building alone, outside the router.
//!   A prototype of the same layers composed as one stack, and a bare axum route, bound the
//!   gain available from restructuring the middleware.
//! - `auth/*`: key verification through the cache (parse, cache hit, SHA-256, constant-time
//!   compare), and the 401 answers of the router.
//! - `errors/*`: 400/404 answers through the router, and `ApiError` to response alone.
//! - `parts/*`: the per-request pieces a profile points at: request-id ULID, key digest.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use appzone_contract::ErrorCode;
use appzone_server::catalog::Snapshot;
use appzone_server::http::error::ApiError;
use appzone_server::keys::{digest_hex, KeyVerifier};
use appzone_server::model::catalog_file::CatalogFile;
use appzone_server::model::{OrgId, Role};
use appzone_server::storage::{PoolSettings, Store};
use appzone_server::{Service, ServiceConfig};
use axum::body::Body;
use axum::response::IntoResponse;
use criterion::{criterion_group, criterion_main, Criterion};
use http::{Request, StatusCode};
use tokio::runtime::Runtime;
use tower::ServiceExt;

const ZONES: &str = "/api/v1/providers/aws/regions/us-east-1/zones";

struct Fixture {
    runtime: Runtime,
    store: Store,
    key: String,
    _dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let (store, key) = runtime.block_on(async {
        let store = Store::connect(&url, &PoolSettings::default())
            .await
            .unwrap();
        appzone_server::prepare(&store).await.unwrap();
        let org: OrgId = "bench".parse().unwrap();
        store.create_org(&org, "Bench").await.unwrap();
        let key = store.create_key(&org, Role::Admin, "bench").await.unwrap();
        (store, key.expose_secret().to_owned())
    });
    Fixture {
        runtime,
        store,
        key,
        _dir: dir,
    }
}

/// The production service with the per-key limit at `rate_limit_per_key` (0: off; the default
/// 1000/s would answer 429 to a tight loop) and the auth-failure limit off.
fn service(fx: &Fixture, rate_limit_per_key: u32) -> Service {
    let config = ServiceConfig {
        key_cache_ttl: Duration::from_secs(3600),
        rate_limit_per_key,
        auth_failures_per_minute: 0,
        ..ServiceConfig::default()
    };
    fx.runtime
        .block_on(appzone_server::service(fx.store.clone(), &config))
        .unwrap()
}

fn get(path: &str, key: Option<&str>, if_none_match: Option<&str>) -> Request<Body> {
    let mut request = Request::get(path);
    if let Some(key) = key {
        request = request.header("x-api-key", key);
    }
    if let Some(tag) = if_none_match {
        request = request.header("if-none-match", tag);
    }
    request.body(Body::empty()).unwrap()
}

/// One request through the router, body read to the end; returns the status.
async fn call<S: Routed>(router: &S, request: Request<Body>) -> StatusCode {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    std::hint::black_box(body);
    status
}

/// What the benchmarks can send requests to: the server's `App` or a plain `axum::Router`.
trait Routed:
    tower::Service<
        Request<Body>,
        Response = axum::response::Response,
        Error = std::convert::Infallible,
    > + Clone
{
}
impl<S> Routed for S where
    S: tower::Service<
            Request<Body>,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        > + Clone
{
}

fn etag<S: Routed>(fx: &Fixture, router: &S) -> String {
    fx.runtime.block_on(async {
        let response = router
            .clone()
            .oneshot(get(ZONES, Some(&fx.key), None))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.headers()["etag"].to_str().unwrap().to_owned()
    })
}

fn bench_zones(c: &mut Criterion) {
    let fx = fixture();
    let plain = service(&fx, 0);
    let limited = service(&fx, 1_000_000_000);
    let router = &plain.app.router;
    let tag = etag(&fx, router);
    let key = fx.key.as_str();
    let mut group = c.benchmark_group("zones");

    group.bench_function("list_200", |b| {
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(router, get(ZONES, Some(key), None)).await;
            debug_assert_eq!(status, StatusCode::OK);
        });
    });
    group.bench_function("list_304", |b| {
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(router, get(ZONES, Some(key), Some(&tag))).await;
            debug_assert_eq!(status, StatusCode::NOT_MODIFIED);
        });
    });
    group.bench_function("list_200_with_rate_limiter", |b| {
        let router = &limited.app.router;
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(router, get(ZONES, Some(key), None)).await;
            debug_assert_eq!(status, StatusCode::OK);
        });
    });
    // The production subscriber (text format, `info,sqlx=warn`) writing to a sink: the cost
    // of formatting the per-request log line, without the I/O of the background writer.
    group.bench_function("list_200_info_log_to_sink", |b| {
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("info,sqlx=warn"))
            .with_writer(std::io::sink)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(router, get(ZONES, Some(key), None)).await;
            debug_assert_eq!(status, StatusCode::OK);
        });
    });

    let bare = bare_route();
    for router in [router, &limited.app.router] {
        let status = fx
            .runtime
            .block_on(call(router, get(ZONES, Some(key), None)));
        assert_eq!(
            status,
            StatusCode::OK,
            "the benchmarked request must succeed"
        );
    }
    let status = fx
        .runtime
        .block_on(call(&bare, get(ZONES, Some(key), None)));
    assert_eq!(
        status,
        StatusCode::OK,
        "the benchmarked request must succeed"
    );
    // A bare axum route answering static bytes: the floor of the in-process path.
    group.bench_function("bare_axum_route_200", |b| {
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(&bare, get(ZONES, Some(key), None)).await;
            debug_assert_eq!(status, StatusCode::OK);
        });
    });

    // Outside the router: the snapshot lookup and the body around a request id.
    let snapshot = Snapshot::build(1, &CatalogFile::builtin());
    let provider = "aws";
    group.bench_function("snapshot_lookup_and_body", |b| {
        b.iter(|| {
            let regions = snapshot.provider(std::hint::black_box(provider)).unwrap();
            let answer = regions.region(std::hint::black_box("us-east-1")).unwrap();
            std::hint::black_box(answer.body("01JD8Y3ZQ4K5M6N7P8R9S0T1V2"))
        });
    });
    group.finish();
}

/// The bench crate's baseline in-process: one route, static bytes, no middleware.
fn bare_route() -> axum::Router {
    let body = axum::body::Bytes::from_static(
        br#"{"data":["us-east-1a","us-east-1b","us-east-1c","us-east-1d","us-east-1e","us-east-1f"],"id":"01JBENCH000000000000000000","message":"6 zones in aws/us-east-1","status":"success"}"#,
    );
    axum::Router::new().route(
        appzone_contract::paths::LIST_ZONES,
        axum::routing::get(move || {
            let body = body.clone();
            async move { ([(http::header::CONTENT_TYPE, "application/json")], body) }
        }),
    )
}

fn bench_auth(c: &mut Criterion) {
    let fx = fixture();
    let svc = service(&fx, 0);
    let router = &svc.app.router;
    let verifier = KeyVerifier::new(fx.store.clone(), Duration::from_secs(3600));
    let key = fx.key.as_str();
    // An unknown key id of the right shape: the negative answer is cached too.
    let unknown = "apz_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
    let mut group = c.benchmark_group("auth");

    fx.runtime.block_on(verifier.verify(key)).unwrap();
    group.bench_function("verify_cached", |b| {
        b.to_async(&fx.runtime)
            .iter(|| async { std::hint::black_box(verifier.verify(key).await.unwrap()) });
    });
    group.bench_function("missing_key_401", |b| {
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(router, get(ZONES, None, None)).await;
            debug_assert_eq!(status, StatusCode::UNAUTHORIZED);
        });
    });
    group.bench_function("unknown_key_401", |b| {
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(router, get(ZONES, Some(unknown), None)).await;
            debug_assert_eq!(status, StatusCode::UNAUTHORIZED);
        });
    });
    group.finish();
}

fn bench_errors(c: &mut Criterion) {
    let fx = fixture();
    let svc = service(&fx, 0);
    let router = &svc.app.router;
    let key = fx.key.as_str();
    let mut group = c.benchmark_group("errors");

    group.bench_function("invalid_provider_400", |b| {
        let path = "/api/v1/providers/nope/regions/us-east-1/zones";
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(router, get(path, Some(key), None)).await;
            debug_assert_eq!(status, StatusCode::BAD_REQUEST);
        });
    });
    group.bench_function("region_not_found_404", |b| {
        let path = "/api/v1/providers/aws/regions/nowhere-1/zones";
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(router, get(path, Some(key), None)).await;
            debug_assert_eq!(status, StatusCode::NOT_FOUND);
        });
    });
    group.bench_function("unknown_route_404", |b| {
        b.to_async(&fx.runtime).iter(|| async {
            let status = call(router, get("/nothing/here", None, None)).await;
            debug_assert_eq!(status, StatusCode::NOT_FOUND);
        });
    });
    group.bench_function("api_error_into_response", |b| {
        b.iter(|| {
            std::hint::black_box(
                ApiError::new(ErrorCode::RegionNotFound, "region not found").into_response(),
            )
        });
    });
    group.finish();
}

fn bench_parts(c: &mut Criterion) {
    let mut group = c.benchmark_group("parts");
    group.bench_function("request_id_ulid", |b| {
        b.iter(|| {
            std::hint::black_box(
                http::HeaderValue::from_str(&ulid::Ulid::generate().to_string()).unwrap(),
            )
        });
    });
    group.bench_function("key_digest_sha256_hex", |b| {
        let key = "apz_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
        b.iter(|| std::hint::black_box(digest_hex(std::hint::black_box(key))));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench_zones, bench_auth, bench_errors, bench_parts
}
criterion_main!(benches);
