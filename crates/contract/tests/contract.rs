//! Behaviour of the contract crate: identifier rules, error codes, key format, paths and the
//! checked-in OpenAPI document.

use appzone_contract::{
    paths, ApiKey, ErrorBody, ErrorCode, IdError, ProfileId, ProviderId, RegionId, ZoneList,
};
use proptest::prelude::*;

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
            paths::DELETE_PROFILE
        ]
    );
}

#[test]
fn paths_escape_and_decode_segments() {
    assert_eq!(paths::decode_segment("us%2Deast"), Some("us-east".into()));
    assert_eq!(paths::decode_segment("%ff"), None);
    assert_eq!(
        paths::match_template(paths::DELETE_PROFILE, "/api/v1/applications/profiles/"),
        Some(vec![""])
    );
    assert_eq!(
        paths::match_template(paths::DELETE_PROFILE, "/api/v1/applications/profiles/a/b"),
        None
    );
    assert_eq!(
        paths::match_template(paths::LIST_ZONES, "/api/v2/providers/a/regions/b/zones"),
        None
    );
}

fn provider_or_region_id() -> impl Strategy<Value = String> {
    "[a-z0-9][a-z0-9-]{0,62}"
}

proptest! {
    #[test]
    fn every_valid_id_survives_path_building_and_parsing(
        p in provider_or_region_id(),
        r in provider_or_region_id(),
        id in "[A-Za-z0-9][A-Za-z0-9._-]{0,127}",
    ) {
        let (p, r, id): (ProviderId, RegionId, ProfileId) =
            (p.parse().unwrap(), r.parse().unwrap(), id.parse().unwrap());

        let path = paths::list_zones(&p, &r);
        let raw = paths::match_template(paths::LIST_ZONES, &path).unwrap();
        let back: Vec<String> = raw.iter().map(|s| paths::decode_segment(s).unwrap().into_owned()).collect();
        prop_assert_eq!(back, vec![p.to_string(), r.to_string()]);

        let path = paths::delete_profile(&id);
        let raw = paths::match_template(paths::DELETE_PROFILE, &path).unwrap();
        prop_assert_eq!(paths::decode_segment(raw[0]).unwrap(), id.as_str());
    }

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

/// The checked-in `openapi.json` must equal the document generated from this crate.
#[test]
fn openapi_json_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../openapi.json");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let fresh = appzone_contract::openapi::document_json();
    if current != fresh {
        panic!(
            "openapi.json is stale: the contract crate changed.\n\
             Run `cargo xtask openapi` and commit openapi.json."
        );
    }
}

/// A snapshot of the document, so a review shows each change to the published contract.
#[test]
fn openapi_document_snapshot() {
    insta::assert_json_snapshot!(appzone_contract::openapi::document());
}

/// What the template matchers promise, written the obvious way: split both on `/`, a
/// `{placeholder}` segment takes any one segment, every other segment is equal.
fn reference_match<'p>(template: &str, path: &'p str) -> Option<Vec<&'p str>> {
    let (wanted, given): (Vec<&str>, Vec<&str>) =
        (template.split('/').collect(), path.split('/').collect());
    if wanted.len() != given.len() {
        return None;
    }
    let mut captures = Vec::new();
    for (w, g) in wanted.iter().zip(&given) {
        if w.starts_with('{') && w.ends_with('}') {
            captures.push(*g);
        } else if w != g {
            return None;
        }
    }
    Some(captures)
}

/// Templates the matchers are checked on: the contract's, a wildcard like axum's, and one
/// with a segment that only looks like a placeholder.
const TEMPLATES: [&str; 6] = [
    paths::LIST_ZONES,
    paths::DELETE_PROFILE,
    "/docs/{*rest}",
    "/a/{x}y/{z}",
    "/a/b{x}/{z}",
    "/",
];

/// A path of one of `TEMPLATES`, its placeholders filled, then perhaps one segment replaced,
/// removed or added.
fn near_miss_path() -> impl Strategy<Value = String> {
    let segment = prop::sample::select(vec![
        "",
        "a",
        "qy",
        "us-east-1",
        "%2F",
        "{x}",
        "{x}y",
        "x}",
        "{",
        "zones",
        "regions",
        "api",
    ]);
    (
        prop::sample::select(TEMPLATES.to_vec()),
        prop::collection::vec(segment.clone(), 2),
        0..4u8,
        any::<prop::sample::Index>(),
        segment,
    )
        .prop_map(|(template, fills, edit, at, extra)| {
            let mut fills = fills.into_iter();
            let mut segments: Vec<&str> = template
                .split('/')
                .map(|s| match s.starts_with('{') && s.ends_with('}') {
                    true => fills.next().unwrap_or("a"),
                    false => s,
                })
                .collect();
            let i = at.index(segments.len());
            match edit {
                0 => {}
                1 => segments[i] = extra,
                2 => drop(segments.remove(i)),
                _ => segments.insert(i, extra),
            }
            segments.join("/")
        })
}

proptest! {
    #[test]
    fn template_matchers_agree_with_a_plain_segment_split(
        path in prop_oneof![near_miss_path(), "[/a-z{}%]{0,24}"],
    ) {
        for template in TEMPLATES {
            let expected = reference_match(template, &path);
            prop_assert_eq!(paths::match_template(template, &path), expected.clone(), "{} {}", template, path);
            let non_empty = expected.as_ref().is_some_and(|c| c.iter().all(|s| !s.is_empty()));
            prop_assert_eq!(paths::matches_template(template, &path), non_empty, "{} {}", template, path);
        }
        let expected = reference_match(paths::LIST_ZONES, &path)
            .filter(|c| c.iter().all(|s| !s.is_empty()))
            .map(|c| [c[0], c[1]]);
        prop_assert_eq!(paths::Template::new(paths::LIST_ZONES).params::<2>(&path), expected);
    }
}
