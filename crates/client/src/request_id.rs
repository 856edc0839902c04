//! Request ids the client sends in `X-Request-Id`.

use std::time::{SystemTime, UNIX_EPOCH};

use rand::RngExt;

/// Crockford's base32 alphabet, as used by ULIDs.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A new ULID-shaped id: 26 characters of Crockford base32, a 48-bit millisecond timestamp then
/// 80 random bits, so ids sort by time in logs. Always valid for
/// [`appzone_contract::headers::is_valid_request_id`], so the server keeps it.
pub(crate) fn generate() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let time = millis & ((1 << 48) - 1);
    let random: u128 = rand::rng().random::<u128>() & ((1 << 80) - 1);
    let mut value = (time << 80) | random;
    let mut out = [0u8; 26];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(value & 31) as usize];
        value >>= 5;
    }
    out.iter().map(|&b| char::from(b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use appzone_contract::headers::is_valid_request_id;

    #[test]
    fn ids_are_valid_unique_and_ulid_shaped() {
        let a = generate();
        let b = generate();
        assert_eq!(a.len(), 26);
        assert!(is_valid_request_id(&a), "{a}");
        assert_ne!(a, b);
        assert!(a.bytes().all(|c| ALPHABET.contains(&c)));
    }
}
