//! Zone mappings: the `PUT` body, checked before sending, and what a `PUT` answered.

use appzone_contract::{ErrorCode, ZoneMappingAnswer, ZoneMappingRequest, MAX_ZONE_MAPPING_BYTES};

use crate::Error;

/// The `PUT` body of `request`: its JSON, compact. A body over [`MAX_ZONE_MAPPING_BYTES`] (the
/// server answers it with 413 `payload_too_large`) is an [`Error::InvalidArgument`] naming
/// `zone mapping`, with that code and status, before anything is sent.
pub(crate) fn request_body(request: &ZoneMappingRequest) -> Result<Vec<u8>, Error> {
    let body = serde_json::to_vec(request).map_err(|e| Error::invalid("zone mapping", e))?;
    if body.len() > MAX_ZONE_MAPPING_BYTES {
        return Err(Error::InvalidArgument {
            argument: "zone mapping",
            reason: format!(
                "its JSON body is {} bytes; the API accepts at most {MAX_ZONE_MAPPING_BYTES} \
                 (1 MiB): store the output of fewer regions per mapping",
                body.len()
            ),
            code: Some(ErrorCode::PayloadTooLarge),
        });
    }
    Ok(body)
}

/// What a successful [`Client::put_zone_mapping`](crate::Client::put_zone_mapping) answered:
/// the mapping as stored, and whether it was new.
///
/// ```no_run
/// use appzone_client::{ZoneMappingId, ZoneMappingRequest};
///
/// # async fn run(client: appzone_client::Client) -> Result<(), Box<dyn std::error::Error>> {
/// let output: serde_json::Value =
///     serde_json::from_str(&std::fs::read_to_string("describe-us-east-1.json")?)?;
/// let id: ZoneMappingId = "prod".parse()?;
/// let request = ZoneMappingRequest::new("aws".parse()?, Some("production account".into()), output);
/// let outcome = client.put_zone_mapping(&id, &request).await?;
/// let verb = if outcome.created { "created" } else { "replaced" };
/// println!("{verb} {}: {} regions", id, outcome.answer.data.regions.len());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PutOutcome {
    /// The answer's body: the mapping as stored ([`ZoneMappingAnswer::data`]), the request id
    /// and the server's message.
    pub answer: ZoneMappingAnswer,
    /// Whether the answer was `201 Created` (there was no mapping with this id); `false` for
    /// `200 OK`, which replaced one.
    ///
    /// This is what the last attempt was answered. When the call was retried
    /// ([`attempts`](PutOutcome::attempts) > 1) after a 502 or 504, an earlier attempt may
    /// have created the mapping, and the last one then answers 200: the mapping stored is the
    /// same either way.
    pub created: bool,
    /// The `X-Request-Id` of the answer, or the one the client sent when the answer had none.
    pub request_id: String,
    /// How many attempts the call made in total (more than 1 when it was retried).
    pub attempts: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(output: serde_json::Value) -> ZoneMappingRequest {
        ZoneMappingRequest::new(
            "aws".parse().unwrap_or_else(|e| panic!("{e}")),
            Some("production account".into()),
            output,
        )
    }

    #[test]
    fn the_body_is_the_requests_compact_json() {
        let output = serde_json::json!({"AvailabilityZones": [
            {"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": "use1-az2"}
        ]});
        let body = request_body(&request(output.clone())).unwrap_or_else(|e| panic!("{e}"));
        let sent: serde_json::Value =
            serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            sent,
            serde_json::json!({"provider": "aws", "label": "production account", "output": output})
        );
        assert!(!body.contains(&b'\n'));
    }

    #[test]
    fn a_body_over_one_mebibyte_is_refused_with_the_servers_413_code() {
        // Just under the limit once wrapped, then just over it.
        let wrapper = serde_json::to_vec(&request(serde_json::json!("")))
            .unwrap_or_else(|e| panic!("{e}"))
            .len();
        let fits = "x".repeat(MAX_ZONE_MAPPING_BYTES - wrapper);
        let body =
            request_body(&request(serde_json::json!(fits))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(body.len(), MAX_ZONE_MAPPING_BYTES);

        let over = "x".repeat(MAX_ZONE_MAPPING_BYTES - wrapper + 1);
        let error = request_body(&request(serde_json::json!(over))).err();
        let Some(error) = error else {
            panic!("a body of 1 MiB + 1 byte was accepted");
        };
        assert!(
            matches!(
                error,
                Error::InvalidArgument {
                    argument: "zone mapping",
                    ..
                }
            ),
            "{error:?}"
        );
        assert_eq!(error.error_code(), Some(&ErrorCode::PayloadTooLarge));
        assert_eq!(error.status().map(|s| s.as_u16()), Some(413));
        assert_eq!(error.request_id(), None);
        assert!(!error.is_retryable());
        assert!(error.to_string().contains("at most 1048576"), "{error}");
    }
}
