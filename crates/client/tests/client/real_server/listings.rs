//! The provider and region listings against the real server.

use super::*;

// ---- provider and region listings (issue 17) ----------------------------------------------------

/// The providers of the built-in catalog, in its order.
const BUILTIN_PROVIDERS: [&str; 3] = ["aws", "gcp", "azure"];

#[tokio::test]
async fn list_providers_200_returns_the_catalogs_providers_in_catalog_order() {
    bounded(async {
        let server = TestApp::sqlite().await;
        for key in [&server.admin_key, &server.member_key] {
            let providers = client(&server.base, key).list_providers().await.unwrap();
            // The built-in catalog's providers in its order, then the one the fixture adds.
            assert_eq!(providers.data[..3], BUILTIN_PROVIDERS, "{providers:?}");
            assert_eq!(providers.data, ["aws", "gcp", "azure", "acme-cloud"]);
            assert_eq!(providers.status, "success");
            assert_eq!(providers.message, "4 providers");
            assert!(is_ulid(&providers.id), "{providers:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn list_regions_200_of_aws_starts_with_af_south_1_and_each_region_lists_its_zones() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.member_key);
        let regions = client.list_regions("aws").await.unwrap();
        assert!(!regions.data.is_empty());
        assert_eq!(regions.data[0], "af-south-1", "{regions:?}");
        assert!(regions.data.iter().any(|r| r == "us-east-1"), "{regions:?}");
        assert_eq!(regions.status, "success");
        assert_eq!(
            regions.message,
            format!("{} regions in aws", regions.data.len())
        );
        assert!(is_ulid(&regions.id), "{regions:?}");
        // Each id is what the next request's path needs.
        let zones = client.list_zones("aws", &regions.data[0]).await.unwrap();
        assert!(!zones.data.is_empty(), "{zones:?}");
        // Every provider listed has regions to list, by contract type too.
        for provider in client.list_providers().await.unwrap().data {
            let id: appzone_client::ProviderId = provider.parse().unwrap();
            let regions = client.list_regions(&id).await.unwrap();
            assert!(!regions.data.is_empty(), "{provider}: {regions:?}");
        }
        let acme = client.list_regions("acme-cloud").await.unwrap();
        assert_eq!(acme.data, ["empty-1", "one-1"]);
    })
    .await;
}

#[tokio::test]
async fn list_regions_of_an_unknown_provider_is_api_400_invalid_provider_with_a_hint() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.admin_key);
        for (provider, hint) in [
            ("awz", "; did you mean \"aws\"?"),
            ("gcq", "; did you mean \"gcp\"?"),
            ("nope", "; GET /api/v1/providers lists the providers"),
            ("oracle", "; GET /api/v1/providers lists the providers"),
        ] {
            let error = client.list_regions(provider).await.unwrap_err();
            // assert_api checks attempts == 1: a 400 is not retried.
            let message = assert_api(&error, 400, ErrorCode::InvalidProvider);
            assert_eq!(
                message,
                format!("unknown provider: no provider has the id {provider:?}{hint}")
            );
            assert!(!error.is_not_found(), "{error}");
        }
    })
    .await;
}

#[tokio::test]
async fn list_regions_with_a_malformed_provider_is_invalid_argument_before_sending() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let offline =
            Client::new(format!("http://{}", closed_port().await), &server.admin_key).unwrap();
        for client in [client(&server.base, &server.admin_key), offline] {
            for provider in ["AWS", "", "aws/x", "a b"] {
                let error = client.list_regions(provider).await.unwrap_err();
                assert_invalid_id(&error, ErrorCode::InvalidProvider, &format!("{provider:?}"));
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_wrong_api_key_is_api_401_invalid_api_key_for_the_listings() {
    bounded(async {
        let server = TestApp::sqlite().await;
        for client in [
            client(&server.base, ApiKey::generate()),
            Client::builder(&server.base, "not-an-appzone-key")
                .retry_policy(fast_retries())
                .build()
                .unwrap(),
        ] {
            for error in [
                client.list_providers().await.unwrap_err(),
                client.list_regions("aws").await.unwrap_err(),
                // Authentication comes first: an unknown provider is still a 401.
                client.list_regions("nope").await.unwrap_err(),
            ] {
                assert_api(&error, 401, ErrorCode::InvalidApiKey);
                assert!(error.is_unauthorized(), "{error}");
            }
        }
    })
    .await;
}
