//! Behaviour of the contract crate: identifier rules, error codes, key format, paths and the
//! checked-in OpenAPI document.

use appzone_contract::{
    paths, ApiKey, ErrorBody, ErrorCode, IdError, ProfileId, ProviderId, RegionId, ZoneList,
};
use proptest::prelude::*;

// A test target's root looks for modules beside it; this one's live in `contract/`.
#[path = "contract/document.rs"]
mod document;

fn provider(s: &str) -> Result<ProviderId, IdError> {
    s.parse()
}

fn region(s: &str) -> Result<RegionId, IdError> {
    s.parse()
}

fn profile(s: &str) -> Result<ProfileId, IdError> {
    s.parse()
}

#[test]
fn provider_and_region_ids_follow_the_contract_pattern() {
    let cases: &[(&str, bool)] = &[
        ("a", true),
        ("0", true),
        ("aws", true),
        ("us-east-1", true),
        ("a-", true),
        (&"a".repeat(63), true),
        (&"a".repeat(64), false),
        ("", false),
        ("-aws", false),
        ("AWS", false),
        ("Aws", false),
        ("us_east_1", false),
        ("us.east", false),
        ("us east", false),
        ("us/east", false),
        ("us%2Feast", false),
        (".", false),
        ("..", false),
        ("é", false),
        ("aé", false),
        ("a\u{0}", false),
    ];
    for (input, ok) in cases {
        assert_eq!(provider(input).is_ok(), *ok, "provider {input:?}");
        assert_eq!(region(input).is_ok(), *ok, "region {input:?}");
    }
}

#[test]
fn profile_ids_follow_the_contract_pattern() {
    let cases: &[(&str, bool)] = &[
        ("a", true),
        ("Z", true),
        ("prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2", true),
        ("a.b_c-D", true),
        (&"a".repeat(128), true),
        (&"a".repeat(129), false),
        ("", false),
        (".", false),
        ("..", false),
        ("_a", false),
        ("-a", false),
        ("a/b", false),
        ("a%2Fb", false),
        ("a b", false),
        ("ünï", false),
        ("a:b", false),
    ];
    for (input, ok) in cases {
        assert_eq!(profile(input).is_ok(), *ok, "profile {input:?}");
    }
}

#[test]
fn id_errors_say_what_is_wrong() {
    let messages = [
        provider("").unwrap_err().to_string(),
        provider(&"a".repeat(64)).unwrap_err().to_string(),
        provider("-a").unwrap_err().to_string(),
        region("us_east").unwrap_err().to_string(),
        profile(&"a".repeat(129)).unwrap_err().to_string(),
        profile("a/b").unwrap_err().to_string(),
    ];
    insta::assert_debug_snapshot!(messages);
}

#[test]
fn ids_deserialize_only_when_valid() {
    assert!(serde_json::from_str::<ProviderId>("\"aws\"").is_ok());
    assert!(serde_json::from_str::<ProviderId>("\"AWS\"").is_err());
    assert_eq!(
        serde_json::to_string(&profile("p1").unwrap()).unwrap(),
        "\"p1\""
    );
}

#[test]
fn error_codes_round_trip_and_map_to_the_contract_statuses() {
    let table: Vec<(String, u16)> = ErrorCode::KNOWN
        .iter()
        .map(|code| {
            let wire = serde_json::to_string(code).unwrap();
            let back: ErrorCode = serde_json::from_str(&wire).unwrap();
            assert_eq!(&back, code);
            (wire, code.status().as_u16())
        })
        .collect();
    insta::assert_debug_snapshot!(table);
}

/// The rows of docs/API.md's error table, `(code, status)`, in the page's order.
fn documented_error_codes() -> Vec<(String, u16)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/API.md");
    let page =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let section = page
        .split("\n## Errors\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/API.md has an \"## Errors\" section");
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let code = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let status = cells.get(2)?.parse().unwrap_or_else(|_| {
                panic!("docs/API.md: the status of `{code}` is not a number: {line}")
            });
            Some((code.to_owned(), status))
        })
        .collect()
}

#[test]
fn the_api_pages_error_table_lists_every_code_with_its_status_and_nothing_else() {
    let codes: Vec<(String, u16)> = ErrorCode::KNOWN
        .iter()
        .map(|code| code.as_str().to_owned())
        .chain(ErrorCode::ADDED.iter().map(|added| added.code.to_owned()))
        .map(|code| {
            let status = ErrorCode::from(code.as_str()).status().as_u16();
            (code, status)
        })
        .collect();
    assert_eq!(documented_error_codes(), codes);
}

