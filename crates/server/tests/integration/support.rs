//! `TestApp`: a server on an ephemeral port over a fresh database, with two organizations.

use std::time::Duration;

use appzone_contract::ProfileId;
use appzone_server::catalog::file::{CatalogFile, ProviderEntry, RegionEntry};
use appzone_server::model::{OrgId, Role};
use appzone_server::serve::{serve, ServeOptions};
use appzone_server::storage::{PoolSettings, Store};
use appzone_server::{Service, ServiceConfig};
use tokio::sync::oneshot;

pub const PG_ENV: &str = "APPZONE_TEST_POSTGRES_URL";

/// Runs each `async fn name(app: TestApp)` once per backend, as `sqlite::name` and
/// `postgres::name`. The PostgreSQL half is ignored unless selected (`--include-ignored`), so a
/// run without PostgreSQL reports those tests as ignored rather than as passed.
macro_rules! both_backends {
    ($(async fn $name:ident($app:ident: TestApp) $body:block)*) => {
        mod sqlite {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    let $app = $crate::support::TestApp::sqlite().await;
                    $body
                }
            )*
        }
        mod postgres {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test]
                #[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
                async fn $name() {
                    let $app = $crate::support::TestApp::postgres().await;
                    $body
                }
            )*
        }
    };
}
pub(crate) use both_backends;

/// A running server and the fixture it was seeded with.
pub struct TestApp {
    pub base: String,
    pub store: Store,
    pub http: reqwest::Client,
    pub service: Service,
    /// Organization `acme`: an admin key, a member key, a revoked admin key, two profiles.
    pub admin_key: String,
    pub member_key: String,
    pub revoked_key: String,
    pub profile: ProfileId,
    pub profile2: ProfileId,
    /// Organization `globex`: an admin key and one profile.
    pub other_admin_key: String,
    pub other_profile: ProfileId,
    shutdown: Option<oneshot::Sender<()>>,
    _db: Database,
}

enum Database {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, schema: String },
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Database::Postgres { admin_url, schema } = self {
            let (url, schema) = (admin_url.clone(), schema.clone());
            // Async cleanup cannot run in Drop, and must not block it either: the schema's
            // last connections close only when the test's runtime shuts down, after this.
            // A detached thread waits for them; `sweep_old_schemas` catches what a process
            // exit cuts short.
            std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                rt.block_on(drop_schema(&url, &schema));
            });
        }
    }
}

async fn drop_schema(url: &str, schema: &str) {
    if let Ok(mut conn) = connect_admin(url).await {
        let sql = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
        let _ = sqlx::Executor::execute(&mut conn, sqlx::AssertSqlSafe(sql)).await;
    }
}

/// Drops test schemas (`t_<ulid>`) created more than an hour ago by earlier runs.
async fn sweep_old_schemas(url: &str) {
    let Ok(mut conn) = connect_admin(url).await else {
        return;
    };
    let Ok(rows) = sqlx::query_as::<_, (String,)>(
        "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 't\\_%'",
    )
    .fetch_all(&mut conn)
    .await
    else {
        return;
    };
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    for (schema,) in rows {
        let old = ulid::Ulid::from_string(&schema[2..].to_uppercase())
            .is_ok_and(|id| id.datetime() < hour_ago);
        if old {
            drop_schema(url, &schema).await;
        }
    }
}

pub async fn connect_admin(url: &str) -> Result<sqlx::AnyConnection, sqlx::Error> {
    sqlx::any::install_default_drivers();
    <sqlx::AnyConnection as sqlx::Connection>::connect(url).await
}

/// A test catalog: the built-in one plus a provider with a region that has no zones.
pub fn test_catalog() -> CatalogFile {
    let mut catalog = CatalogFile::builtin();
    catalog.providers.push(ProviderEntry {
        id: "acme-cloud".parse().unwrap(),
        name: "Acme Cloud".into(),
        regions: vec![
            RegionEntry {
                id: "empty-1".parse().unwrap(),
                name: "Empty".into(),
                zones: vec![],
            },
            RegionEntry {
                id: "one-1".parse().unwrap(),
                name: "One".into(),
                zones: vec!["one-1a".into()],
            },
        ],
    });
    catalog
}

pub fn fast_config() -> ServiceConfig {
    ServiceConfig {
        key_cache_ttl: Duration::from_millis(500),
        catalog_refresh: Duration::from_millis(200),
        ..ServiceConfig::default()
    }
}

impl TestApp {
    /// A server on a fresh SQLite file.
    pub async fn sqlite() -> Self {
        Self::sqlite_with(fast_config()).await
    }

