//! The API-key format: `apz_<key_id>_<secret>`.
//!
//! `key_id` is 12 base62 characters and is public: it appears in logs, audit records and
//! revocation commands. `secret` is 32 base62 characters (about 190 bits) drawn from the operating
//! system's CSPRNG. The whole key is a secret: its `Debug` and `Display` show only the key id.

use std::fmt;
use std::str::FromStr;

use rand::distr::{Alphanumeric, SampleString};
use rand::rand_core::UnwrapErr;
use rand::rngs::SysRng;

const PREFIX: &str = "apz_";
/// Length of the public key id, in base62 characters.
pub const KEY_ID_LEN: usize = 12;
/// Length of the secret part, in base62 characters.
pub const SECRET_LEN: usize = 32;

fn is_base62(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The public part of an API key: 12 base62 characters.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(String);

impl KeyId {
    /// The key id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for KeyId {
    type Err = ApiKeyError;
    fn from_str(s: &str) -> Result<Self, ApiKeyError> {
        if s.len() == KEY_ID_LEN && is_base62(s) {
            Ok(Self(s.to_owned()))
        } else {
            Err(ApiKeyError::Malformed)
        }
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyId({:?})", self.0)
    }
}

/// Why a string is not an API key. Deliberately says nothing about which part was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiKeyError {
    /// The value does not have the shape `apz_<12 base62>_<32 base62>`.
    #[error("API key is malformed: expected apz_<key id>_<secret>")]
    Malformed,
}

/// A complete API key. Never printed: `Debug` and `Display` redact the secret.
///
/// ```
/// use appzone_contract::ApiKey;
///
/// let key = ApiKey::generate();
/// let text = key.expose_secret().to_owned();
/// let parsed: ApiKey = text.parse()?;
/// assert_eq!(parsed.key_id(), key.key_id());
/// assert!(!format!("{key:?}").contains(&text[17..]));
/// # Ok::<(), appzone_contract::ApiKeyError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    full: String,
    key_id: KeyId,
}

impl ApiKey {
    /// Generates a new key from the operating system's CSPRNG.
    ///
    /// Panics if the operating system cannot provide random bytes: a key must never come from
    /// anything weaker, and there is nothing better to do without them.
    pub fn generate() -> Self {
        let mut rng = UnwrapErr(SysRng);
        let key_id = Alphanumeric.sample_string(&mut rng, KEY_ID_LEN);
        let secret = Alphanumeric.sample_string(&mut rng, SECRET_LEN);
        Self {
            full: format!("{PREFIX}{key_id}_{secret}"),
            key_id: KeyId(key_id),
        }
    }

    /// The public key id.
    pub fn key_id(&self) -> &KeyId {
        &self.key_id
    }

    /// The whole key, to be sent in the `X-API-KEY` header or shown once to an operator.
    pub fn expose_secret(&self) -> &str {
        &self.full
    }
}

impl ApiKey {
    /// Checks that `s` has the key format and returns its key id, without copying anything
    /// (a server checks a presented key this way on every request).
    ///
    /// ```
    /// use appzone_contract::ApiKey;
    /// let key = "apz_AbCdEfGhIjKl_0123456789abcdefghijABCDEFGHIJKL";
    /// assert_eq!(ApiKey::key_id_in(key), Ok("AbCdEfGhIjKl"));
    /// assert!(ApiKey::key_id_in("apz_short_secret").is_err());
    /// ```
    pub fn key_id_in(s: &str) -> Result<&str, ApiKeyError> {
        let rest = s.strip_prefix(PREFIX).ok_or(ApiKeyError::Malformed)?;
        if rest.len() != KEY_ID_LEN + 1 + SECRET_LEN || !rest.is_ascii() {
            return Err(ApiKeyError::Malformed);
        }
        let (key_id, secret) = rest.split_at(KEY_ID_LEN);
        let secret = secret.strip_prefix('_').ok_or(ApiKeyError::Malformed)?;
        if !is_base62(key_id) || !is_base62(secret) {
            return Err(ApiKeyError::Malformed);
        }
        Ok(key_id)
    }
}

impl FromStr for ApiKey {
    type Err = ApiKeyError;
    fn from_str(s: &str) -> Result<Self, ApiKeyError> {
        let key_id = KeyId(Self::key_id_in(s)?.to_owned());
        Ok(Self {
            full: s.to_owned(),
            key_id,
        })
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({PREFIX}{}_<redacted>)", self.key_id)
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}_<redacted>", self.key_id)
    }
}
