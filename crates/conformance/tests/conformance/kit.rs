//! The conformance kit as a library: every check passes against the real server, and each
//! promise broken by the mutating proxy fails the check named after it. The `appzone
//! conformance` command's tests are appzone-client's (its `cli` binary).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use appzone_client::Client;
use appzone_conformance::{self as conformance, Config, Outcome, Report};
use appzone_test_support::{both_backends, TestApp};

use appzone_test_support::proxy::{self, Mutation};
use appzone_test_support::scripted::{closed_port, Reply, Server};

/// The kit's configuration for `url` with every key and profile of the fixture.
fn full_config(server: &TestApp, url: &str) -> Config {
    Config::new(url, &server.member_key)
        .admin_key(&server.admin_key)
        .member_key(&server.member_key)
        .profile(server.profile.as_str())
        .foreign_profile(server.other_profile.as_str())
        .timeout(Duration::from_secs(10))
}

fn failed(report: &Report) -> Vec<&'static str> {
    report
        .checks()
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Fail { .. }))
        .map(|c| c.name)
        .collect()
}

both_backends! {
    async fn every_check_passes_against_the_real_server(server: TestApp) {
        every_check_passes_against(server).await;
    }
}

async fn every_check_passes_against(server: TestApp) {
    let started = Instant::now();
    let report = conformance::run(full_config(&server, &server.base)).await;
    let elapsed = started.elapsed();
    println!("{}run time: {elapsed:?}", report.text());
    assert!(report.is_success(), "{}", report.text());
    assert!(report.checks().len() >= 25, "{}", report.text());
    // Only what the fixture cannot show: no 429 or 503 came.
    for check in report.checks() {
        if let Outcome::Skip { why } = &check.outcome {
            assert_eq!(check.name, "retry_after_on_429_and_503", "{why}");
        }
        assert!(!check.promise.is_empty(), "{}", check.name);
    }
    // Names are unique.
    let mut names: Vec<_> = report.checks().iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), report.checks().len());
    // The zone mapping it stored is deleted again.
    assert_no_zone_mapping(&server).await;
}

/// Asserts the fixture's organization `acme` keeps no zone mapping.
async fn assert_no_zone_mapping(server: &TestApp) {
    let mappings = Client::new(server.base.as_str(), &server.admin_key)
        .unwrap()
        .zone_mappings()
        .await
        .unwrap();
    assert!(mappings.data.is_empty(), "{mappings:?}");
}

#[tokio::test]
async fn read_only_sends_no_delete_and_skips_the_deletion_checks() {
    let server = TestApp::sqlite().await;
    let report = conformance::run(full_config(&server, &server.base).read_only(true)).await;
    assert!(report.is_success(), "{}", report.text());
    for name in DELETION_CHECKS.iter().chain(&ZONE_MAPPING_WRITES) {
        let check = report.check(name).unwrap();
        assert!(
            matches!(&check.outcome, Outcome::Skip { why } if why.contains("read-only")),
            "{}",
            check.line()
        );
    }
    // The zone identities and zone mappings any key may read are checked.
    for name in ZONE_MAPPING_READS {
        let check = report.check(name).unwrap();
        assert_eq!(check.outcome, Outcome::Pass, "{}", check.line());
    }
    assert!(server.profile_is_live(&server.profile, "acme").await);
    assert_no_zone_mapping(&server).await;
    // The API key alone: the deletion matrix and the zone-mapping writes are skipped, saying
    // what they need.
    let report = conformance::run(Config::new(&server.base, &server.member_key)).await;
    assert!(report.is_success(), "{}", report.text());
    let check = report.check("admin_delete_is_204_then_404").unwrap();
    assert!(check
        .line()
        .starts_with("SKIP admin_delete_is_204_then_404: needs --admin-key"));
    for name in ZONE_MAPPING_WRITES {
        let line = report.check(name).unwrap().line();
        assert!(
            line.starts_with(&format!("SKIP {name}: needs --admin-key")),
            "{line}"
        );
    }
    for name in ZONE_MAPPING_READS {
        let check = report.check(name).unwrap();
        assert_eq!(check.outcome, Outcome::Pass, "{}", check.line());
    }
    assert!(server.profile_is_live(&server.profile, "acme").await);
    assert_no_zone_mapping(&server).await;
}

