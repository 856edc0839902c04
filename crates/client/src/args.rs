//! Conversions that let the client's methods take identifier types or plain strings.

use std::borrow::Cow;

use appzone_contract::{ApiKey, IdError, ProfileId, ProviderId, RegionId};

/// A value that can be turned into the identifier `T`: the identifier itself (owned or
/// borrowed), or a string that is validated against the API's identifier rule.
///
/// ```
/// use appzone_client::IntoId;
/// use appzone_client::ProviderId;
///
/// let parsed: ProviderId = "aws".into_id()?;
/// let same: ProviderId = (&parsed).into_id()?;
/// assert_eq!(parsed, same);
/// assert!(IntoId::<ProviderId>::into_id("AWS").is_err());
/// # Ok::<(), appzone_client::IdError>(())
/// ```
pub trait IntoId<T> {
    /// Converts, validating strings.
    fn into_id(self) -> Result<T, IdError>;
}

macro_rules! into_id {
    ($($id:ty),*) => {$(
        impl IntoId<$id> for $id {
            fn into_id(self) -> Result<$id, IdError> {
                Ok(self)
            }
        }

        impl IntoId<$id> for &$id {
            fn into_id(self) -> Result<$id, IdError> {
                Ok(self.clone())
            }
        }

        impl IntoId<$id> for &str {
            fn into_id(self) -> Result<$id, IdError> {
                self.parse()
            }
        }

        impl IntoId<$id> for String {
            fn into_id(self) -> Result<$id, IdError> {
                <$id>::new(self)
            }
        }

        impl IntoId<$id> for &String {
            fn into_id(self) -> Result<$id, IdError> {
                self.parse()
            }
        }

        impl IntoId<$id> for Cow<'_, str> {
            fn into_id(self) -> Result<$id, IdError> {
                <$id>::new(self.into_owned())
            }
        }
    )*};
}

into_id!(ProviderId, RegionId, ProfileId);

mod sealed {
    pub trait Sealed {}
}

/// A value usable as the API key: an [`ApiKey`] or a string.
///
/// Strings are not checked against the `apz_<key_id>_<secret>` format, so the client also works
/// with other implementations of the interface; they must only be non-blank and fit in an HTTP
/// header. The key is sent in `X-API-KEY`, marked sensitive, and never shown by the client.
pub trait IntoApiKey: sealed::Sealed {
    #[doc(hidden)]
    fn into_secret(self) -> String;
}

impl sealed::Sealed for ApiKey {}
impl IntoApiKey for ApiKey {
    fn into_secret(self) -> String {
        self.expose_secret().to_owned()
    }
}

impl sealed::Sealed for &ApiKey {}
impl IntoApiKey for &ApiKey {
    fn into_secret(self) -> String {
        self.expose_secret().to_owned()
    }
}

impl sealed::Sealed for String {}
impl IntoApiKey for String {
    fn into_secret(self) -> String {
        self
    }
}

impl sealed::Sealed for &String {}
impl IntoApiKey for &String {
    fn into_secret(self) -> String {
        self.clone()
    }
}

impl sealed::Sealed for &str {}
impl IntoApiKey for &str {
    fn into_secret(self) -> String {
        self.to_owned()
    }
}
