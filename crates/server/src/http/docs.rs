//! `GET /docs`: Swagger UI over `/openapi.json`, from assets compiled into the binary (the
//! `utoipa-swagger-ui` crate's vendored distribution), so it works with no network at all.
//!
//! What the stock distribution is changed into, for a portal reader:
//!
//! - The page names the API (title `appzone API`; Swagger UI's heading is the document's
//!   title), uses Swagger UI's base layout (no top bar, no box to load another document), and
//!   has no Swagger favicon (an empty icon, so the browser asks for none).
//! - "Try it out" calls the origin that served the page: the document's only server is the
//!   relative `/`, which Swagger UI resolves against the document's own URL.
//! - Every answer carries a Content-Security-Policy that allows nothing from another origin and
//!   no framing (`frame-ancestors 'none'`, and `X-Frame-Options: DENY` for older browsers).
//! - Every asset has a strong `ETag` (answered 304 on `If-None-Match`) with
//!   `Cache-Control: no-cache`, so browsers revalidate instead of downloading again and never
//!   keep a UI older than the server; and it is sent gzip-compressed to clients that accept it,
//!   compressed once per process on first use.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, OnceLock};

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG,
    IF_NONE_MATCH, REFERRER_POLICY, VARY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use http::{HeaderMap, HeaderValue, StatusCode};
use sha2::{Digest, Sha256};
use utoipa_swagger_ui::Config;

use super::conditional::matches_etag;
use super::error::ApiError;
use appzone_contract::ErrorCode;

/// Allows the page's own scripts, styles, images and requests, and nothing from elsewhere.
/// Swagger UI draws its icons from `data:` images, and the page's empty favicon is one; its
/// base layout has no inline style (the stock top bar's logo had one). The browser test runs the
/// whole "Try it out" flow under this policy and fails on any violation.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; \
     base-uri 'self'; form-action 'none'; frame-ancestors 'none'";

/// The page's title.
const TITLE: &str = "appzone API";

fn config() -> Arc<Config<'static>> {
    Arc::new(
        Config::from("/openapi.json")
            .use_base_layout()
            .query_config_enabled(false)
            .validator_url("none")
            .deep_linking(true)
            .display_request_duration(true)
            .persist_authorization(false),
    )
}

/// One asset as served: its bytes, a gzip copy when that is smaller, and validators. Both
/// encodings are made once per process and shared by every answer (`Bytes` counts references):
/// an answer never copies them, so a client that opens many streams and reads none holds no
/// more than their headers (docs/DEPLOYMENT.md, Sizing).
#[derive(Debug)]
struct Asset {
    content_type: String,
    identity: Bytes,
    identity_tag: HeaderValue,
    gzip: Option<(Bytes, HeaderValue)>,
}

impl Asset {
    fn new(content_type: String, bytes: Vec<u8>) -> Self {
        let gzip = gzip(&bytes)
            .filter(|compressed| compressed.len() < bytes.len())
            .map(|compressed| {
                let tag = tag(&compressed, "gz");
                (Bytes::from(compressed), tag)
            });
        Asset {
            content_type,
            identity_tag: tag(&bytes, "id"),
            identity: Bytes::from(bytes),
            gzip,
        }
    }
}

fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).ok()?;
    encoder.finish().ok()
}

/// A strong entity tag: a digest of the bytes sent, marked with their encoding.
fn tag(bytes: &[u8], encoding: &str) -> HeaderValue {
    let digest = hex::encode(&Sha256::digest(bytes)[..12]);
    HeaderValue::from_str(&format!("\"{digest}-{encoding}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("\"docs\""))
}

/// The assets, read and compressed once per process on first use.
static ASSETS: OnceLock<HashMap<String, Asset>> = OnceLock::new();

fn assets() -> &'static HashMap<String, Asset> {
    ASSETS.get_or_init(|| {
        let config = config();
        let mut assets = HashMap::new();
        for name in [
            "swagger-ui.css",
            "index.css",
            "swagger-ui-bundle.js",
            "swagger-ui-standalone-preset.js",
            "swagger-initializer.js",
        ] {
            if let Ok(Some(file)) = utoipa_swagger_ui::serve(name, config.clone()) {
                assets.insert(
                    name.to_owned(),
                    Asset::new(file.content_type, file.bytes.into_owned()),
                );
            }
        }
        if let Ok(Some(file)) = utoipa_swagger_ui::serve("index.html", config) {
            assets.insert(
                "index.html".to_owned(),
                Asset::new(
                    "text/html; charset=utf-8".to_owned(),
                    page(&String::from_utf8_lossy(&file.bytes)).into_bytes(),
                ),
            );
        }
        assets
    })
}

