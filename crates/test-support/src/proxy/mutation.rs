//! What each [`Mutation`] does to a request on its way in and to the answer on its way out.

use appzone_contract::headers::{IDEMPOTENCY_KEY, LISTING_CACHE_CONTROL, REQUEST_ID};
use appzone_contract::{paths, ErrorCode, ProfileId, ProviderId};
use http::header::IF_NONE_MATCH;
use http::{HeaderValue, Method, StatusCode};

use super::{Answer, Outgoing, Shared};

/// The promise the proxy breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// None: the proxy forwards faithfully (the control row).
    Faithful,
    /// Every answer loses its `X-Request-Id`.
    DropRequestId,
    /// Error bodies become `text/plain` with the bare message.
    TextErrorBodies,
    /// The admin's `DELETE` of another organization's profile answers 403 `forbidden`.
    ForbiddenForeignProfile,
    /// Every `ETag` is replaced with a stale one.
    StaleEtag,
    /// `HEAD` answers lose `Content-Type` and `ETag` (hyper never sends a body on a `HEAD`).
    HeadUnlikeGet,
    /// 405 answers lose `Allow`.
    DropAllow,
    /// A listing's `id` differs from its `X-Request-Id`.
    BodyIdDiffers,
    /// 404 `region_not_found` comes as 410, a status the document does not list for the zones.
    UndocumentedStatus,
    /// 413 comes as 503 `unavailable` without `Retry-After`.
    UnavailableWithoutRetryAfter,
    /// `RateLimit` loses its policy name and parameters.
    MalformedRateLimit,
    /// `/openapi.json` lists no operation (`paths` is empty: no route was registered in it).
    DocumentWithoutOperations,
    /// `/openapi.json` loses the profile deletion, which the server still answers.
    DocumentLosesAnOperation,
    /// The provider listing names a provider (`retired-cloud`) that its regions route refuses.
    ListsUnknownProvider,
    /// Listings lose `message` from their envelope.
    EnvelopeWithoutMessage,
    /// Listings say `Cache-Control: public, max-age=60`: shared caches may keep them.
    PublicCacheControl,
    /// The caller's `X-Request-Id` is dropped on the way in, so the server makes its own.
    CallerRequestIdReplaced,
    /// The caller's `X-Request-Id` comes back whatever it is, an invalid one too.
    InvalidRequestIdEchoed,
    /// Without a key, a path the server would refuse gets that refusal (400, 404), not 401.
    MissingKeyAfterValidation,
    /// With a wrong key, a path the server would refuse gets that refusal (400, 404), not 401.
    WrongKeyAfterValidation,
    /// Provider ids match case-insensitively (the gateway lower-cases them).
    CaseInsensitiveProvider,
    /// A well-formed provider outside the catalog gets 404 `provider_not_found`.
    UnknownProviderIs404,
    /// An unknown route answers 200 with an HTML page (a single-page-app fallback).
    HtmlForUnknownRoutes,
    /// A malformed region id gets 404 `region_not_found` (looked up without validation).
    MalformedRegionIs404,
    /// A well-formed region outside the provider gets 400 `invalid_region`.
    UnknownRegionIs400,
    /// A body over the limit gets 400, the `payload_too_large` body kept.
    OversizedIs400,
    /// A member's `DELETE` deletes the profile, 204 (no role check).
    MemberMayDelete,
    /// The `DELETE` of a profile already deleted answers 204 again instead of 404.
    DeletedAgainIs204,
    /// A malformed profile id's `DELETE` gets 400 `invalid_profile_id`.
    MalformedProfileIdIs400,
    /// The gateway drops `Idempotency-Key`, so the retry of a 204 gets 404.
    IdempotencyKeyDropped,
    /// `invalid_api_key` comes with 403.
    InvalidKeyWith403,
    /// Identity items whose `zone_name` is `null` lose the field (a serializer that skips
    /// `None`).
    IdentityNullNamesOmitted,
    /// The identity listing ignores `If-None-Match` (the gateway drops it on that route).
    IdentitiesIgnoreIfNoneMatch,
    /// The identity listing is served without a valid key (from a cache in front of the
    /// authentication): a 401 there is replaced with the answer to a valid key, when 200.
    IdentitiesServedWithoutKey,
    /// Every 400 and 404 of the identity listing comes as 404 `not_found` (its route mounted
    /// behind a prefix that answers for it).
    IdentityRefusalsAreNotFound,
    /// The gateway drops the identity listing's query, so `?mapping=` is never applied.
    MappingQueryDropped,
    /// An empty zone-mapping listing says `"data": null`.
    EmptyMappingListingDataNull,
    /// A zone mapping the organization does not have gets 404 `not_found`.
    UnknownMappingIsNotFound,
    /// A zone-mapping body that is not JSON gets 422 `invalid_zone_mapping`.
    NonJsonMappingIs422,
    /// A member's `PUT` or `DELETE` of a zone mapping goes through (no role check).
    MemberMayChangeMappings,
    /// A zone mapping stored again answers 201, as if created.
    ReplacedMappingIs201,
    /// The zone-mapping listing is stale: always empty.
    StaleMappingListing,
    /// `?mapping=` gives the mapping's `mapping` block but not its names.
    MappingNamesNotApplied,
    /// A zone mapping the catalog contradicts gets 400 `invalid_body`.
    ContradictedMappingIs400,
    /// A zone mapping the catalog contradicts is still 422, but its first zone was stored:
    /// the server kept what it could check before the offender.
    ContradictedMappingPartlyStored,
    /// A zone mapping deleted through the proxy is still served by its `GET` (a cache that
    /// the deletion did not reach).
    DeletedMappingStillServed,
    /// With several mappings, the identity listing gives the first mapping's names for every
    /// mapping (the others' not applied).
    OnlyFirstMappingApplied,
    /// A stored zone mapping's answer names nothing in `skipped`: what the server left out
    /// is dropped without a word.
    SkippedNotNamed,
    /// A zone mapping's answer drops its offering counts.
    OfferingCountsDropped,
    /// `?offers=` on the identity listing matches no zone.
    OffersMatchNothing,
    /// The instance-type listing gives each type without its zones.
    InstanceTypeZonesDropped,
    /// A mapping without offerings lists no instance type (200) instead of 422
    /// `offerings_not_stored`.
    OfferingsNotStoredIs200,
    /// `?offers=` without a mapping is ignored: 200 with the whole listing.
    OffersWithoutMappingIgnored,
}