    /// A server on a fresh SQLite file, with `config`.
    pub async fn sqlite_with(config: ServiceConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("appzone.db").display());
        Self::start_on(&url, Database::Sqlite(dir), config).await
    }

    /// A server on a fresh schema of the PostgreSQL at `APPZONE_TEST_POSTGRES_URL`; panics when
    /// it is not set or unreachable (PostgreSQL tests are ignored unless selected).
    pub async fn postgres() -> Self {
        Self::postgres_with(fast_config(), |url| url).await
    }

    /// Like [`TestApp::postgres`] with `config`, the server's URL passed through `rewrite`
    /// (to go through a proxy, say).
    pub async fn postgres_with(
        config: ServiceConfig,
        rewrite: impl FnOnce(String) -> String,
    ) -> Self {
        let (url, schema) = postgres_schema().await;
        let scoped = rewrite(scoped_url(&url, &schema));
        let db = Database::Postgres {
            admin_url: url,
            schema,
        };
        Self::start_on(&scoped, db, config).await
    }

    /// A second server (replica) on this one's database, sharing nothing else.
    pub async fn replica(&self, config: ServiceConfig) -> Replica {
        let url = self.store.pool().connect_options().database_url.to_string();
        let store = Store::connect(&url, &PoolSettings::default())
            .await
            .unwrap();
        appzone_server::prepare(&store).await.unwrap();
        let service = appzone_server::service(store, &config).await.unwrap();
        let (base, tx) = spawn_server(service.router.clone(), ServeOptions::default()).await;
        Replica {
            base,
            _service: service,
            _shutdown: tx,
        }
    }

    async fn start_on(url: &str, db: Database, config: ServiceConfig) -> Self {
        Self::start_serving(url, db, config, ServeOptions::default()).await
    }

    /// A server on a fresh SQLite file with connection-level options.
    pub async fn sqlite_serving(options: ServeOptions) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("appzone.db").display());
        Self::start_serving(&url, Database::Sqlite(dir), fast_config(), options).await
    }

    async fn start_serving(
        url: &str,
        db: Database,
        config: ServiceConfig,
        options: ServeOptions,
    ) -> Self {
        let store = Store::connect(url, &PoolSettings::default()).await.unwrap();
        appzone_server::prepare(&store).await.unwrap();
        store.replace_catalog(&test_catalog()).await.unwrap();

        let acme: OrgId = "acme".parse().unwrap();
        let globex: OrgId = "globex".parse().unwrap();
        store.create_org(&acme, "Acme").await.unwrap();
        store.create_org(&globex, "Globex").await.unwrap();
        let key = |org: &OrgId, role| {
            let store = store.clone();
            let org = org.clone();
            async move {
                store
                    .create_key(&org, role, "test")
                    .await
                    .unwrap()
                    .expose_secret()
                    .to_owned()
            }
        };
        let admin_key = key(&acme, Role::Admin).await;
        let member_key = key(&acme, Role::Member).await;
        let revoked_key = key(&acme, Role::Admin).await;
        store.revoke_key(&revoked_key[4..16]).await.unwrap();
        let other_admin_key = key(&globex, Role::Admin).await;
        let profile = store.create_profile(&acme, "checkout", None).await.unwrap();
        let profile2 = store.create_profile(&acme, "billing", None).await.unwrap();
        let other_profile = store.create_profile(&globex, "theirs", None).await.unwrap();

        let service = appzone_server::service(store.clone(), &config)
            .await
            .unwrap();
        let (base, tx) = spawn_server(service.router.clone(), options).await;
        Self {
            base,
            store,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap(),
            service,
            admin_key,
            member_key,
            revoked_key,
            profile,
            profile2,
            other_admin_key,
            other_profile,
            shutdown: Some(tx),
            _db: db,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, path: &str, key: Option<&str>) -> Resp {
        self.send(reqwest::Method::GET, path, key, &[]).await
    }

    pub async fn delete(&self, path: &str, key: Option<&str>) -> Resp {
        self.send(reqwest::Method::DELETE, path, key, &[]).await
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        key: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let mut request = self.http.request(method, self.url(path));
        if let Some(key) = key {
            request = request.header("X-API-KEY", key);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Resp::read(request.send().await.unwrap()).await
    }

    pub fn profile_path(id: &str) -> String {
        format!("/api/v1/applications/profiles/{id}")
    }

    pub fn zones_path(provider: &str, region: &str) -> String {
        format!("/api/v1/providers/{provider}/regions/{region}/zones")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// A second server on the same database.
pub struct Replica {
    pub base: String,
    _service: Service,
    _shutdown: oneshot::Sender<()>,
}

/// A response, read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Resp {
    pub async fn read(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.text().await.unwrap();
        Self {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.body))
    }

    /// Asserts the contract's error shape, status and code; returns the message.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) -> String {
        assert_eq!(self.status, status, "body: {}", self.body);
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{self:?}"
        );
        assert!(
            self.header("x-request-id").is_some(),
            "no X-Request-Id: {self:?}"
        );
        let body = self.json();
        let object = body.as_object().expect("error body is an object");
        assert_eq!(object.len(), 2, "exactly error and error_code: {body}");
        assert_eq!(body["error_code"], code, "{body}");
        body["error"]
            .as_str()
            .expect("error is a string")
            .to_owned()
    }
}

