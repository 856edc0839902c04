//! Zone mappings: the `PUT` body, checked before sending and compressed when large, and what a
//! `PUT` answered.

use std::io::{self, Write};

use appzone_contract::{
    ErrorCode, ZoneMappingAnswer, ZoneMappingRequest, MAX_ZONE_MAPPING_BYTES,
    MAX_ZONE_MAPPING_OUTPUT_BYTES,
};
use flate2::write::GzEncoder;
use flate2::Compression;

use crate::Error;

/// A JSON body longer than this (1 MiB) is sent gzip-compressed (`Content-Encoding: gzip`).
/// Zones alone stay well under it and go as plain JSON; a region's offerings (an Azure
/// `list-skus` output is 2 to 4 MB) go compressed, typically to a tenth of their size.
pub(crate) const GZIP_ABOVE_BYTES: usize = 1024 * 1024;

/// A zone mapping's `PUT` body as it is sent: its bytes, and whether they are the JSON
/// gzip-compressed (then sent with `Content-Encoding: gzip`).
#[derive(Debug)]
pub(crate) struct RequestBody {
    pub(crate) bytes: Vec<u8>,
    pub(crate) gzip: bool,
}

/// The `PUT` body of `request`: its JSON, compact, gzip-compressed when longer than
/// [`GZIP_ABOVE_BYTES`]. What the server would answer with 413 `payload_too_large` is an
/// [`Error::InvalidArgument`] naming `zone mapping`, with that code and status, before anything
/// is sent: a JSON body over [`MAX_ZONE_MAPPING_BYTES`] (the server's limit counts the decoded
/// bytes, so compressing does not raise it), or an `output` over
/// [`MAX_ZONE_MAPPING_OUTPUT_BYTES`].
pub(crate) fn request_body(request: &ZoneMappingRequest) -> Result<RequestBody, Error> {
    let output = json_len(&request.output)?;
    if output > MAX_ZONE_MAPPING_OUTPUT_BYTES {
        return Err(too_large(format!(
            "its output (the zones) is {output} bytes of JSON; the API accepts at most \
             {MAX_ZONE_MAPPING_OUTPUT_BYTES} (1 MiB) for the zones: store the output of fewer \
             regions per mapping"
        )));
    }
    let json = serde_json::to_vec(request).map_err(|e| Error::invalid("zone mapping", e))?;
    if json.len() > MAX_ZONE_MAPPING_BYTES {
        return Err(too_large(format!(
            "its JSON body is {} bytes; the API accepts at most {MAX_ZONE_MAPPING_BYTES} \
             (32 MiB), compressed or not: store the offerings of fewer regions per mapping",
            json.len()
        )));
    }
    if json.len() <= GZIP_ABOVE_BYTES {
        return Ok(RequestBody {
            bytes: json,
            gzip: false,
        });
    }
    Ok(RequestBody {
        bytes: gzip(&json).map_err(|e| Error::invalid("zone mapping", e))?,
        gzip: true,
    })
}

/// The local 413 of a zone mapping, with `reason`.
fn too_large(reason: String) -> Error {
    Error::InvalidArgument {
        argument: "zone mapping",
        reason,
        code: Some(ErrorCode::PayloadTooLarge),
    }
}

/// How many bytes `value`'s compact JSON takes, without holding it.
fn json_len(value: &serde_json::Value) -> Result<usize, Error> {
    struct Count(usize);
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_err(|e| Error::invalid("zone mapping", e))?;
    Ok(count.0)
}