/// The checks that delete a profile (or send a body with a `DELETE`).
const DELETION_CHECKS: [&str; 5] = [
    "oversized_body_is_413_payload_too_large",
    "member_delete_is_403_forbidden",
    "foreign_profile_delete_is_404_profile_not_found",
    "admin_delete_is_204_then_404",
    "idempotent_retry_replays_204",
];

/// The checks of API 1.2's zone identities and zone mappings that only read.
const ZONE_MAPPING_READS: [&str; 12] = [
    "zone_identities_envelope_has_items_mapping_and_source",
    "zone_identities_zone_id_filter_keeps_that_zone_only",
    "zone_identities_filter_matching_nothing_is_200_with_empty_data",
    "zone_identities_unknown_query_parameter_is_400_invalid_query",
    "zone_identities_has_weak_etag_and_304_on_if_none_match",
    "zone_identities_without_a_valid_key_is_401",
    "zone_identities_unknown_provider_is_400_invalid_provider",
    "zone_identities_malformed_region_is_400_invalid_region",
    "zone_identities_unknown_region_is_404_region_not_found",
    "zone_identities_unknown_mapping_is_404_zone_mapping_not_found",
    "zone_mapping_listing_has_data_id_message_status",
    "unknown_zone_mapping_is_404_zone_mapping_not_found",
];

/// The checks that store, replace or delete a zone mapping.
const ZONE_MAPPING_WRITES: [&str; 14] = [
    "non_json_zone_mapping_put_is_400_invalid_body",
    "member_zone_mapping_put_and_delete_are_403_forbidden",
    "zone_mapping_put_is_201_then_200",
    "stored_zone_mapping_is_read_back_and_listed",
    "zone_identities_with_mapping_show_its_names",
    "zone_identities_with_two_mappings_name_each_accounts_zone",
    "contradicted_zone_mapping_put_is_422_invalid_zone_mapping_and_changes_nothing",
    "unknown_zone_id_is_skipped_and_named_and_the_rest_stored",
    "zone_mapping_delete_is_204_then_404",
    "zone_mapping_put_with_offerings_answers_counts_per_region",
    "zone_identities_offers_keeps_the_zones_offering_every_type",
    "instance_types_lists_each_type_with_its_zone_ids",
    "mapping_without_offerings_is_422_offerings_not_stored",
    "offers_without_a_mapping_is_400_invalid_query",
];

