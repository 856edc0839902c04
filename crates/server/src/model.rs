//! Domain types shared by storage, the HTTP layer and the operator CLI. No HTTP, no SQL.
//!
//! With [`crate::storage`] this is the bottom layer: it imports nothing else of this crate.

pub mod catalog_file;
pub mod catalog_refresh;
pub mod cloud_output;
pub mod offerings;
pub mod offerings_output;

use std::fmt;
use std::str::FromStr;

/// Checks a display name (of an organization, profile, provider or region): 1 to 200
/// characters, not only white space, no control characters: the contract's
/// [`appzone_contract::is_valid_display_name`], which a zone mapping's label follows too.
pub fn check_display_name(name: &str) -> Result<(), String> {
    if appzone_contract::is_valid_display_name(name) {
        Ok(())
    } else {
        Err(format!(
            "name {name:?} must be 1 to 200 printable characters, not only spaces"
        ))
    }
}

/// What a key may do. Both roles may list zones; only `admin` may delete profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// May delete the organization's profiles.
    Admin,
    /// May read; deleting answers 403.
    Member,
}

impl Role {
    /// The stored and printed form.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "admin" => Ok(Role::Admin),
            "member" => Ok(Role::Member),
            other => Err(format!("unknown role {other:?}: expected admin or member")),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An organization (tenant) id: 1 to 64 characters of `[A-Za-z0-9._-]`, starting with a letter or
/// digit. Validated before it reaches storage.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OrgId(String);

impl OrgId {
    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for OrgId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut bytes = s.bytes();
        let first_ok = bytes.next().is_some_and(|b| b.is_ascii_alphanumeric());
        let rest_ok = bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if first_ok && rest_ok && s.len() <= 64 {
            Ok(Self(s.to_owned()))
        } else {
            Err(format!(
                "invalid organization id {s:?}: use 1 to 64 letters, digits, '.', '_' or '-', \
                 starting with a letter or digit"
            ))
        }
    }
}

impl fmt::Display for OrgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The stored facts about one API key, as needed to authenticate a request.
#[derive(Debug, Clone)]
pub struct KeyRecord {
    /// Public key id.
    pub key_id: String,
    /// Owning organization.
    pub org_id: String,
    /// The key's role.
    pub role: Role,
    /// SHA-256 of the whole key (stored as lowercase hex, kept decoded for the comparison).
    pub digest: [u8; 32],
}

/// One row of `key list`.
#[derive(Debug, Clone)]
pub struct KeyInfo {
    /// Public key id.
    pub key_id: String,
    /// The key's role.
    pub role: Role,
    /// Operator-given name.
    pub name: String,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Revocation time, Unix milliseconds.
    pub revoked_at: Option<i64>,
    /// When the key last authenticated a request, Unix milliseconds; approximate (written at
    /// most once a minute per key and server process).
    pub last_used_at: Option<i64>,
}

/// One row of `org list`.
#[derive(Debug, Clone)]
pub struct OrgInfo {
    /// Organization id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Keys not revoked.
    pub active_keys: i64,
    /// Profiles not deleted.
    pub live_profiles: i64,
}

/// One row of `profile list`.
#[derive(Debug, Clone)]
pub struct ProfileInfo {
    /// Profile id.
    pub id: String,
    /// Profile name.
    pub name: String,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Deletion time (tombstone), Unix milliseconds.
    pub deleted_at: Option<i64>,
}

/// Current time in Unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Formats Unix milliseconds as an RFC 3339 UTC timestamp (second precision) for tables.
pub fn format_ms(ms: i64) -> String {
    let time =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_seconds(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_timestamps_in_utc() {
        assert_eq!(format_ms(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_ms(1_795_000_000_000), "2026-11-18T11:06:40Z");
    }
}