/// The stock `index.html`, named after the API and without Swagger's favicons. A `<base>`
/// element makes its relative asset links resolve under `/docs/` whichever of `/docs` and
/// `/docs/` was asked for.
fn page(stock: &str) -> String {
    stock
        .lines()
        .filter(|line| !line.contains("favicon"))
        .map(|line| {
            if line.trim() == "<title>Swagger UI</title>" {
                format!("    <title>{TITLE}</title>\n    <link rel=\"icon\" href=\"data:,\" />")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        .replacen("<head>", "<head>\n    <base href=\"/docs/\" />", 1)
}

/// `GET /docs` and `GET /docs/`: the UI's page.
pub async fn index(request: HeaderMap) -> Response {
    serve("index.html", &request).await
}

/// `GET /docs/{file}`: the UI's scripts and styles. A name that is not UTF-8 after decoding
/// names no asset: 404 like any other unknown name.
pub async fn asset(file: Result<Path<String>, PathRejection>, request: HeaderMap) -> Response {
    let Ok(Path(file)) = file else {
        return ApiError::new(ErrorCode::NotFound, "no such route").into_response();
    };
    serve(&file, &request).await
}

async fn serve(name: &str, request: &HeaderMap) -> Response {
    // The first request compresses every asset (a few hundred milliseconds): off the async
    // workers, so API requests on the same worker do not wait behind it.
    let assets = match ASSETS.get() {
        Some(assets) => assets,
        None => match tokio::task::spawn_blocking(assets).await {
            Ok(assets) => assets,
            Err(err) => return ApiError::internal(format!("docs assets: {err}")).into_response(),
        },
    };
    let Some(asset) = assets.get(name) else {
        return ApiError::new(ErrorCode::NotFound, "no such route").into_response();
    };
    let gzip = asset.gzip.as_ref().filter(|_| accepts_gzip(request));
    let (bytes, tag) = match gzip {
        Some((bytes, tag)) => (bytes, tag),
        None => (&asset.identity, &asset.identity_tag),
    };
    let mut headers = HeaderMap::new();
    headers.insert(ETAG, tag.clone());
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if asset.gzip.is_some() {
        headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
    }
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
    );
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if matches_etag(request.get_all(IF_NONE_MATCH), tag) {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    if let Ok(content_type) = HeaderValue::from_str(&asset.content_type) {
        headers.insert(CONTENT_TYPE, content_type);
    }
    if gzip.is_some() {
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    (headers, bytes.clone()).into_response()
}

/// Whether `Accept-Encoding` lists `gzip` (or `*`) without `q=0`.
fn accepts_gzip(request: &HeaderMap) -> bool {
    request
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let coding = parts.next().unwrap_or_default();
            let refused = parts.any(|param| {
                param
                    .strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(name: http::HeaderName, value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn gzip_is_sent_only_to_clients_that_accept_it() {
        assert!(accepts_gzip(&with(ACCEPT_ENCODING, "gzip, deflate, br")));
        assert!(accepts_gzip(&with(ACCEPT_ENCODING, "br;q=1.0, GZIP;q=0.5")));
        assert!(accepts_gzip(&with(ACCEPT_ENCODING, "*")));
        assert!(!accepts_gzip(&with(ACCEPT_ENCODING, "gzip;q=0")));
        assert!(!accepts_gzip(&with(ACCEPT_ENCODING, "br, identity")));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn the_page_names_the_api_and_has_no_swagger_favicon() {
        let page = page(
            "<head>\n    <title>Swagger UI</title>\n    <link rel=\"icon\" href=\"./favicon-32x32.png\" />\n</head>",
        );
        assert!(page.contains("<title>appzone API</title>"), "{page}");
        assert!(!page.contains("favicon"), "{page}");
        assert!(page.contains("<base href=\"/docs/\" />"), "{page}");
    }
}
