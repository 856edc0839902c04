//! A deprecated operation, seen through the client: the call works as before, the client keeps
//! the server's `Deprecation` and `Sunset` headers per operation (`Client::deprecations`) and
//! logs a warning once per operation. The real server deprecates nothing in this version, so
//! the test configures one that deprecates `listProviders` and `deleteApplicationProfile`.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use appzone_client::Client;
use appzone_contract::Deprecation;
use appzone_test_support::appzone_server::http::HttpConfig;
use appzone_test_support::appzone_server::ServiceConfig;
use appzone_test_support::{fast_config, TestApp};

/// Log lines written through `tracing`, kept for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn warnings(&self) -> Vec<String> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .filter(|line| line.contains("is deprecated"))
            .map(str::to_owned)
            .collect()
    }
}

#[tokio::test]
async fn deprecated_operations_work_and_the_client_reports_their_dates_once_each() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    // The test runs on one thread (tokio's default for tests): client and server log here.
    let _guard = tracing::subscriber::set_default(subscriber);

    let app = TestApp::sqlite_with(ServiceConfig {
        http: HttpConfig {
            deprecations: vec![
                Deprecation {
                    operation_id: "listProviders",
                    since: 1_798_761_600,
                    sunset: Some(1_814_400_000),
                },
                Deprecation {
                    operation_id: "deleteApplicationProfile",
                    since: 1_798_761_600,
                    sunset: None,
                },
            ],
            ..HttpConfig::default()
        },
        ..fast_config()
    })
    .await;
    let client = Client::new(format!("http://{}", app.addr()), app.admin_key.as_str()).unwrap();

    client.list_zones("aws", "us-east-1").await.unwrap();
    assert_eq!(client.deprecations(), []);
    assert_eq!(captured.warnings().len(), 0);

    for _ in 0..3 {
        assert!(client.list_providers().await.unwrap().data.len() >= 3);
    }
    // Deleting an unknown profile is an error; the answer still says the operation is
    // deprecated.
    let missing = client
        .delete_profile("prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2")
        .await
        .unwrap_err();
    assert!(missing.is_not_found());

    let notices = client.clone().deprecations();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert_eq!(notices[0].operation, "listProviders");
    assert_eq!(notices[0].deprecation, "@1798761600");
    assert_eq!(
        notices[0].since,
        Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_798_761_600))
    );
    assert_eq!(
        notices[0].sunset.as_deref(),
        Some("Thu, 01 Jul 2027 00:00:00 GMT")
    );
    assert_eq!(notices[1].operation, "deleteApplicationProfile");
    assert_eq!(notices[1].sunset, None);

    let warnings = captured.warnings();
    assert_eq!(
        warnings.len(),
        2,
        "one warning per operation: {warnings:#?}"
    );
    assert!(warnings[0].contains("WARN") && warnings[0].contains("listProviders"));
    assert!(warnings[0].contains("sunset=\"Thu, 01 Jul 2027 00:00:00 GMT\""));
    assert!(
        warnings[1].contains("deleteApplicationProfile")
            && warnings[1].contains("sunset=\"not set\"")
    );
}
