//! Conditional listings (`list_*_if_changed`) against the real server, and what goes on the
//! wire against the scripted one: the first call gives the listing and a weak `ETag`, that tag
//! sent back gives `304 Not Modified` (not an error), a stale or foreign tag gives the listing
//! again, and errors are those of the plain listings.

use std::time::Duration;

use appzone_client::{Conditional, Error, ErrorCode, ProviderList, RegionList, ZoneList};
use appzone_test_support::{eventually, test_catalog, TestApp};

use crate::support::{assert_invalid_id, client, Reply, Server};

/// The longest any test here may take, server start included.
const TEST_BOUND: Duration = Duration::from_secs(60);

async fn bounded(test: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(TEST_BOUND, test)
        .await
        .expect("the test did not finish within its time bound");
}

/// The listing and its `ETag`, asserting the answer was a listing with a weak tag.
#[track_caller]
fn modified<T: std::fmt::Debug>(answer: Conditional<T>) -> (T, String) {
    match answer {
        Conditional::Modified {
            listing,
            etag: Some(etag),
        } => {
            assert!(
                etag.starts_with("W/\"") && etag.ends_with('"'),
                "not a weak ETag: {etag}"
            );
            (listing, etag)
        }
        other => panic!("expected a listing with an ETag, got {other:?}"),
    }
}

#[tokio::test]
async fn the_first_conditional_listing_is_modified_with_the_listing_and_a_weak_etag() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.member_key);

        let (providers, etag): (ProviderList, _) =
            modified(client.list_providers_if_changed(None).await.unwrap());
        assert_eq!(providers.data, client.list_providers().await.unwrap().data);
        assert_eq!(etag, server.etag("/api/v1/providers").await);

        let (regions, _): (RegionList, _) =
            modified(client.list_regions_if_changed("aws", None).await.unwrap());
        assert!(regions.data.iter().any(|r| r == "us-east-1"), "{regions:?}");

        let (zones, etag): (ZoneList, _) = modified(
            client
                .list_zones_if_changed("aws", "us-east-1", None)
                .await
                .unwrap(),
        );
        assert_eq!(
            zones.data,
            client.list_zones("aws", "us-east-1").await.unwrap().data
        );
        assert_eq!(zones.status, "success");
        assert_eq!(
            etag,
            server.etag(&TestApp::zones_path("aws", "us-east-1")).await
        );
    })
    .await;
}

#[tokio::test]
async fn the_etag_sent_back_gives_not_modified_for_each_listing() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.admin_key);

        let (_, etag) = modified(client.list_providers_if_changed(None).await.unwrap());
        let again = client.list_providers_if_changed(Some(&etag)).await.unwrap();
        assert_eq!(again, Conditional::NotModified);
        assert!(again.is_not_modified() && again.listing().is_none() && again.etag().is_none());

        let (_, etag) = modified(client.list_regions_if_changed("gcp", None).await.unwrap());
        let again = client.list_regions_if_changed("gcp", Some(&etag)).await;
        assert_eq!(again.unwrap(), Conditional::NotModified);

        let (_, etag) = modified(
            client
                .list_zones_if_changed("aws", "us-east-1", None)
                .await
                .unwrap(),
        );
        // Unchanged listings keep their tag: asking again and again stays 304.
        for _ in 0..3 {
            let again = client
                .list_zones_if_changed("aws", "us-east-1", Some(&etag))
                .await;
            assert_eq!(again.unwrap(), Conditional::NotModified);
        }
    })
    .await;
}

#[tokio::test]
async fn a_stale_or_foreign_etag_gives_the_listing_again_with_its_current_etag() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.member_key);
        let (zones, current) = modified(
            client
                .list_zones_if_changed("aws", "us-east-1", None)
                .await
                .unwrap(),
        );

        // A tag of another listing, and one the server never made.
        let (_, foreign) = modified(
            client
                .list_zones_if_changed("aws", "us-west-2", None)
                .await
                .unwrap(),
        );
        for other in [foreign.as_str(), "W/\"0000\"", "\"not-weak\""] {
            let again = client
                .list_zones_if_changed("aws", "us-east-1", Some(other))
                .await
                .unwrap();
            assert_eq!(
                again.listing().map(|z| &z.data),
                Some(&zones.data),
                "{other}"
            );
            assert_eq!(again.etag(), Some(current.as_str()), "{other}");
        }

        // The catalog changes: the tag kept from before is stale.
        let mut catalog = test_catalog();
        let region = catalog
            .providers
            .iter_mut()
            .find(|p| p.id.as_str() == "aws")
            .and_then(|p| p.regions.iter_mut().find(|r| r.id.as_str() == "us-east-1"))
            .unwrap();
        region.zones.push("us-east-1g".into());
        server.store.import_catalog(&catalog, false).await.unwrap();
        let served = eventually(Duration::from_secs(5), || async {
            client
                .list_zones("aws", "us-east-1")
                .await
                .is_ok_and(|z| z.data.len() == zones.data.len() + 1)
        })
        .await;
        assert!(
            served,
            "the import was not served within the refresh interval"
        );
        let (changed, fresh) = modified(
            client
                .list_zones_if_changed("aws", "us-east-1", Some(&current))
                .await
                .unwrap(),
        );
        assert_eq!(changed.data.last().map(String::as_str), Some("us-east-1g"));
        assert_ne!(fresh, current);
        let again = client
            .list_zones_if_changed("aws", "us-east-1", Some(&fresh))
            .await;
        assert_eq!(again.unwrap(), Conditional::NotModified);
    })
    .await;
}