/// Each mutation of the proxy and the checks named after the promise it breaks (it may fail
/// others too). Every check of the kit is named at least once.
const MUTATIONS: [(Mutation, &[&str]); 53] = [
    (Mutation::Faithful, &[]),
    (
        Mutation::DocumentWithoutOperations,
        &["openapi_document_lists_the_operations"],
    ),
    (
        Mutation::DocumentLosesAnOperation,
        &[
            "openapi_document_lists_the_operations",
            "answer_statuses_are_documented_for_their_operation",
        ],
    ),
    (
        Mutation::ListsUnknownProvider,
        &["providers_regions_zones_walk_agrees"],
    ),
    (
        Mutation::EnvelopeWithoutMessage,
        &["listing_envelope_has_data_id_message_status"],
    ),
    (
        Mutation::BodyIdDiffers,
        &["listing_id_equals_x_request_id_header"],
    ),
    (
        Mutation::StaleEtag,
        &["listing_has_weak_etag_and_304_on_if_none_match"],
    ),
    (
        Mutation::PublicCacheControl,
        &["listing_cache_control_is_private_max_age_60"],
    ),
    (
        Mutation::HeadUnlikeGet,
        &["head_answers_like_get_without_body"],
    ),
    (
        Mutation::CallerRequestIdReplaced,
        &["caller_request_id_is_echoed"],
    ),
    (
        Mutation::InvalidRequestIdEchoed,
        &["invalid_request_id_is_replaced"],
    ),
    (
        Mutation::MissingKeyAfterValidation,
        &["missing_key_is_401_missing_api_key_before_validation"],
    ),
    (
        Mutation::WrongKeyAfterValidation,
        &["wrong_key_is_401_invalid_api_key_before_validation"],
    ),
    (
        Mutation::CaseInsensitiveProvider,
        &["uppercase_provider_is_400_invalid_provider"],
    ),
    (
        Mutation::UnknownProviderIs404,
        &[
            "unknown_provider_is_400_invalid_provider",
            "zone_identities_unknown_provider_is_400_invalid_provider",
        ],
    ),
    (
        Mutation::HtmlForUnknownRoutes,
        &["unknown_route_is_404_not_found"],
    ),
    (
        Mutation::MalformedRegionIs404,
        &[
            "malformed_region_is_400_invalid_region",
            "zone_identities_malformed_region_is_400_invalid_region",
        ],
    ),
    (
        Mutation::UnknownRegionIs400,
        &[
            "unknown_region_is_404_region_not_found",
            "zone_identities_unknown_region_is_404_region_not_found",
        ],
    ),
    (
        Mutation::DropAllow,
        &["wrong_method_is_405_method_not_allowed_with_allow"],
    ),
    (
        Mutation::OversizedIs400,
        &["oversized_body_is_413_payload_too_large"],
    ),
    (
        Mutation::MemberMayDelete,
        &["member_delete_is_403_forbidden"],
    ),
    (
        Mutation::ForbiddenForeignProfile,
        &["foreign_profile_delete_is_404_profile_not_found"],
    ),
    (
        Mutation::MalformedProfileIdIs400,
        &["malformed_profile_id_delete_is_404_profile_not_found"],
    ),
    (
        Mutation::DeletedAgainIs204,
        &["admin_delete_is_204_then_404"],
    ),
    (
        Mutation::IdempotencyKeyDropped,
        &["idempotent_retry_replays_204"],
    ),
    (
        Mutation::DropRequestId,
        &["every_answer_carries_a_valid_request_id"],
    ),
    (
        Mutation::TextErrorBodies,
        &["error_answers_are_json_with_error_and_error_code"],
    ),
    (
        Mutation::InvalidKeyWith403,
        &["error_codes_come_with_their_status"],
    ),
    (
        Mutation::UndocumentedStatus,
        &["answer_statuses_are_documented_for_their_operation"],
    ),
    (
        Mutation::UnavailableWithoutRetryAfter,
        &["retry_after_on_429_and_503"],
    ),
    (
        Mutation::MalformedRateLimit,
        &["ratelimit_headers_are_well_formed"],
    ),
    (
        Mutation::IdentityNullNamesOmitted,
        &["zone_identities_envelope_has_items_mapping_and_source"],
    ),
    (
        Mutation::IdentitiesIgnoreIfNoneMatch,
        &["zone_identities_has_weak_etag_and_304_on_if_none_match"],
    ),
    (
        Mutation::IdentitiesServedWithoutKey,
        &["zone_identities_without_a_valid_key_is_401"],
    ),
    (
        Mutation::IdentityRefusalsAreNotFound,
        &[
            "zone_identities_unknown_provider_is_400_invalid_provider",
            "zone_identities_malformed_region_is_400_invalid_region",
            "zone_identities_unknown_region_is_404_region_not_found",
            "zone_identities_unknown_mapping_is_404_zone_mapping_not_found",
        ],
    ),
    (
        Mutation::MappingQueryDropped,
        &[
            "zone_identities_unknown_mapping_is_404_zone_mapping_not_found",
            "zone_identities_with_mapping_show_its_names",
            "zone_identities_zone_id_filter_keeps_that_zone_only",
            "zone_identities_filter_matching_nothing_is_200_with_empty_data",
            "zone_identities_unknown_query_parameter_is_400_invalid_query",
        ],
    ),
    (
        Mutation::EmptyMappingListingDataNull,
        &["zone_mapping_listing_has_data_id_message_status"],
    ),
    (
        Mutation::UnknownMappingIsNotFound,
        &[
            "unknown_zone_mapping_is_404_zone_mapping_not_found",
            "zone_mapping_delete_is_204_then_404",
        ],
    ),
    (
        Mutation::NonJsonMappingIs422,
        &["non_json_zone_mapping_put_is_400_invalid_body"],
    ),
    (
        Mutation::MemberMayChangeMappings,
        &["member_zone_mapping_put_and_delete_are_403_forbidden"],
    ),
    (
        Mutation::ReplacedMappingIs201,
        &["zone_mapping_put_is_201_then_200"],
    ),
    (
        Mutation::StaleMappingListing,
        &["stored_zone_mapping_is_read_back_and_listed"],
    ),
    (
        Mutation::MappingNamesNotApplied,
        &["zone_identities_with_mapping_show_its_names"],
    ),
    (
        Mutation::ContradictedMappingIs400,
        &["contradicted_zone_mapping_put_is_422_invalid_zone_mapping_and_changes_nothing"],
    ),
    (
        Mutation::ContradictedMappingPartlyStored,
        &["contradicted_zone_mapping_put_is_422_invalid_zone_mapping_and_changes_nothing"],
    ),
    (
        Mutation::DeletedMappingStillServed,
        &["zone_mapping_delete_is_204_then_404"],
    ),
    (
        Mutation::OnlyFirstMappingApplied,
        &["zone_identities_with_two_mappings_name_each_accounts_zone"],
    ),
    (
        Mutation::SkippedNotNamed,
        &["unknown_zone_id_is_skipped_and_named_and_the_rest_stored"],
    ),
    (
        Mutation::OfferingCountsDropped,
        &["zone_mapping_put_with_offerings_answers_counts_per_region"],
    ),
    (
        Mutation::OffersMatchNothing,
        &["zone_identities_offers_keeps_the_zones_offering_every_type"],
    ),
    (
        Mutation::InstanceTypeZonesDropped,
        &["instance_types_lists_each_type_with_its_zone_ids"],
    ),
    (
        Mutation::OfferingsNotStoredIs200,
        &["mapping_without_offerings_is_422_offerings_not_stored"],
    ),
    (
        Mutation::OffersWithoutMappingIgnored,
        &["offers_without_a_mapping_is_400_invalid_query"],
    ),
];