/// `json` gzip-compressed (the default level: JSON this repetitive shrinks about tenfold).
fn gzip(json: &[u8]) -> io::Result<Vec<u8>> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(json.len() / 8), Compression::default());
    encoder.write_all(json)?;
    encoder.finish()
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
    use std::io::Read;

    use super::*;

    fn request(output: serde_json::Value) -> ZoneMappingRequest {
        ZoneMappingRequest::new(
            "aws".parse().unwrap_or_else(|e| panic!("{e}")),
            Some("production account".into()),
            output,
        )
    }

    fn body(request: &ZoneMappingRequest) -> RequestBody {
        request_body(request).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The JSON a body carries, inflated when it is compressed.
    fn json_of(body: &RequestBody) -> Vec<u8> {
        if !body.gzip {
            return body.bytes.clone();
        }
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(&body.bytes[..])
            .read_to_end(&mut json)
            .unwrap_or_else(|e| panic!("{e}"));
        json
    }

    /// Asserts `result` is the local 413 of a zone mapping, saying `says`.
    #[track_caller]
    fn assert_too_large(result: Result<RequestBody, Error>, says: &str) {
        let Err(error) = result else {
            panic!("a body over the limit was accepted");
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
        assert!(error.to_string().contains(says), "{error}");
    }

    #[test]
    fn the_body_is_the_requests_compact_json() {
        let output = serde_json::json!({"AvailabilityZones": [
            {"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": "use1-az2"}
        ]});
        let body = body(&request(output.clone()));
        assert!(!body.gzip, "a small body goes as plain JSON");
        let sent: serde_json::Value =
            serde_json::from_slice(&body.bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            sent,
            serde_json::json!({"provider": "aws", "label": "production account", "output": output})
        );
        assert!(!body.bytes.contains(&b'\n'));
    }

    #[test]
    fn a_body_over_one_mebibyte_is_sent_gzip_compressed_and_inflates_to_its_json() {
        let offerings: Vec<serde_json::Value> = (0..20_000)
            .map(|i| {
                serde_json::json!({"InstanceType": format!("x{i}.large"),
                    "LocationType": "availability-zone-id", "Location": "use1-az1"})
            })
            .collect();
        let request = request(serde_json::json!({"AvailabilityZones": []}))
            .with_offerings(serde_json::json!({ "InstanceTypeOfferings": offerings }));
        let json = serde_json::to_vec(&request).unwrap_or_else(|e| panic!("{e}"));
        assert!(json.len() > GZIP_ABOVE_BYTES, "{}", json.len());
        let body = body(&request);
        assert!(body.gzip);
        assert!(body.bytes.len() < json.len() / 5, "{}", body.bytes.len());
        assert_eq!(json_of(&body), json);

        // At the threshold exactly: plain.
        let wrapper = serde_json::to_vec(&self::request(serde_json::json!("")))
            .unwrap_or_else(|e| panic!("{e}"))
            .len();
        let at = self::request(serde_json::json!("")).with_offerings(serde_json::json!(
            "x".repeat(GZIP_ABOVE_BYTES - wrapper - r#","offerings":"""#.len())
        ));
        let body = self::body(&at);
        assert_eq!(body.bytes.len(), GZIP_ABOVE_BYTES);
        assert!(!body.gzip);
    }

    #[test]
    fn a_body_over_32_mebibytes_is_refused_with_the_servers_413_code() {
        // Just at the limit once wrapped, then just over it; the offerings carry the bulk.
        let wrapper = serde_json::to_vec(
            &request(serde_json::json!({})).with_offerings(serde_json::json!("")),
        )
        .unwrap_or_else(|e| panic!("{e}"))
        .len();
        let fits = request(serde_json::json!({})).with_offerings(serde_json::json!(
            "x".repeat(MAX_ZONE_MAPPING_BYTES - wrapper)
        ));
        let body = body(&fits);
        assert!(body.gzip);
        assert_eq!(json_of(&body).len(), MAX_ZONE_MAPPING_BYTES);

        let over = request(serde_json::json!({})).with_offerings(serde_json::json!(
            "x".repeat(MAX_ZONE_MAPPING_BYTES - wrapper + 1)
        ));
        assert_too_large(request_body(&over), "at most 33554432 (32 MiB)");
        let Err(error) = request_body(&over) else {
            panic!("accepted")
        };
        assert!(!error.to_string().contains("1 MiB"), "{error}");
    }

    #[test]
    fn an_output_over_one_mebibyte_is_refused_as_the_server_refuses_it() {
        let wrapper = serde_json::to_vec(&serde_json::json!("")).map_or(0, |j| j.len());
        let fits = "x".repeat(MAX_ZONE_MAPPING_OUTPUT_BYTES - wrapper);
        assert!(request_body(&request(serde_json::json!(fits))).is_ok());
        let over = "x".repeat(MAX_ZONE_MAPPING_OUTPUT_BYTES - wrapper + 1);
        assert_too_large(
            request_body(&request(serde_json::json!(over))),
            "at most 1048576 (1 MiB) for the zones",
        );
    }
}