/// How many listings the server at `base` answered past the router (its
/// `appzone_listing_shortcut_answers_total`).
pub async fn shortcut_answers(base: &str) -> u64 {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("appzone_listing_shortcut_answers_total "))
        .unwrap_or_else(|| panic!("no shortcut counter in:\n{text}"))
        .parse()
        .unwrap()
}

/// Polls `condition` every 50 ms until it holds or `within` passes.
pub async fn eventually<F, Fut>(within: Duration, mut condition: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if condition().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Insta settings shared by both backends, so one snapshot proves both answer alike.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    settings
}

/// The PostgreSQL URL and a fresh schema on it. Panics when `APPZONE_TEST_POSTGRES_URL` is not
/// set: only tests marked ignored call this, so it runs only when PostgreSQL tests were asked
/// for, and then a missing database must fail, not pass.
pub async fn postgres_schema() -> (String, String) {
    let url = std::env::var(PG_ENV).unwrap_or_else(|_| {
        panic!(
            "this PostgreSQL test was selected but {PG_ENV} is not set; set it to a database \
             this test may create schemas in, e.g. postgres://postgres@127.0.0.1:5432/test"
        )
    });
    static SWEPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SWEPT.swap(true, std::sync::atomic::Ordering::SeqCst) {
        sweep_old_schemas(&url).await;
    }
    let schema = format!("t_{}", ulid::Ulid::generate().to_string().to_lowercase());
    let mut conn = connect_admin(&url)
        .await
        .unwrap_or_else(|e| panic!("{PG_ENV} is set but PostgreSQL is unreachable: {e}"));
    sqlx::Executor::execute(
        &mut conn,
        sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")),
    )
    .await
    .unwrap();
    (url, schema)
}

pub fn scoped_url(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

impl TestApp {
    /// Sends `method path` over a raw socket, bypassing URL normalization (`..` survives).
    /// Returns the status and the body.
    pub async fn raw(&self, method: &str, path: &str, key: Option<&str>) -> (u16, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = self.base.trim_start_matches("http://");
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let key = key
            .map(|k| format!("X-API-KEY: {k}\r\n"))
            .unwrap_or_default();
        let head =
            format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{key}Connection: close\r\n\r\n");
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        let status = response
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        (status, body)
    }
}

/// One keep-alive HTTP/1.1 connection, for tests about what a connection remembers. Requests
/// go out one at a time; each answer is read to the end of its `Content-Length` body.
pub struct OneConnection {
    stream: tokio::io::BufReader<tokio::net::TcpStream>,
}

impl OneConnection {
    pub async fn open(app: &TestApp) -> Self {
        let addr = app.base.trim_start_matches("http://");
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        Self {
            stream: tokio::io::BufReader::new(stream),
        }
    }

    /// Sends `method path` with `key` and returns the status and the body. Panics if the
    /// server closes the connection instead of answering.
    pub async fn send(&mut self, method: &str, path: &str, key: Option<&str>) -> (u16, String) {
        use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
        let key = key
            .map(|k| format!("X-API-KEY: {k}\r\n"))
            .unwrap_or_default();
        let head = format!("{method} {path} HTTP/1.1\r\nHost: appzone\r\n{key}\r\n");
        self.stream
            .get_mut()
            .write_all(head.as_bytes())
            .await
            .unwrap();
        let mut status_line = String::new();
        self.stream.read_line(&mut status_line).await.unwrap();
        let status = status_line
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no answer on the connection: {status_line:?}"));
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.stream.read_line(&mut line).await.unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).await.unwrap();
        (status, String::from_utf8(body).unwrap())
    }
}

/// A fresh, empty PostgreSQL schema for a test that runs its own servers (a child process, say);
/// dropped in the background when this is dropped. `None` when no PostgreSQL is configured.
pub struct PgSchema {
    /// The database URL scoped to the schema.
    pub url: String,
    _db: Database,
}

pub async fn fresh_postgres_schema() -> PgSchema {
    let (admin_url, schema) = postgres_schema().await;
    PgSchema {
        url: scoped_url(&admin_url, &schema),
        _db: Database::Postgres { admin_url, schema },
    }
}

/// Serves `app` on an ephemeral 127.0.0.1 port; returns its base URL and the sender that stops
/// it (dropping the sender stops it too).
pub async fn spawn_server(
    app: appzone_server::http::App,
    options: ServeOptions,
) -> (String, oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = oneshot::channel::<()>();
    let stop = async {
        let _ = rx.await;
    };
    tokio::spawn(serve(listener, app, stop, options));
    (base, tx)
}
