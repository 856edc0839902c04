//! The zone mappings' operations: store, list, read and delete an organization's zone
//! mappings. A second `impl` block of [`Client`], beside the listings and the profile delete.

use appzone_contract::{
    paths, ZoneMappingAnswer, ZoneMappingId, ZoneMappingList, ZoneMappingRequest,
};
use http::header::CONTENT_ENCODING;
use http::{HeaderValue, Method, StatusCode};

use super::call::Resend;
use super::{read_listing, Client};
use crate::mappings::{self, PutOutcome};
use crate::Error;

impl Client {
    /// Lists the zone mappings of the caller's organization, ordered by id, without their
    /// pairs (`GET /api/v1/zone-mappings`). Any key of the organization may call it.
    ///
    /// Retried as the listings are (connect failures, 429, 502, 503, 504), and read as
    /// tolerantly (`id`, `message`, `status` may be missing).
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), appzone_client::Error> {
    /// for mapping in client.zone_mappings().await?.data {
    ///     println!("{} ({}): {}", mapping.id, mapping.provider, mapping.label);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn zone_mappings(&self) -> Result<ZoneMappingList, Error> {
        self.get_listing(paths::ZONE_MAPPINGS).await
    }

    /// Reads zone mapping `id` of the caller's organization with its pairs (`GET
    /// /api/v1/zone-mappings/{mappingId}`). Any key of the organization may call it.
    ///
    /// Retried as the listings are. Typical error: 404 `zone_mapping_not_found` (no such
    /// mapping in the caller's organization, or another organization's;
    /// [`Error::is_not_found`]).
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let answer = client.zone_mapping(&"prod".parse()?).await?;
    /// if let Some(name) = answer.data.name_of("us-east-1", "use1-az1") {
    ///     println!("use1-az1 is {name} in this account");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn zone_mapping(&self, id: &ZoneMappingId) -> Result<ZoneMappingAnswer, Error> {
        self.get_listing(&paths::zone_mapping(id)).await
    }

    /// Stores zone mapping `id` of the caller's organization, or replaces it (`PUT
    /// /api/v1/zone-mappings/{mappingId}`): the cloud CLI's outputs in `request`, unchanged.
    /// Needs an `admin` key.
    ///
    /// [`ZoneMappingRequest::output`] (the zones) is, for `aws`, the JSON of `aws ec2
    /// describe-availability-zones --all-availability-zones --output json` for one region (or
    /// an array of such outputs), and for `azure` that of `az account list-locations -o json`;
    /// `gcp`, whose zone names are the same in every project, takes none
    /// ([`serde_json::Value::Null`]). [`ZoneMappingRequest::offerings`]
    /// ([`with_offerings`](ZoneMappingRequest::with_offerings)) carries what the account may
    /// launch where: `aws ec2 describe-instance-type-offerings --location-type
    /// availability-zone-id --output json`, `az vm list-skus --resource-type virtualMachines
    /// --location L --output json` or `gcloud compute machine-types list --format=json` (one
    /// output, or an array of them); the answer gives counts per region
    /// ([`ZoneMapping::offerings`](crate::ZoneMapping::offerings)), and
    /// [`instance_types`](Client::instance_types) and
    /// [`ZoneIdentityQuery::offers`](crate::ZoneIdentityQuery::offers) read them.
    /// [`PutOutcome::created`] tells a new mapping (201) from a replaced one (200);
    /// [`PutOutcome::answer`] holds the pairs as stored and, in
    /// [`skipped`](crate::ZoneMappingAnswer::skipped), what of the outputs could not be placed.
    ///
    /// A JSON body over 1 MiB is sent gzip-compressed (`Content-Encoding: gzip`), which the
    /// server inflates as it reads. What the server would refuse with 413 is refused before
    /// sending: a JSON body over 32 MiB ([`MAX_ZONE_MAPPING_BYTES`](crate::MAX_ZONE_MAPPING_BYTES),
    /// counted uncompressed, as the server counts it) or an `output` over 1 MiB
    /// ([`MAX_ZONE_MAPPING_OUTPUT_BYTES`](crate::MAX_ZONE_MAPPING_OUTPUT_BYTES)), as an
    /// [`Error::InvalidArgument`] naming `zone mapping` whose [`error_code`](Error::error_code)
    /// is `payload_too_large` and [`status`](Error::status) 413.
    ///
    /// Storing the same body again stores the same mapping, so the call is retried like a `GET`:
    /// on connect failures and on 429, 502, 503 and 504, not after a timeout or a broken
    /// connection. After a retry `created` is what the last attempt was answered (see
    /// [`PutOutcome::created`]).
    ///
    /// Typical errors: 403 `forbidden` for a `member` key ([`Error::is_forbidden`]), 400
    /// `invalid_body` (not of the shape the operation takes: a provider other than `aws`,
    /// `azure` and `gcp`, no `output` for `aws` or `azure`, a `gcp` mapping without `offerings`
    /// or with an `output`, offerings not of the provider's CLI), 422 `invalid_zone_mapping`
    /// (the catalog contradicts the output, or a truncated offerings output; the message names
    /// the first offenders; nothing was stored). Compare `error_code().map(ErrorCode::as_str)`
    /// with [`ErrorCode::INVALID_ZONE_MAPPING`](crate::ErrorCode::INVALID_ZONE_MAPPING) and
    /// [`ErrorCode::INVALID_BODY`](crate::ErrorCode::INVALID_BODY).
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use appzone_client::{ErrorCode, ZoneMappingRequest};
    ///
    /// // The files `aws ec2 describe-availability-zones --region us-east-1
    /// // --all-availability-zones --output json` and `aws ec2 describe-instance-type-offerings
    /// // --location-type availability-zone-id --region us-east-1 --output json` wrote.
    /// let output = serde_json::from_str(&std::fs::read_to_string("us-east-1.json")?)?;
    /// let offers = serde_json::from_str(&std::fs::read_to_string("offers.json")?)?;
    /// let label = Some("production account".to_owned());
    /// let request = ZoneMappingRequest::new("aws".parse()?, label, output).with_offerings(offers);
    /// match client.put_zone_mapping(&"prod".parse()?, &request).await {
    ///     Ok(outcome) => {
    ///         let verb = if outcome.created { "stored" } else { "replaced" };
    ///         println!("{verb} prod");
    ///         for region in &outcome.answer.data.offerings {
    ///             println!("{}: {} instance types", region.region, region.instance_types);
    ///         }
    ///     }
    ///     Err(e) if e.error_code().map(ErrorCode::as_str) == Some(ErrorCode::INVALID_ZONE_MAPPING) => {
    ///         println!("the catalog disagrees: {e}")
    ///     }
    ///     Err(e) => return Err(e.into()),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn put_zone_mapping(
        &self,
        id: &ZoneMappingId,
        request: &ZoneMappingRequest,
    ) -> Result<PutOutcome, Error> {
        let body = mappings::request_body(request)?;
        let gzip = (CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        let answer = self
            .call_with(
                Method::PUT,
                &paths::zone_mapping(id),
                body.gzip.then_some(&gzip),
                Some(&body.bytes),
                Resend::OnRetryableStatus,
            )
            .await?;
        self.inner
            .deprecations
            .note("putZoneMapping", answer.deprecation.as_ref());
        let created = answer.status == StatusCode::CREATED;
        let (request_id, attempts) = (answer.request_id.clone(), answer.attempts);
        let (answer, _etag) = read_listing::<ZoneMappingAnswer>(answer)?;
        Ok(PutOutcome {
            answer,
            created,
            request_id,
            attempts,
        })
    }

    /// Deletes zone mapping `id` of the caller's organization (`DELETE
    /// /api/v1/zone-mappings/{mappingId}`). `Ok(())` means the server answered 2xx (the API's
    /// 204): the deletion is committed. Needs an `admin` key.
    ///
    /// **Retries.** The operation takes no `Idempotency-Key`, so a retry of a deletion whose
    /// answer was lost would find no mapping and answer 404, although the first attempt
    /// deleted it. The call is therefore retried only when the request cannot have changed
    /// anything: after a connect failure (nothing was sent), and on 429 and 503, which the
    /// server answers without deleting. It is **not** retried after a timeout, a broken
    /// connection, or a 502 or 504 (a gateway answered; the server may have deleted behind
    /// it): those are returned, [`Error::is_retryable`] is true, and whether the mapping is
    /// still there is for the caller to check ([`zone_mapping`](Client::zone_mapping)) before
    /// trying again. So a 404 means there was no such mapping, with one documented exception:
    /// on PostgreSQL a database connection that breaks while the deletion commits answers 503
    /// although the commit may have happened; when a retry after it answers 404,
    /// [`ApiError::attempts`](crate::ApiError::attempts) is above 1.
    ///
    /// Typical errors: 404 `zone_mapping_not_found` ([`Error::is_not_found`]; also another
    /// organization's mapping, checked before the role), 403 `forbidden` for a `member` key
    /// ([`Error::is_forbidden`]).
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// match client.delete_zone_mapping(&"prod".parse()?).await {
    ///     Ok(()) => println!("deleted"),
    ///     Err(e) if e.is_not_found() => println!("no such mapping"),
    ///     Err(e) if e.is_forbidden() => println!("ask your organization admin: {e}"),
    ///     Err(e) => return Err(e.into()),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn delete_zone_mapping(&self, id: &ZoneMappingId) -> Result<(), Error> {
        let answer = self
            .call_with(
                Method::DELETE,
                &paths::zone_mapping(id),
                None,
                None,
                Resend::OnlyIfUnchanged,
            )
            .await?;
        self.inner
            .deprecations
            .note("deleteZoneMapping", answer.deprecation.as_ref());
        if answer.status.is_success() {
            Ok(())
        } else {
            Err(answer.into_api_error())
        }
    }
}
