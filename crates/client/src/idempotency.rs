//! `Idempotency-Key` for `DELETE`: fresh keys, the caller's keys checked, and what a delete's
//! answer said about itself.

use appzone_contract::headers::{idempotency_key, IDEMPOTENCY_KEY_MAX_LEN};
use http::HeaderValue;
use rand::RngExt;

use crate::Error;

/// A fresh `Idempotency-Key`: a random UUID (version 4), such as
/// `8e03978e-40d5-43e8-bc93-6894a57f9324`.
///
/// [`Client::delete_profile`](crate::Client::delete_profile) makes one per call by itself. Make
/// your own with this function when the key must outlive the process: store it with the work to
/// do before the first attempt, and pass it to
/// [`Client::delete_profile_with_key`](crate::Client::delete_profile_with_key) on every try,
/// including after a restart.
///
/// The 122 random bits come from `rand`'s thread-local generator, a CSPRNG seeded by the
/// operating system, so a key cannot be guessed by another caller of the same organization
/// (who could otherwise get this deletion's outcome replayed, or make it fail with 422).
///
/// ```
/// let key = appzone_client::new_idempotency_key();
/// assert_eq!(key.len(), 36);
/// assert!(key.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'));
/// assert_ne!(key, appzone_client::new_idempotency_key());
/// ```
pub fn new_idempotency_key() -> String {
    let random: u128 = rand::rng().random();
    // RFC 9562: version 4 in the 4 bits of the 7th byte, variant 0b10 in the 2 top bits of the
    // 9th, so the key is an ordinary UUID to anyone who logs or stores it.
    let uuid = (random & !(0xF << 76) & !(0b11 << 62)) | (0x4 << 76) | (0b10 << 62);
    let hex = format!("{uuid:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The header value for `key`, checked with the contract's rule
/// ([`appzone_contract::headers::idempotency_key`]); the key it carries (without the optional
/// quotes) is what is sent. An [`Error::InvalidArgument`] naming `idempotency key` otherwise,
/// before anything is sent: the server would answer 400 `invalid_idempotency_key`.
pub(crate) fn header_value(key: &str) -> Result<(String, HeaderValue), Error> {
    let key = idempotency_key(key).ok_or_else(|| {
        Error::invalid(
            "idempotency key",
            format_args!(
                "it must be 1 to {IDEMPOTENCY_KEY_MAX_LEN} visible ASCII characters, without \
                 `\"` or `\\` (such as a UUID)"
            ),
        )
    })?;
    // Visible ASCII is always a valid header value; the error branch cannot be taken, but is
    // reported the same way rather than unwrapped.
    let value = HeaderValue::from_str(key).map_err(|e| Error::invalid("idempotency key", e))?;
    Ok((key.to_owned(), value))
}

/// What a successful delete answered, from
/// [`Client::delete_profile_with_key`](crate::Client::delete_profile_with_key).
///
/// ```no_run
/// # async fn run(client: appzone_client::Client) -> Result<(), appzone_client::Error> {
/// let key = appzone_client::new_idempotency_key();
/// let outcome = client.delete_profile_with_key("prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2", &key).await?;
/// if outcome.replayed {
///     println!("deleted earlier, by an attempt whose answer was lost or by an earlier run");
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteOutcome {
    /// The `Idempotency-Key` sent on every attempt (without the optional quotes).
    pub idempotency_key: String,
    /// Whether the answer was `Idempotent-Replayed: true`: the server did not delete now, it
    /// repeated the 204 of an earlier request with the same key (an attempt of this call whose
    /// answer was lost, or an earlier call with the caller's key). Either way the profile is
    /// deleted.
    pub replayed: bool,
    /// The `X-Request-Id` of the answer, or the one the client sent when the answer had none.
    pub request_id: String,
    /// How many attempts the call made in total (more than 1 when it was retried).
    pub attempts: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_keys_are_version_4_uuids_the_contract_accepts() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let key = new_idempotency_key();
            assert_eq!(key.len(), 36, "{key}");
            let parts: Vec<&str> = key.split('-').collect();
            assert_eq!(
                parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
                [8, 4, 4, 4, 12]
            );
            assert!(parts[2].starts_with('4'), "{key}");
            assert!(
                matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'),
                "{key}"
            );
            assert_eq!(idempotency_key(&key), Some(key.as_str()));
            assert!(seen.insert(key), "a repeated key");
        }
    }

    #[test]
    fn caller_keys_are_checked_and_unquoted() {
        assert_eq!(
            header_value("\"abc\"").map(|(key, _)| key).ok().as_deref(),
            Some("abc")
        );
        for bad in ["", "two words", "\"\"", "é", &"k".repeat(256)] {
            let error = header_value(bad).err();
            assert!(
                matches!(
                    error,
                    Some(Error::InvalidArgument {
                        argument: "idempotency key",
                        ..
                    })
                ),
                "{bad:?}: {error:?}"
            );
        }
        assert!(header_value(&"k".repeat(255)).is_ok());
    }
}