const DOCUMENT: &str = "/openapi.json";

/// The path's segment after the segment `name` (such as the provider after `providers`).
fn segment_after<'a>(path: &'a str, name: &str) -> Option<&'a str> {
    let mut segments = path.split('?').next()?.split('/');
    segments.find(|s| *s == name)?;
    segments.next()
}

/// The body of `answer` as JSON, rewritten by `edit`.
fn edit_json(answer: &mut Answer, edit: impl FnOnce(&mut serde_json::Value)) {
    if let Some(mut value) = answer.json() {
        edit(&mut value);
        answer.body = value.to_string().into_bytes();
    }
}

impl Mutation {
    /// Whether the mutation rewrites the bodies of listings: a `HEAD` is then answered from
    /// the rewritten `GET`, as a server answering that body would (hyper sends no body on a
    /// `HEAD` but keeps the `GET`'s length).
    pub(super) fn rewrites_listing_bodies(self) -> bool {
        matches!(
            self,
            Mutation::ListsUnknownProvider
                | Mutation::EnvelopeWithoutMessage
                | Mutation::IdentityNullNamesOmitted
                | Mutation::EmptyMappingListingDataNull
                | Mutation::StaleMappingListing
                | Mutation::MappingNamesNotApplied
        )
    }

    /// Rewrites the request before it goes upstream.
    pub(super) fn rewrite_request(self, request: &mut Outgoing) {
        match self {
            Mutation::CallerRequestIdReplaced => {
                request.headers.remove(REQUEST_ID);
            }
            Mutation::IdempotencyKeyDropped => {
                request.headers.remove(IDEMPOTENCY_KEY);
            }
            Mutation::IdentitiesIgnoreIfNoneMatch if is_identities(&request.path) => {
                request.headers.remove(IF_NONE_MATCH);
            }
            Mutation::MappingQueryDropped if is_identities(&request.path) => {
                if let Some((path, _)) = request.path.split_once('?') {
                    request.path = path.to_owned();
                }
            }
            Mutation::CaseInsensitiveProvider => {
                if let Some(provider) = segment_after(&request.path, "providers") {
                    let from = format!("/providers/{provider}");
                    let to = from.to_ascii_lowercase();
                    request.path = request.path.replacen(&from, &to, 1);
                }
            }
            _ => {}
        }
    }

