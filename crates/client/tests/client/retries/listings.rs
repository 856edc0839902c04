//! The provider and region listings (issue 17): retried exactly like `list_zones`.

use std::time::Duration;

use appzone_client::{Client, Error, RetryPolicy};
use appzone_contract::headers::REQUEST_ID;

use super::patient_client;
use crate::support::{client, closed_port, key, reserve_port, Reply, Server};

/// The two new `GET`s.
#[derive(Debug, Clone, Copy)]
enum Listing {
    Providers,
    Regions,
}

impl Listing {
    async fn call(self, client: &Client) -> Result<(), Error> {
        match self {
            Listing::Providers => client.list_providers().await.map(drop),
            Listing::Regions => client.list_regions("aws").await.map(drop),
        }
    }

    /// A successful answer of this listing.
    fn body(self) -> Reply {
        match self {
            Listing::Providers => Reply::providers(&["aws"]),
            Listing::Regions => Reply::regions(&["us-east-1"]),
        }
    }
}

#[tokio::test]
async fn list_providers_and_list_regions_are_retried_on_429_502_503_504_only() {
    for listing in [Listing::Providers, Listing::Regions] {
        for (status, expected) in [
            (429, 3),
            (502, 3),
            (503, 3),
            (504, 3),
            (400, 1),
            (401, 1),
            (403, 1),
            (404, 1),
            (405, 1),
            (500, 1),
            (501, 1),
        ] {
            let server = Server::start(vec![Reply::error(status, "scripted", "scripted")]).await;
            let error = listing
                .call(&client(&server.url(), key()))
                .await
                .unwrap_err();
            assert_eq!(error.status().map(|s| s.as_u16()), Some(status));
            assert_eq!(error.as_api().unwrap().attempts as usize, server.attempts());
            assert_eq!(server.attempts(), expected, "{listing:?} {status}");
        }
    }
}

#[tokio::test]
async fn list_providers_and_list_regions_succeed_after_retries_with_one_request_id() {
    for listing in [Listing::Providers, Listing::Regions] {
        let server = Server::start(vec![
            Reply::error(503, "unavailable", "busy"),
            Reply::error(429, "rate_limited", "slow down").header("retry-after", "0"),
            listing.body(),
        ])
        .await;
        listing.call(&client(&server.url(), key())).await.unwrap();
        let ids: Vec<String> = server
            .seen()
            .iter()
            .map(|s| s.header(REQUEST_ID.as_str()).unwrap().to_owned())
            .collect();
        assert_eq!(ids.len(), 3, "{listing:?}");
        assert!(ids.iter().all(|id| id == &ids[0]), "{listing:?}: {ids:?}");
    }
}

#[tokio::test]
async fn list_providers_and_list_regions_are_retried_on_connect_failures() {
    for listing in [Listing::Providers, Listing::Regions] {
        let port = reserve_port();
        // As in get_and_delete_are_retried_when_the_server_is_not_listening_yet.
        let server =
            Server::start_later(port, Duration::from_millis(300), vec![listing.body()]).await;
        let client = patient_client(&server.url());
        listing.call(&client).await.unwrap();
        assert_eq!(server.attempts(), 1, "{listing:?}");

        // Nothing ever listens: the attempt limit, then a connect error.
        let refused = Client::builder(format!("http://{}", closed_port().await), key())
            .retry_policy(
                RetryPolicy::default()
                    .with_max_attempts(3)
                    .with_backoff(Duration::from_millis(10), Duration::from_millis(10)),
            )
            .build()
            .unwrap();
        let error = listing.call(&refused).await.unwrap_err();
        assert!(error.is_connect() && error.is_retryable(), "{error:?}");
        assert!(
            matches!(error, Error::Connect { attempts: 3, .. }),
            "{listing:?}: {error:?}"
        );
    }
}