#[tokio::test]
async fn errors_of_a_conditional_listing_are_those_of_the_plain_listing() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.member_key);
        let (_, etag) = modified(
            client
                .list_zones_if_changed("aws", "us-east-1", None)
                .await
                .unwrap(),
        );
        for tag in [None, Some(etag.as_str())] {
            // Unknown region: 404 region_not_found, whatever tag is sent.
            let error = client
                .list_zones_if_changed("aws", "mars-1", tag)
                .await
                .unwrap_err();
            assert!(error.is_not_found(), "{error}");
            assert_eq!(error.error_code(), Some(&ErrorCode::RegionNotFound));
            let plain = client.list_zones("aws", "mars-1").await.unwrap_err();
            assert_eq!(plain.status(), error.status());

            // Unknown provider: 400 invalid_provider.
            let error = client
                .list_regions_if_changed("nope", tag)
                .await
                .unwrap_err();
            assert_eq!(error.status().map(|s| s.as_u16()), Some(400), "{error}");
            assert_eq!(error.error_code(), Some(&ErrorCode::InvalidProvider));

            // A wrong key: 401.
            let stranger = crate::support::client(&server.base, "apz_not-a-real-key");
            let error = stranger.list_providers_if_changed(tag).await.unwrap_err();
            assert!(error.is_unauthorized(), "{error}");

            // Malformed ids are refused before sending, as by the plain listing.
            let error = client
                .list_zones_if_changed("AWS", "us-east-1", tag)
                .await
                .unwrap_err();
            assert_invalid_id(&error, ErrorCode::InvalidProvider, "AWS");
        }
        // A tag that cannot go in a header is refused before sending.
        let error = client
            .list_providers_if_changed(Some("W/\"a\"\r\nX-Injected: 1"))
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                Error::InvalidArgument {
                    argument: "ETag",
                    ..
                }
            ),
            "{error:?}"
        );
        assert_eq!(error.request_id(), None);
    })
    .await;
}

#[tokio::test]
async fn the_etag_goes_out_unchanged_in_if_none_match_and_only_when_given() {
    bounded(async {
        let server = Server::start(vec![
            Reply::zones(&["us-east-1a"]).header("etag", "W/\"abc\""),
            Reply::status(304).header("etag", "W/\"abc\""),
        ])
        .await;
        let client = client(&server.url(), "apz_key");
        let first = client
            .list_zones_if_changed("aws", "us-east-1", None)
            .await
            .unwrap();
        assert_eq!(first.etag(), Some("W/\"abc\""));
        let second = client
            .list_zones_if_changed("aws", "us-east-1", Some("W/\"abc\""))
            .await
            .unwrap();
        assert_eq!(second, Conditional::NotModified);
        let seen = server.seen();
        assert_eq!(seen.len(), 2, "a 304 is not retried");
        assert_eq!(seen[0].header("if-none-match"), None);
        assert_eq!(seen[1].header("if-none-match"), Some("W/\"abc\""));
    })
    .await;
}

#[tokio::test]
async fn a_listing_without_an_etag_is_modified_with_none_and_other_statuses_stay_errors() {
    bounded(async {
        let server = Server::start(vec![
            Reply::providers(&["aws"]),
            Reply::error(403, "forbidden", "no"),
        ])
        .await;
        let client = client(&server.url(), "apz_key");
        let first = client.list_providers_if_changed(None).await.unwrap();
        assert_eq!(
            first,
            Conditional::Modified {
                listing: client_list(&["aws"]),
                etag: None
            }
        );
        let error = client
            .list_providers_if_changed(Some("W/\"x\""))
            .await
            .unwrap_err();
        assert!(error.is_forbidden(), "{error}");
    })
    .await;
}

/// The provider list the scripted server's `Reply::providers` sends.
fn client_list(providers: &[&str]) -> ProviderList {
    serde_json::from_value(serde_json::json!({
        "data": providers,
        "id": "srv-id",
        "message": format!("{} providers", providers.len()),
        "status": "success",
    }))
    .unwrap()
}