#[test]
fn unknown_error_codes_deserialize_to_other_and_serialize_back_unchanged() {
    let body: ErrorBody =
        serde_json::from_str(r#"{"error":"slow down","error_code":"quota_exceeded"}"#).unwrap();
    assert_eq!(
        body.error_code,
        ErrorCode::Other("quota_exceeded".to_owned())
    );
    assert_eq!(
        serde_json::to_string(&body).unwrap(),
        r#"{"error":"slow down","error_code":"quota_exceeded"}"#
    );
}

#[test]
fn bodies_serialize_as_the_contract_shows() {
    let list = ZoneList {
        data: vec!["us-east-1a".into(), "us-east-1b".into()],
        id: "req-1".into(),
        message: "2 zones in aws/us-east-1".into(),
        status: appzone_contract::STATUS_SUCCESS.into(),
    };
    insta::assert_snapshot!(serde_json::to_string(&list).unwrap(), @r#"{"data":["us-east-1a","us-east-1b"],"id":"req-1","message":"2 zones in aws/us-east-1","status":"success"}"#);
    let err = ErrorBody::new(ErrorCode::ProfileNotFound, "application profile not found");
    insta::assert_snapshot!(serde_json::to_string(&err).unwrap(), @r#"{"error":"application profile not found","error_code":"profile_not_found"}"#);
}

#[test]
fn zone_list_decodes_tolerantly() {
    let list: ZoneList = serde_json::from_str(r#"{"data":[]}"#).unwrap();
    assert!(list.data.is_empty() && list.id.is_empty() && list.status.is_empty());
    assert!(
        serde_json::from_str::<ZoneList>(r#"{"id":"x"}"#).is_err(),
        "data is required"
    );
}

#[test]
fn api_keys_parse_only_in_the_contract_format() {
    let good = format!("apz_{}_{}", "A".repeat(12), "b".repeat(32));
    assert!(good.parse::<ApiKey>().is_ok());
    let bad = [
        String::new(),
        "apz_".to_owned(),
        format!("Bearer {good}"),
        format!("{good} "),
        format!("APZ_{}_{}", "A".repeat(12), "b".repeat(32)),
        format!("apz_{}_{}", "A".repeat(11), "b".repeat(33)),
        format!("apz_{}_{}", "A".repeat(12), "b".repeat(31)),
        format!("apz_{}-{}", "A".repeat(12), "b".repeat(32)),
        format!("apz_{}_{}é", "A".repeat(12), "b".repeat(31)),
        format!("apz_{}_{}", "A".repeat(12), "_".repeat(32)),
    ];
    for key in bad {
        assert!(key.parse::<ApiKey>().is_err(), "{key:?} must not parse");
    }
}

#[test]
fn generated_keys_are_unique_and_never_printed() {
    let a = ApiKey::generate();
    let b = ApiKey::generate();
    assert_ne!(a.expose_secret(), b.expose_secret());
    assert_ne!(a.key_id(), b.key_id());
    let secret = &a.expose_secret()[17..];
    assert_eq!(secret.len(), 32);
    for shown in [format!("{a:?}"), format!("{a}")] {
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains(a.key_id().as_str()));
    }
    assert_eq!(a.expose_secret().parse::<ApiKey>().unwrap(), a);
}

#[test]
fn path_templates_match_the_document() {
    let doc = appzone_contract::openapi::document();
    let documented: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    assert_eq!(
        documented,
        [
            paths::LIST_PROVIDERS,
            paths::LIST_REGIONS,
            paths::LIST_ZONES,
            paths::LIST_ZONE_IDENTITIES,
            paths::LIST_INSTANCE_TYPES,
            paths::DELETE_PROFILE,
            paths::ZONE_MAPPINGS,
            paths::ZONE_MAPPING
        ]
    );
}

#[test]
fn paths_escape_and_decode_segments() {
    assert_eq!(paths::decode_segment("us%2Deast"), Some("us-east".into()));
    assert_eq!(paths::decode_segment("%ff"), None);
}

proptest! {
    #[test]
    fn id_and_key_parsers_never_panic_and_accept_only_ascii(s in "\\PC{0,200}") {
        for ok in [s.parse::<ProviderId>().is_ok(), s.parse::<RegionId>().is_ok(), s.parse::<ProfileId>().is_ok(), s.parse::<ApiKey>().is_ok()] {
            prop_assert!(!ok || s.is_ascii());
        }
    }

    #[test]
    fn decode_segment_inverts_percent_encoding(s in "\\PC{0,64}") {
        let encoded: String = s.bytes().map(|b| format!("%{b:02X}")).collect();
        prop_assert_eq!(paths::decode_segment(&encoded).unwrap(), s.as_str());
    }
}

/// The label's pattern as the document publishes it, for a regular expression engine (built
/// once: the proptest below asks for it in every case).
static LABEL_PATTERN: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(documented_label_pattern);

fn documented_label_pattern() -> regex::Regex {
    let doc = appzone_contract::openapi::document();
    let label = &doc["components"]["schemas"]["ZoneMappingRequest"]["properties"]["label"];
    assert_eq!(label["minLength"], 1);
    assert_eq!(
        label["maxLength"],
        appzone_contract::MAX_ZONE_MAPPING_LABEL_CHARS
    );
    let pattern = label["pattern"].as_str().expect("the label has a pattern");
    regex::Regex::new(pattern).expect("the label's pattern compiles")
}

/// A label the document allows is one the server takes, and the other way round: the
/// document's pattern and `is_valid_display_name` (the server's rule) agree, on the
/// edges and on strings mixing letters, white space and control characters.
#[test]
fn the_documented_label_pattern_is_the_servers_label_rule() {
    let pattern = &*LABEL_PATTERN;
    for (label, valid) in [
        ("production account", true),
        ("x", true),
        (" x ", true),
        ("\u{feff}", true), // a zero-width no-break space is not white space to Rust's `trim`
        ("😀", true),
        ("", false),
        (" ", false),
        ("\u{a0}\u{3000}\u{2028}", false),
        ("a\tb", false),
        ("a\u{85}b", false),
        ("a\u{7f}", false),
    ] {
        assert_eq!(pattern.is_match(label), valid, "pattern, {label:?}");
        assert_eq!(
            appzone_contract::is_valid_display_name(label),
            valid,
            "rule, {label:?}"
        );
    }
}

proptest! {
    #[test]
    fn the_label_pattern_and_rule_agree_on_any_short_label(
        label in "[ a\u{0}\t\u{1f}\u{7f}\u{85}\u{9f}\u{a0}\u{1680}\u{2000}\u{200b}\u{2028}\u{3000}\u{feff}é😀]{0,5}"
    ) {
        prop_assert_eq!(
            LABEL_PATTERN.is_match(&label),
            appzone_contract::is_valid_display_name(&label),
            "{:?}", label
        );
    }
}