    /// Rewrites the answer to `received` (the request as the caller sent it); may ask the
    /// server again.
    pub(super) async fn rewrite_answer(
        self,
        shared: &Shared,
        received: &Outgoing,
        answer: &mut Answer,
    ) {
        let method = &received.method;
        let path = received.path.as_str();
        let status = answer.status;
        match self {
            Mutation::Faithful => {}
            Mutation::DropRequestId => {
                answer.headers.remove(REQUEST_ID);
            }
            Mutation::TextErrorBodies if status.as_u16() >= 400 => {
                let message = answer
                    .json()
                    .and_then(|b| b["error"].as_str().map(ToOwned::to_owned))
                    .unwrap_or_default();
                answer.body = message.into_bytes();
                answer
                    .headers
                    .insert("content-type", HeaderValue::from_static("text/plain"));
            }
            Mutation::ForbiddenForeignProfile
                if *method == Method::DELETE && path.ends_with(&shared.foreign_profile) =>
            {
                answer.set_error(StatusCode::FORBIDDEN, "forbidden");
            }
            Mutation::StaleEtag if answer.headers.contains_key("etag") => {
                answer
                    .headers
                    .insert("etag", HeaderValue::from_static("W/\"stale\""));
            }
            Mutation::HeadUnlikeGet if *method == Method::HEAD => {
                answer.headers.remove("content-type");
                answer.headers.remove("etag");
            }
            Mutation::DropAllow => {
                answer.headers.remove("allow");
            }
            Mutation::BodyIdDiffers => edit_json(answer, |body| {
                if body.get("id").is_some() {
                    body["id"] = "01AAAAAAAAAAAAAAAAAAAAAAAA".into();
                }
            }),
            Mutation::UndocumentedStatus
                if status == StatusCode::NOT_FOUND && path.ends_with("/zones") =>
            {
                answer.status = StatusCode::GONE;
            }
            Mutation::UnavailableWithoutRetryAfter if status == StatusCode::PAYLOAD_TOO_LARGE => {
                answer.set_error(StatusCode::SERVICE_UNAVAILABLE, "unavailable");
                answer.headers.remove("retry-after");
            }
            Mutation::MalformedRateLimit if answer.headers.contains_key("ratelimit") => {
                answer
                    .headers
                    .insert("ratelimit", HeaderValue::from_static("998"));
            }
            Mutation::DocumentWithoutOperations if path == DOCUMENT => edit_json(answer, |doc| {
                doc["paths"] = serde_json::json!({});
            }),
            Mutation::DocumentLosesAnOperation if path == DOCUMENT => edit_json(answer, |doc| {
                if let Some(paths) = doc["paths"].as_object_mut() {
                    paths.remove(paths::DELETE_PROFILE);
                }
            }),
            Mutation::ListsUnknownProvider
                if path == paths::LIST_PROVIDERS && status == StatusCode::OK =>
            {
                edit_json(answer, |body| {
                    if let Some(data) = body["data"].as_array_mut() {
                        data.push("retired-cloud".into());
                    }
                });
            }
            Mutation::EnvelopeWithoutMessage if status == StatusCode::OK => {
                edit_json(answer, |body| {
                    if let Some(envelope) = body.as_object_mut().filter(|b| b.contains_key("data"))
                    {
                        envelope.remove("message");
                    }
                });
            }
            Mutation::PublicCacheControl
                if answer.headers.get("cache-control")
                    == Some(&HeaderValue::from_static(LISTING_CACHE_CONTROL)) =>
            {
                answer.headers.insert(
                    "cache-control",
                    HeaderValue::from_static("public, max-age=60"),
                );
            }
            Mutation::InvalidRequestIdEchoed => {
                if let Some(theirs) = received.headers.get(REQUEST_ID) {
                    answer.headers.insert(REQUEST_ID, theirs.clone());
                }
            }
            Mutation::MissingKeyAfterValidation
                if !received.has_key() && status == StatusCode::UNAUTHORIZED =>
            {
                validate_first(shared, received, answer).await;
            }
            Mutation::WrongKeyAfterValidation
                if received.has_key() && status == StatusCode::UNAUTHORIZED =>
            {
                validate_first(shared, received, answer).await;
            }
            Mutation::UnknownProviderIs404
                if answer.is_error(StatusCode::BAD_REQUEST, "invalid_provider")
                    && segment_after(path, "providers")
                        .is_some_and(|p| p.parse::<ProviderId>().is_ok()) =>
            {
                answer.set_error(StatusCode::NOT_FOUND, "provider_not_found");
            }
            Mutation::HtmlForUnknownRoutes
                if answer.is_error(StatusCode::NOT_FOUND, "not_found") =>
            {
                answer.status = StatusCode::OK;
                answer.body = b"<!doctype html><html><body>appzone</body></html>".to_vec();
                answer.headers.insert(
                    "content-type",
                    HeaderValue::from_static("text/html; charset=utf-8"),
                );
            }
            Mutation::MalformedRegionIs404
                if answer.is_error(StatusCode::BAD_REQUEST, "invalid_region") =>
            {
                answer.set_error(StatusCode::NOT_FOUND, "region_not_found");
            }
            Mutation::UnknownRegionIs400
                if answer.is_error(StatusCode::NOT_FOUND, "region_not_found") =>
            {
                answer.set_error(StatusCode::BAD_REQUEST, "invalid_region");
            }
            Mutation::OversizedIs400 if status == StatusCode::PAYLOAD_TOO_LARGE => {
                answer.status = StatusCode::BAD_REQUEST;
            }
            Mutation::MemberMayDelete
                if *method == Method::DELETE
                    && answer.is_error(StatusCode::FORBIDDEN, "forbidden") =>
            {
                // The server deletes it for real, as one without the role check would.
                *answer = shared.send(&received.with_key(&shared.admin_key)).await;
            }
            Mutation::DeletedAgainIs204 if *method == Method::DELETE => {
                let mut deleted = shared.deleted.lock().unwrap();
                if status == StatusCode::NO_CONTENT {
                    deleted.insert(path.to_owned());
                } else if answer.is_error(StatusCode::NOT_FOUND, "profile_not_found")
                    && deleted.contains(path)
                {
                    answer.status = StatusCode::NO_CONTENT;
                    answer.body.clear();
                    answer.headers.remove("content-type");
                }
            }
            Mutation::MalformedProfileIdIs400
                if *method == Method::DELETE
                    && answer.is_error(StatusCode::NOT_FOUND, "profile_not_found")
                    && segment_after(path, "profiles")
                        .is_some_and(|id| id.parse::<ProfileId>().is_err()) =>
            {
                answer.set_error(StatusCode::BAD_REQUEST, "invalid_profile_id");
            }
            Mutation::InvalidKeyWith403
                if answer.is_error(StatusCode::UNAUTHORIZED, "invalid_api_key") =>
            {
                answer.status = StatusCode::FORBIDDEN;
            }
            _ => {
                self.rewrite_mapping_answer(shared, received, answer).await;
            }
        }
    }

