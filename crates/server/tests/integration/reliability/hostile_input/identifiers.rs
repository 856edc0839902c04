//! Generated identifiers: the parsers accept exactly what the contract's grammar says.

use super::*;

// The grammar of docs/API.md, written independently of the contract crate, as the oracle.
fn contract_id_ok(s: &str, first: fn(u8) -> bool, rest: fn(u8) -> bool, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= max && first(b[0]) && b[1..].iter().all(|c| rest(*c))
}

fn lower_digit(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn lower_digit_dash(c: u8) -> bool {
    lower_digit(c) || c == b'-'
}

fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

fn profile_rest(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-')
}

fn contract_key_ok(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 4 + 12 + 1 + 32
        && s.starts_with("apz_")
        && b[16] == b'_'
        && b[4..16].iter().all(u8::is_ascii_alphanumeric)
        && b[17..].iter().all(u8::is_ascii_alphanumeric)
}

mod parser_gen {
    use proptest::prelude::*;

    /// Strings near the grammar: its alphabet plus troublemakers, around its length limits.
    pub fn near_id() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9-]{0,70}",
            "[A-Za-z0-9._-]{0,135}",
            "[a-z0-9][a-z0-9-]{60,64}",
            "[A-Za-z0-9][A-Za-z0-9._-]{125,130}",
            "[a-zA-Z0-9._/%é\u{0}\u{202e} -]{0,20}",
            any::<String>(),
        ]
    }

    pub fn near_key() -> impl Strategy<Value = String> {
        prop_oneof![
            "apz_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}",
            "apz_[A-Za-z0-9_]{11,13}_[A-Za-z0-9]{31,33}",
            "(apz|APZ|ap)_[A-Za-z0-9é_-]{40,50}",
            any::<String>(),
        ]
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 4000,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]

    /// The cargo-fuzz equivalent that runs in CI: identifier and key parsers accept exactly
    /// the contract's grammar, never panic, and a parsed key never shows its secret.
    #[test]
    fn identifier_and_key_parsers_accept_exactly_the_contract_grammar(
        id in parser_gen::near_id(),
        key in parser_gen::near_key(),
    ) {
        use appzone_contract::{ApiKey, ProviderId, RegionId};
        proptest::prop_assert_eq!(
            id.parse::<ProviderId>().is_ok(),
            contract_id_ok(&id, lower_digit, lower_digit_dash, 63),
            "providerId {:?}", id
        );
        proptest::prop_assert_eq!(
            id.parse::<RegionId>().is_ok(),
            contract_id_ok(&id, lower_digit, lower_digit_dash, 63),
            "regionId {:?}", id
        );
        proptest::prop_assert_eq!(
            id.parse::<ProfileId>().is_ok(),
            contract_id_ok(&id, alnum, profile_rest, 128),
            "profileId {:?}", id
        );
        // Percent-decoding arbitrary input never panics; what decodes is judged like the rest.
        if let Some(decoded) = appzone_contract::paths::decode_segment(&id) {
            proptest::prop_assert_eq!(
                decoded.parse::<ProfileId>().is_ok(),
                contract_id_ok(&decoded, alnum, profile_rest, 128)
            );
        }
        let parsed = key.parse::<ApiKey>();
        proptest::prop_assert_eq!(parsed.is_ok(), contract_key_ok(&key), "key {:?}", key);
        if let Ok(parsed) = parsed {
            let secret = &key[17..];
            let shown = format!("{parsed:?} {parsed}");
            proptest::prop_assert!(!shown.contains(secret), "{}", shown);
            proptest::prop_assert_eq!(parsed.key_id().as_str(), &key[4..16]);
        }
    }
}