// Multi-threaded, the mutations four at a time (each against a server and a proxy of its own):
// one after another on one thread, the longest test of the suite left a core idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_broken_promise_fails_the_check_named_after_it() {
    let started = Instant::now();
    let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(4));
    let mut runs = tokio::task::JoinSet::new();
    for (index, &(mutation, _)) in MUTATIONS.iter().enumerate() {
        let slots = slots.clone();
        runs.spawn(async move {
            let _slot = slots.acquire_owned().await;
            let server = TestApp::sqlite().await;
            let url = proxy::start(&server, mutation).await;
            (index, conformance::run(full_config(&server, &url)).await)
        });
    }
    let mut reports = runs.join_all().await;
    reports.sort_by_key(|(index, _)| *index);
    let mut all_checks = BTreeSet::new();
    for (&(mutation, expected), (_, report)) in MUTATIONS.iter().zip(&reports) {
        let failed = failed(report);
        println!("{mutation:?} -> {failed:?}");
        if mutation == Mutation::Faithful {
            all_checks.extend(report.checks().iter().map(|c| c.name));
        }
        for name in expected {
            assert!(
                failed.contains(name),
                "{mutation:?} did not fail {name}:\n{}",
                report.text()
            );
        }
        assert_eq!(
            report.is_success(),
            expected.is_empty(),
            "{mutation:?}:\n{}",
            report.text()
        );
    }
    println!("run time: {:?}", started.elapsed());
    // Every check of the kit is shown failing: a new check needs a mutation of its own.
    let named: BTreeSet<&str> = MUTATIONS
        .iter()
        .flat_map(|(_, expected)| expected.iter().copied())
        .collect();
    let unnamed: Vec<_> = all_checks.difference(&named).collect();
    let unknown: Vec<_> = named.difference(&all_checks).collect();
    assert!(
        unnamed.is_empty() && unknown.is_empty(),
        "checks no mutation is named for: {unnamed:?}; names in the table the kit has no \
         check of: {unknown:?}"
    );
}

#[tokio::test]
async fn a_server_that_is_not_appzone_fails_the_checks_without_a_panic() {
    // An HTML page for everything, and then no server at all.
    let server = Server::start(vec![Reply::text(200, "text/html", "<html>hello</html>")]).await;
    let report = conformance::run(Config::new(server.url(), "apz_x").read_only(true)).await;
    assert!(!report.is_success());
    let check = report
        .check("listing_envelope_has_data_id_message_status")
        .unwrap();
    assert!(check.line().starts_with("FAIL "), "{}", report.text());
    let report =
        conformance::run(Config::new(format!("http://{}", closed_port().await), "k")).await;
    let summary = report.summary();
    assert_eq!(summary.passed, 0, "{}", report.text());
    assert!(summary.failed > 0, "{}", report.text());
    assert!(report.text().ends_with(&format!("{summary}\n")));
}