    /// The mutations of the zone identities and zone mappings (API 1.2).
    async fn rewrite_mapping_answer(
        self,
        shared: &Shared,
        received: &Outgoing,
        answer: &mut Answer,
    ) {
        let method = &received.method;
        let path = received.path.as_str();
        let status = answer.status;
        let mapping = is_mapping(path);
        match self {
            Mutation::IdentityNullNamesOmitted
                if is_identities(path) && status == StatusCode::OK =>
            {
                edit_json(answer, |body| {
                    for item in body["data"].as_array_mut().into_iter().flatten() {
                        if let Some(item) = item.as_object_mut() {
                            if item.get("zone_name") == Some(&serde_json::Value::Null) {
                                item.remove("zone_name");
                            }
                        }
                    }
                });
            }
            Mutation::IdentitiesServedWithoutKey
                if is_identities(path) && status == StatusCode::UNAUTHORIZED =>
            {
                let served = shared.send(&received.with_key(&shared.valid_key)).await;
                if served.status == StatusCode::OK {
                    *answer = served;
                }
            }
            Mutation::IdentityRefusalsAreNotFound
                if is_identities(path)
                    && matches!(status, StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND) =>
            {
                answer.set_error(StatusCode::NOT_FOUND, "not_found");
            }
            Mutation::EmptyMappingListingDataNull
                if path == paths::ZONE_MAPPINGS && status == StatusCode::OK =>
            {
                edit_json(answer, |body| {
                    if body["data"].as_array().is_some_and(Vec::is_empty) {
                        body["data"] = serde_json::Value::Null;
                    }
                });
            }
            Mutation::UnknownMappingIsNotFound
                if answer.is_error(StatusCode::NOT_FOUND, ErrorCode::ZONE_MAPPING_NOT_FOUND) =>
            {
                answer.set_error(StatusCode::NOT_FOUND, "not_found");
            }
            Mutation::NonJsonMappingIs422
                if mapping && answer.is_error(StatusCode::BAD_REQUEST, ErrorCode::INVALID_BODY) =>
            {
                answer.set_error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    ErrorCode::INVALID_ZONE_MAPPING,
                );
            }
            Mutation::MemberMayChangeMappings
                if mapping && answer.is_error(StatusCode::FORBIDDEN, "forbidden") =>
            {
                // The server changes it for real, as one without the role check would.
                *answer = shared.send(&received.with_key(&shared.admin_key)).await;
            }
            Mutation::OnlyFirstMappingApplied
                if is_identities(path)
                    && path.matches("mapping=").count() > 1
                    && status == StatusCode::OK =>
            {
                edit_json(answer, |body| {
                    for item in body["data"].as_array_mut().into_iter().flatten() {
                        let first = item["names"][0]["zone_name"].clone();
                        for name in item["names"].as_array_mut().into_iter().flatten() {
                            name["zone_name"] = first.clone();
                        }
                    }
                });
            }
            Mutation::SkippedNotNamed
                if mapping && *method == Method::PUT && status.is_success() =>
            {
                edit_json(answer, |body| body["skipped"] = serde_json::json!([]));
            }
            Mutation::OfferingCountsDropped
                if mapping && *method == Method::PUT && status.is_success() =>
            {
                edit_json(answer, |body| {
                    body["data"]["offerings"] = serde_json::json!([])
                });
            }
            Mutation::OffersMatchNothing
                if is_identities(path) && path.contains("offers=") && status == StatusCode::OK =>
            {
                edit_json(answer, |body| body["data"] = serde_json::json!([]));
            }
            Mutation::InstanceTypeZonesDropped
                if is_instance_types(path) && status == StatusCode::OK =>
            {
                edit_json(answer, |body| {
                    for item in body["data"].as_array_mut().into_iter().flatten() {
                        item["zone_ids"] = serde_json::json!([]);
                    }
                });
            }
            Mutation::OfferingsNotStoredIs200
                if answer.is_error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    ErrorCode::OFFERINGS_NOT_STORED,
                ) =>
            {
                answer.status = StatusCode::OK;
                answer.body =
                    br#"{"data":[],"id":"x","message":"0 instance types","status":"success"}"#
                        .to_vec();
            }
            Mutation::OffersWithoutMappingIgnored
                if is_identities(path)
                    && path.contains("offers=")
                    && answer.is_error(StatusCode::BAD_REQUEST, ErrorCode::INVALID_QUERY) =>
            {
                answer.status = StatusCode::OK;
                answer.body = br#"{"data":[],"id":"x","message":"0 zones","mapping":null,"mappings":[],"source":{"compiled_on":null,"refreshed_on":null,"references":[]},"status":"success"}"#.to_vec();
            }
            Mutation::ReplacedMappingIs201
                if mapping && *method == Method::PUT && status == StatusCode::OK =>
            {
                answer.status = StatusCode::CREATED;
            }
            Mutation::StaleMappingListing
                if path == paths::ZONE_MAPPINGS && status == StatusCode::OK =>
            {
                edit_json(answer, |body| {
                    body["data"] = serde_json::json!([]);
                    body["message"] = "0 zone mappings".into();
                });
            }
            Mutation::MappingNamesNotApplied
                if is_identities(path) && path.contains('?') && status == StatusCode::OK =>
            {
                edit_json(answer, |body| {
                    for item in body["data"].as_array_mut().into_iter().flatten() {
                        item["zone_name"] = serde_json::Value::Null;
                    }
                });
            }
            Mutation::ContradictedMappingIs400
                if answer.is_error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    ErrorCode::INVALID_ZONE_MAPPING,
                ) =>
            {
                answer.set_error(StatusCode::BAD_REQUEST, ErrorCode::INVALID_BODY);
            }
            Mutation::ContradictedMappingPartlyStored
                if mapping
                    && *method == Method::PUT
                    && answer.is_error(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        ErrorCode::INVALID_ZONE_MAPPING,
                    ) =>
            {
                let mut body: serde_json::Value = serde_json::from_slice(&received.body).unwrap();
                if let Some(zones) = body["output"]["AvailabilityZones"].as_array_mut() {
                    zones.truncate(1);
                }
                let mut first = received.clone();
                first.body = body.to_string().into_bytes().into();
                shared.send(&first).await;
            }
            Mutation::DeletedMappingStillServed if mapping => {
                let mut deleted = shared.deleted.lock().unwrap();
                if *method == Method::DELETE && status == StatusCode::NO_CONTENT {
                    deleted.insert(path.to_owned());
                } else if *method == Method::GET
                    && status == StatusCode::NOT_FOUND
                    && deleted.contains(path)
                {
                    let id = path.rsplit('/').next().unwrap_or_default();
                    answer.status = StatusCode::OK;
                    answer.body = serde_json::json!({
                        "data": {"id": id, "provider": "aws", "label": id,
                                 "imported_at": "2026-01-01T00:00:00Z", "regions": []},
                        "id": "cached",
                        "message": format!("zone mapping {id}"),
                        "status": "success",
                    })
                    .to_string()
                    .into_bytes();
                }
            }
            _ => {}
        }
    }
}

/// Whether `path` is a zone-identity listing.
fn is_instance_types(path: &str) -> bool {
    path.split('?')
        .next()
        .is_some_and(|p| p.ends_with("/instance-types"))
}

fn is_identities(path: &str) -> bool {
    path.split('?')
        .next()
        .is_some_and(|p| p.ends_with("/zone-identities"))
}

/// Whether `path` is one zone mapping's.
fn is_mapping(path: &str) -> bool {
    path.strip_prefix(paths::ZONE_MAPPINGS)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Validation before authentication: the server is asked again with a valid key, and a
/// refusal of the path (400, 404) is the answer instead of the 401.
async fn validate_first(shared: &Shared, received: &Outgoing, answer: &mut Answer) {
    let validated = shared.send(&received.with_key(&shared.valid_key)).await;
    if matches!(validated.status.as_u16(), 400 | 404) {
        *answer = validated;
    }
}
