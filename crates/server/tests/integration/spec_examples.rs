//! The OpenAPI document's error examples are the server's real answers, word for word.

use axum::body::Body;
use axum::routing::get;
use axum::Router;
use tower::ServiceExt;

use appzone_test_support::TestApp;

/// Every error example of the document is what the server answers to the request it
/// illustrates, word for word: a portal reader's example is a real answer.
#[tokio::test]
async fn documented_error_examples_are_the_servers_answers() {
    let app = TestApp::sqlite().await;
    let zones = TestApp::zones_path;
    let regions = |p: &str| format!("/api/v1/providers/{p}/regions");
    let identities =
        |p: &str, r: &str| format!("/api/v1/providers/{p}/regions/{r}/zone-identities");
    let instance_types =
        |p: &str, r: &str, q: &str| format!("/api/v1/providers/{p}/regions/{r}/instance-types{q}");
    let mapping = |id: &str| format!("/api/v1/zone-mappings/{id}");
    let get_or_delete = |op: &str| {
        if op == "deleteZoneMapping" {
            reqwest::Method::DELETE
        } else {
            reqwest::Method::GET
        }
    };
    // Acme's zone mapping "prod", of aws, which the examples of refusals name.
    let stored = mapping_example(&app, "201").await;
    assert_eq!(stored.status, 201, "{}", stored.body);
    let wrong_key = appzone_contract::ApiKey::generate();
    // (operationId, status, example name or "" for a single example) -> (path, key)
    let member = Some(app.member_key.as_str());
    let request = |op: &str,
                   status: &str,
                   name: &str|
     -> Option<(String, Option<&str>, reqwest::Method)> {
        let get = reqwest::Method::GET;
        let delete = reqwest::Method::DELETE;
        let profile = TestApp::profile_path(app.profile.as_str());
        Some(match (op, status, name) {
            (_, "401", "missing_api_key") => (zones("aws", "us-east-1"), None, get),
            (_, "401", "invalid_api_key") => (
                zones("aws", "us-east-1"),
                Some(wrong_key.expose_secret()),
                get,
            ),
            ("listZones", "400", "invalid_provider") => (zones("aws2", "us-east-1"), member, get),
            ("listZones", "400", "invalid_region") => (zones("aws", "us-East-1"), member, get),
            ("listZones", "404", "close") => (zones("aws", "us-eats-1"), member, get),
            ("listZones", "404", "not_close") => (zones("aws", "us-east-9"), member, get),
            ("listRegions", "400", "close") => (regions("awz"), member, get),
            ("listRegions", "400", "not_close") => (regions("oracle"), member, get),
            ("listRegions", "400", "malformed") => (regions("aWs"), member, get),
            ("deleteApplicationProfile", "403", "") => (profile, member, delete),
            ("deleteApplicationProfile", "404", "") => (
                TestApp::profile_path("prof_missing"),
                Some(app.admin_key.as_str()),
                delete,
            ),
            ("listZoneIdentities", "400", "invalid_region") => {
                (identities("aws", "us-East-1"), member, get)
            }
            ("listZoneIdentities", "400", "invalid_query") => (
                format!("{}?foo=1", identities("aws", "us-east-1")),
                member,
                get,
            ),
            ("listZoneIdentities", "404", "region_not_found") => {
                (identities("aws", "us-eats-1"), member, get)
            }
            ("listZoneIdentities", "404", "zone_mapping_not_found") => (
                format!("{}?mapping=staging", identities("aws", "us-east-1")),
                member,
                get,
            ),
            ("listZoneIdentities", "422", "invalid_zone_mapping") => (
                format!("{}?mapping=prod", identities("azure", "eastus")),
                member,
                get,
            ),
            ("listZoneIdentities", "422", "offerings_not_stored") => (
                format!(
                    "{}?mapping=prod&offers=p5.48xlarge",
                    identities("aws", "us-east-1")
                ),
                member,
                get,
            ),
            ("listInstanceTypes", "400", "invalid_query") => {
                (instance_types("aws", "us-east-1", ""), member, get)
            }
            ("listInstanceTypes", "400", "invalid_region") => (
                instance_types("aws", "us-East-1", "?mapping=prod"),
                member,
                get,
            ),
            ("listInstanceTypes", "404", "") => (
                instance_types("aws", "us-east-1", "?mapping=staging"),
                member,
                get,
            ),
            ("listInstanceTypes", "422", "") => (
                instance_types("aws", "us-east-1", "?mapping=prod"),
                member,
                get,
            ),
            ("getZoneMapping" | "deleteZoneMapping", "404", "") => {
                (mapping("staging"), member, get_or_delete(op))
            }
            ("putZoneMapping", "403", "") => (mapping("prod"), member, reqwest::Method::PUT),
            ("putZoneMapping", "404", "") => (
                mapping("-prod"),
                Some(app.admin_key.as_str()),
                reqwest::Method::PUT,
            ),
            ("deleteZoneMapping", "403", "") => (mapping("prod"), member, delete),
            // Answered by `mapping_example` below, which sends a body.
            ("putZoneMapping", "400" | "422", "") => (
                mapping("prod"),
                Some(app.admin_key.as_str()),
                reqwest::Method::PUT,
            ),
            // Answered by `idempotency_example` below, which needs request headers.
            ("deleteApplicationProfile", "400" | "409" | "422", "") => (
                TestApp::profile_path("prof_missing"),
                Some(app.admin_key.as_str()),
                delete,
            ),
            _ => return None,
        })
    };
    let doc = appzone_contract::openapi::document();
    let mut checked = 0;
    let mut unmapped = Vec::new();
    // Answers every operation shares: a 429 needs a server with a tiny per-key limit.
    let limited = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 1,
        ..appzone_test_support::fast_config()
    })
    .await;
    for (template, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let op = operation["operationId"].as_str().unwrap();
            let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            if op.ends_with("Head") {
                continue; // no bodies
            }
            for (status, response) in operation["responses"].as_object().unwrap() {
                if status.starts_with('2') {
                    continue; // success examples carry request ids and times of their own
                }
                let content = &response["content"]["application/json"];
                let examples: Vec<(String, serde_json::Value)> =
                    match (content.get("example"), content.get("examples")) {
                        (Some(example), _) => vec![(String::new(), example.clone())],
                        (None, Some(examples)) => examples
                            .as_object()
                            .unwrap()
                            .iter()
                            .map(|(name, e)| (name.clone(), e["value"].clone()))
                            .collect(),
                        (None, None) => continue,
                    };
                for (name, example) in examples {
                    let shared = (&app, &limited, template.as_str(), &method);
                    let resp = if let Some(resp) =
                        shared_example(shared, operation, status, &name).await
                    {
                        resp
                    } else {
                        let Some((path, key, method)) = request(op, status, &name) else {
                            unmapped.push(format!("{op} {status} {name:?}"));
                            continue;
                        };
                        match (op, status.as_str()) {
                            ("deleteApplicationProfile", "400" | "409" | "422") => {
                                idempotency_example(&app, status).await
                            }
                            ("putZoneMapping", "400" | "422") => {
                                mapping_example(&app, status).await
                            }
                            _ => app.send(method, &path, key, &[]).await,
                        }
                    };
                    if status != "default" {
                        assert_eq!(
                            resp.status.to_string(),
                            *status,
                            "{op} {name}: {}",
                            resp.body
                        );
                    }
                    assert_eq!(resp.json(), example, "{op} {status} {name:?}: {template}");
                    checked += 1;
                }
            }
        }
    }
    assert!(
        unmapped.is_empty(),
        "examples without a request that shows them: {unmapped:?}"
    );
    eprintln!("{checked} documented error examples are the server's answers");
    assert!(checked >= 40, "{checked}");
}

