//! [`TestApp`]: the server in process on an ephemeral port of 127.0.0.1 over a fresh database,
//! seeded with two organizations.

use std::time::Duration;

use appzone_contract::ProfileId;
use appzone_server::model::catalog_file::{CatalogFile, ProviderEntry, RegionEntry};
use appzone_server::model::{OrgId, Role};
use appzone_server::serve::{serve, ServeOptions};
use appzone_server::storage::{PoolSettings, Store};
use appzone_server::{Service, ServiceConfig};
use tokio::sync::oneshot;

use crate::postgres::Database;
use crate::raw::{self, RawConnection, RawResponse};

/// A running server and the fixture it was seeded with.
#[derive(Debug)]
pub struct TestApp {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub store: Store,
    /// A client with a 10 s timeout.
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

/// A test catalog: the built-in one plus provider `acme-cloud`, whose region `empty-1` has no
/// zones and region `one-1` has one.
pub fn test_catalog() -> CatalogFile {
    let mut catalog = CatalogFile::builtin();
    catalog.providers.push(ProviderEntry {
        id: "acme-cloud".parse().unwrap(),
        name: "Acme Cloud".into(),
        regions: vec![
            RegionEntry::new("empty-1".parse().unwrap(), "Empty", vec![]),
            RegionEntry::new("one-1".parse().unwrap(), "One", vec!["one-1a".into()]),
        ],
    });
    catalog
}

/// The default configuration with a 500 ms key cache and a 200 ms catalog refresh, so tests
/// of revocation and catalog changes are quick.
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
        let (url, db) = Database::sqlite();
        Self::start(&url, db, config, ServeOptions::default()).await
    }

    /// A server on the SQLite database at `url`, which the test made (on a small file system,
    /// say) and removes itself.
    pub async fn sqlite_at(url: &str, config: ServiceConfig) -> Self {
        Self::start(url, Database::Elsewhere, config, ServeOptions::default()).await
    }

    /// A server on the PostgreSQL database at `url`, which the test made (a throwaway
    /// cluster, say) and removes itself.
    pub async fn postgres_at(url: &str, config: ServiceConfig) -> Self {
        Self::start(url, Database::Elsewhere, config, ServeOptions::default()).await
    }

    /// A server on a fresh SQLite file with connection-level options.
    pub async fn sqlite_serving(options: ServeOptions) -> Self {
        let (url, db) = Database::sqlite();
        Self::start(&url, db, fast_config(), options).await
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
        let (url, db) = Database::postgres().await;
        Self::start(&rewrite(url), db, config, ServeOptions::default()).await
    }

    /// The one way every constructor above builds its server: migrate, import the test
    /// catalog, seed the fixture (the one way to seed organizations and keys), serve. A fresh
    /// SQLite file starts as a copy of [`SqliteTemplate`], where all of that was done once.
    async fn start(url: &str, db: Database, config: ServiceConfig, options: ServeOptions) -> Self {
        let copied = match db.sqlite_file() {
            Some(file) => {
                let template = SqliteTemplate::get().await;
                std::fs::write(&file, &template.bytes).unwrap();
                Some(template.fixture.clone())
            }
            None => None,
        };
        // As `appzone-server serve` sets it: a statement ends before its request times out.
        let settings = PoolSettings {
            statement_timeout: Some(appzone_server::http::write_deadline(
                config.http.request_timeout,
            )),
            ..PoolSettings::default()
        };
        let store = Store::connect(url, &settings).await.unwrap();
        // On a copy too: what the server does to any database it starts on.
        appzone_server::prepare(&store).await.unwrap();
        let fixture = match copied {
            Some(fixture) => fixture,
            None => Fixture::seed(&store).await,
        };

        let service = appzone_server::service(store.clone(), &config)
            .await
            .unwrap();
        let (base, tx) = spawn_server(service.app.clone(), options).await;
        Self {
            base,
            store,
            http: plain_http()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap(),
            service,
            admin_key: fixture.admin_key,
            member_key: fixture.member_key,
            revoked_key: fixture.revoked_key,
            profile: fixture.profile,
            profile2: fixture.profile2,
            other_admin_key: fixture.other_admin_key,
            other_profile: fixture.other_profile,
            shutdown: Some(tx),
            _db: db,
        }
    }

    /// A second server (replica) on this one's database, sharing nothing else.
    pub async fn replica(&self, config: ServiceConfig) -> Replica {
        let url = self.store.pool().connect_options().database_url.to_string();
        let store = Store::connect(&url, &PoolSettings::default())
            .await
            .unwrap();
        appzone_server::prepare(&store).await.unwrap();
        let service = appzone_server::service(store, &config).await.unwrap();
        let (base, tx) = spawn_server(service.app.clone(), ServeOptions::default()).await;
        Replica {
            base,
            _service: service,
            _shutdown: tx,
        }
    }

    /// `127.0.0.1:PORT`, for raw connections.
    pub fn addr(&self) -> &str {
        self.base.trim_start_matches("http://")
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

    /// The `ETag` the member key gets for `path`.
    pub async fn etag(&self, path: &str) -> String {
        let resp = self.get(path, Some(&self.member_key)).await;
        let etag = resp.header("etag");
        etag.unwrap_or_else(|| panic!("no ETag: {resp:?}"))
            .to_owned()
    }

    /// Sends `method path` over a fresh raw connection, bypassing URL normalization (`..`
    /// survives).
    pub async fn raw(&self, method: &str, path: &str, key: Option<&str>) -> RawResponse {
        let head = raw::request_head(method, path, key, true);
        raw::exchange(self.addr(), head.as_bytes(), Duration::from_secs(20))
            .await
            .unwrap()
    }

    /// A keep-alive raw connection to this server.
    pub async fn connection(&self) -> RawConnection {
        RawConnection::open(self.addr()).await
    }

    /// Whether profile `id` of `org` exists and is not deleted, by the database.
    pub async fn profile_is_live(&self, id: &ProfileId, org: &str) -> bool {
        self.store.live_profile_exists(id, org).await.unwrap()
    }

    /// [`crate::seed_profiles`] on this server's database.
    pub async fn seed_profiles(&self, org: &str, tag: &str, n: usize) -> Vec<String> {
        crate::seed_profiles(&self.store, org, tag, n).await
    }

    pub fn profile_path(id: &str) -> String {
        format!("/api/v1/applications/profiles/{id}")
    }

    pub fn zones_path(provider: &str, region: &str) -> String {
        format!("/api/v1/providers/{provider}/regions/{region}/zones")
    }

    /// Stores acme's zone mapping `id` (one zone of aws/us-east-1) with the admin key; panics
    /// unless it is created (201).
    pub async fn store_mapping(&self, id: &str) {
        let mapping = serde_json::json!({"provider": "aws", "output": {"AvailabilityZones": [
            {"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": "use1-az2"}]}});
        let stored = self
            .http
            .put(self.url(&format!("/api/v1/zone-mappings/{id}")))
            .header("X-API-KEY", &self.admin_key)
            .body(mapping.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(stored.status(), 201, "zone mapping {id} stored");
    }
}

/// What [`TestApp`] seeds after the test catalog, and the keys and ids it hands the test.
#[derive(Debug, Clone)]
struct Fixture {
    admin_key: String,
    member_key: String,
    revoked_key: String,
    profile: ProfileId,
    profile2: ProfileId,
    other_admin_key: String,
    other_profile: ProfileId,
}

impl Fixture {
    /// Imports the test catalog and seeds the two organizations, on a prepared database.
    async fn seed(store: &Store) -> Self {
        store.replace_catalog(&test_catalog()).await.unwrap();
        let acme: OrgId = "acme".parse().unwrap();
        let globex: OrgId = "globex".parse().unwrap();
        store.create_org(&acme, "Acme").await.unwrap();
        store.create_org(&globex, "Globex").await.unwrap();
        let key = |org: &OrgId, role| {
            let (store, org) = (store.clone(), org.clone());
            async move {
                let key = store.create_key(&org, role, "test").await.unwrap();
                key.expose_secret().to_owned()
            }
        };
        let admin_key = key(&acme, Role::Admin).await;
        let member_key = key(&acme, Role::Member).await;
        let revoked_key = key(&acme, Role::Admin).await;
        store.revoke_key(&revoked_key[4..16]).await.unwrap();
        let other_admin_key = key(&globex, Role::Admin).await;
        Self {
            admin_key,
            member_key,
            revoked_key,
            profile: store.create_profile(&acme, "checkout", None).await.unwrap(),
            profile2: store.create_profile(&acme, "billing", None).await.unwrap(),
            other_admin_key,
            other_profile: store.create_profile(&globex, "theirs", None).await.unwrap(),
        }
    }
}

/// A SQLite database migrated, with the test catalog imported and the fixture seeded, made
/// once per test process: each SQLite [`TestApp`] starts on a copy of its bytes. Migrating and
/// importing the catalog's thousands of rows were most of a test server's start-up, paid again
/// by every test; the copy is the same database, and the server still prepares it as it would
/// any database it starts on.
#[derive(Debug)]
struct SqliteTemplate {
    bytes: Vec<u8>,
    fixture: Fixture,
}

impl SqliteTemplate {
    async fn get() -> &'static Self {
        static TEMPLATE: tokio::sync::OnceCell<SqliteTemplate> = tokio::sync::OnceCell::const_new();
        TEMPLATE.get_or_init(Self::make).await
    }

    async fn make() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("template.db");
        let store = Store::connect(
            &format!("sqlite://{}", file.display()),
            &PoolSettings::default(),
        )
        .await
        .unwrap();
        appzone_server::prepare(&store).await.unwrap();
        let fixture = Fixture::seed(&store).await;
        // One self-contained file, its write-ahead log folded in: the bytes to copy.
        let copy = dir.path().join("copy.db");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "VACUUM INTO '{}'",
            copy.display()
        )))
        .execute(store.pool())
        .await
        .unwrap();
        store.pool().close().await;
        Self {
            bytes: std::fs::read(&copy).unwrap(),
            fixture,
        }
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
#[derive(Debug)]
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

    /// The header names, sorted, but those that differ per request by design (`date`,
    /// `x-request-id`).
    pub fn header_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .headers
            .keys()
            .map(|k| k.to_string())
            .filter(|k| k != "date" && k != "x-request-id")
            .collect();
        names.sort();
        names
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

/// A client builder for the test servers, which speak plain HTTP: it loads no root
/// certificates (reading and decoding the system's, for each client, was a tenth of a
/// debug test's time).
///
/// It reuses a kept-alive connection only within [`POOL_IDLE`] of its last answer. The server
/// closes a connection left idle for its header-read timeout (500 ms in the shortest tests), and
/// a request sent on a pooled connection as that close arrives fails with `IncompleteMessage`:
/// a test asking again after such a pause flipped that way on a busy run.
pub(crate) fn plain_http() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .tls_certs_only([])
        .pool_idle_timeout(POOL_IDLE)
}

/// Half the shortest header-read timeout a test gives its server.
const POOL_IDLE: Duration = Duration::from_millis(250);

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