/// A body length over the limit of `template`'s path.
fn over_limit(template: &str) -> usize {
    if template == appzone_contract::paths::ZONE_MAPPING {
        appzone_contract::MAX_ZONE_MAPPING_BYTES + 1
    } else {
        appzone_server::http::HttpConfig::DEFAULT_MAX_BODY_BYTES + 1
    }
}

/// The answer that shows an example of a response every operation shares (413, 429, 500, 503,
/// `default`), asked of the operation itself where a request can cause it: a body over the
/// limit, one request too many, a panicking and a slow handler behind the same layers, a
/// trailing slash, a method the path does not have. `None` for an operation's own response.
async fn shared_example(
    (app, limited, template, method): (&TestApp, &TestApp, &str, &reqwest::Method),
    operation: &serde_json::Value,
    status: &str,
    name: &str,
) -> Option<appzone_test_support::Resp> {
    // The document's example ids; the test catalog has the provider and the region, and a
    // profile missing from the organization answers 404 like any other.
    let mut example_path = template.to_owned();
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        if let Some(value) = parameter["example"].as_str() {
            let name = parameter["name"].as_str().unwrap();
            example_path = example_path.replace(&format!("{{{name}}}"), value);
        }
    }
    let admin = Some(app.admin_key.as_str());
    Some(match (status, name) {
        ("413", _) => {
            let resp = app
                .http
                .request(method.clone(), app.url(&example_path))
                .header("x-api-key", &app.admin_key)
                // Over the limit of the operation's path.
                .body(vec![b'x'; over_limit(template)])
                .send()
                .await
                .unwrap();
            appzone_test_support::Resp::read(resp).await
        }
        ("429", _) => {
            let key = Some(limited.member_key.as_str());
            let mut resp = limited.send(method.clone(), &example_path, key, &[]).await;
            for _ in 0..3 {
                if resp.status == 429 {
                    break;
                }
                resp = limited.send(method.clone(), &example_path, key, &[]).await;
            }
            resp
        }
        ("500" | "503", _) => {
            use appzone_server::http::HttpConfig;
            async fn boom() -> &'static str {
                panic!("boom")
            }
            async fn slow() -> &'static str {
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                "late"
            }
            let state = app.service.state.with_http(HttpConfig {
                request_timeout: std::time::Duration::from_millis(50),
                ..HttpConfig::default()
            });
            let routes = Router::new()
                .route("/500", get(boom))
                .route("/503", get(slow));
            let router = appzone_server::http::with_middleware(routes, state).router;
            let request = http::Request::get(format!("/{status}")).body(Body::empty());
            let response = router.oneshot(request.unwrap()).await.unwrap();
            let status = response.status().as_u16();
            let body = axum::body::to_bytes(response.into_body(), 1 << 16)
                .await
                .unwrap();
            appzone_test_support::Resp {
                status,
                headers: Default::default(),
                body: String::from_utf8(body.to_vec()).unwrap(),
            }
        }
        ("default", "not_found") => {
            let path = format!("{example_path}/");
            let resp = app.send(method.clone(), &path, admin, &[]).await;
            assert_eq!(resp.status, 404, "{path}: {}", resp.body);
            resp
        }
        ("default", "method_not_allowed") => {
            // No path of the API has PATCH (a zone mapping's has PUT).
            let resp = app
                .send(reqwest::Method::PATCH, &example_path, admin, &[])
                .await;
            assert_eq!(resp.status, 405, "PATCH {example_path}: {}", resp.body);
            resp
        }
        _ => return None,
    })
}

/// The answers of `PUT /api/v1/zone-mappings/prod` with a body: 201 for a valid AWS output
/// (stored), 400 for an output of another shape, 422 for a zone id the catalog does not know.
async fn mapping_example(app: &TestApp, status: &str) -> appzone_test_support::Resp {
    let zone = |id: &str| serde_json::json!({"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": id});
    let output = match status {
        "201" => serde_json::json!({"AvailabilityZones": [zone("use1-az2")]}),
        "400" => serde_json::json!({"Zones": []}),
        // Two ids swapped where names are the same for every account (eu-central-1).
        _ => serde_json::json!({"AvailabilityZones": [
            {"RegionName": "eu-central-1", "ZoneName": "eu-central-1b", "ZoneId": "euc1-az2"},
            {"RegionName": "eu-central-1", "ZoneName": "eu-central-1a", "ZoneId": "euc1-az3"}
        ]}),
    };
    let body = serde_json::json!({"provider": "aws", "output": output});
    let resp = app
        .http
        .put(app.url("/api/v1/zone-mappings/prod"))
        .header("x-api-key", &app.admin_key)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    appzone_test_support::Resp::read(resp).await
}

/// The answers of the `Idempotency-Key` errors: 400 for a malformed key, 422 for a key used on
/// another profile, and 409 for a key whose first request is still running (held in the
/// writer by another connection's write lock).
async fn idempotency_example(app: &TestApp, status: &str) -> appzone_test_support::Resp {
    let admin = Some(app.admin_key.as_str());
    let missing = TestApp::profile_path("prof_missing");
    let delete = reqwest::Method::DELETE;
    match status {
        "400" => {
            app.send(delete, &missing, admin, &[("idempotency-key", "two words")])
                .await
        }
        "422" => {
            let other = TestApp::profile_path("prof_other_missing");
            let key = [("idempotency-key", "example-422")];
            assert_eq!(
                app.send(delete.clone(), &other, admin, &key).await.status,
                404
            );
            app.send(delete, &missing, admin, &key).await
        }
        _ => {
            let mut lock = app.store.pool().acquire().await.unwrap();
            sqlx::query("BEGIN EXCLUSIVE")
                .execute(&mut *lock)
                .await
                .unwrap();
            let key = [("idempotency-key", "example-409")];
            let first = app.send(delete.clone(), &missing, admin, &key);
            let second = async {
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                let resp = app.send(delete.clone(), &missing, admin, &key).await;
                sqlx::query("ROLLBACK").execute(&mut *lock).await.unwrap();
                resp
            };
            let (first, second) = tokio::join!(first, second);
            assert_eq!(first.status, 404, "{}", first.body);
            second
        }
    }
}
