//! The proptest strategy of hostile requests: a valid request, then one mutation.

use super::{Hostile, KeyChoice, Mutation, HOSTILE_PROFILES};
use proptest::prelude::*;
use proptest::sample::select;

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9-]{1,8}",
        "[A-Za-z0-9._~-]{1,8}",
        "%[0-9A-Fa-f]{2}",
        "%[0-9A-Za-z]?",
        select(vec![
            "%2F",
            "%2f",
            "%2E",
            "%2E%2E",
            "%00",
            "%FF",
            "%C3",
            "%C3%A9",
            "%E2%82%AC",
            "%F0%9F%98%80",
            "%ED%A0%80",
            "%C0%AF",
            "%25",
            "%20",
            "+",
            ":",
            "@",
            "!",
            "$",
            "&",
            "'",
            "(",
            ")",
            "*",
            ",",
            ";",
            "=",
            "..",
            ".",
            "~",
        ])
        .prop_map(String::from),
    ]
}

/// One path segment: well-formed ids, known names, percent-encoding soup, long runs.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(piece(), 0..6).prop_map(|v| v.concat()),
        2 => select(vec![
            "aws", "gcp", "azure", "us-east-1", "europe-west1", "acme-cloud", "empty-1",
            "{profile}", "{other_profile}", "prof_missing", "..", ".", "",
        ])
        .prop_map(String::from),
        1 => "[a-z][a-z0-9-]{55,70}",
        1 => "[A-Za-z0-9][A-Za-z0-9._-]{120,300}",
    ]
}

fn path() -> impl Strategy<Value = String> {
    let real_zones = (
        select(vec![
            ("aws", "us-east-1"),
            ("gcp", "europe-west1"),
            ("azure", "westeurope"),
            ("acme-cloud", "empty-1"),
            ("aws", "us-east-9"),
        ]),
        select(vec!["", "%2D", "%61", "-"]),
        any::<bool>(),
    )
        .prop_map(|((p, r), twist, upper)| {
            let p = if upper {
                p.to_uppercase()
            } else {
                p.to_owned()
            };
            let r = r.replacen('-', twist, usize::from(!twist.is_empty()));
            format!("/api/v1/providers/{p}/regions/{r}/zones")
        });
    let shaped = prop_oneof![
        3 => real_zones,
        2 => (any::<bool>(), 0..HOSTILE_PROFILES)
            .prop_map(|(ours, i)| format!(
                "/api/v1/applications/profiles/prof_{}_{i:05}",
                if ours { "h" } else { "g" }
            )),
        3 => (segment(), segment(), select(vec!["", "/", "/extra", "//"]))
            .prop_map(|(p, r, tail)| format!("/api/v1/providers/{p}/regions/{r}/zones{tail}")),
        3 => (segment(), select(vec!["", "/", "/x"]))
            .prop_map(|(id, tail)| format!("/api/v1/applications/profiles/{id}{tail}")),
        // The discovery listings: real and hostile providers, with and without tails.
        2 => (
            prop_oneof![
                select(vec!["aws", "gcp", "azure", "acme-cloud", "awz", "AWS", "%61ws"])
                    .prop_map(String::from),
                segment(),
            ],
            select(vec!["", "/", "/extra", "//"]),
        )
            .prop_map(|(p, tail)| format!("/api/v1/providers/{p}/regions{tail}")),
        1 => select(vec!["", "/", "//", "/x"])
            .prop_map(|tail| format!("/api/v1/providers{tail}")),
        2 => (
            select(vec![
                "", "/api", "/api/v1", "/api/v2", "/healthz", "/readyz", "/metrics",
                "/openapi.json", "/docs", "/providers", "/applications/profiles",
                "/api/v1/providers", "/api/v1/applications", "/API/V1",
            ]),
            prop::collection::vec(segment(), 0..4),
        )
            .prop_map(|(prefix, segments)| {
                let rest: String = segments.iter().map(|s| format!("/{s}")).collect();
                let path = format!("{prefix}{rest}");
                if path.is_empty() { "/".to_owned() } else { path }
            }),
        1 => "/[!-~]{0,60}",
    ];
    let query = prop::option::of("[a-zA-Z0-9=&%_.-]{0,24}");
    (shaped, query).prop_map(|(path, query)| match query {
        Some(q) => format!("{path}?{q}"),
        None => path,
    })
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("GET".to_owned()),
        3 => Just("DELETE".to_owned()),
        3 => select(vec!["HEAD", "POST", "PUT", "PATCH", "OPTIONS", "TRACE", "CONNECT"])
            .prop_map(String::from),
        1 => "[A-Z]{1,12}",
        1 => "[a-z]{1,6}",
        1 => "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,16}",
    ]
}

fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "[A-Za-z0-9._:-]{1,140}".prop_map(String::into_bytes),
        "[ -~]{0,200}".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..200),
    ]
}

fn key() -> impl Strategy<Value = KeyChoice> {
    let mutation = select(vec![
        Mutation::Bearer,
        Mutation::PaddedWithSpaces,
        Mutation::Truncated,
        Mutation::Appended,
        Mutation::Flipped,
        Mutation::Lowercased,
        Mutation::SameKeyIdRandomSecret,
        Mutation::SharedSecretPrefix,
    ]);
    prop_oneof![
        1 => Just(KeyChoice::Absent),
        4 => Just(KeyChoice::Admin),
        3 => Just(KeyChoice::Member),
        1 => Just(KeyChoice::Revoked),
        1 => Just(KeyChoice::OtherAdmin),
        1 => Just(KeyChoice::Twice),
        3 => (mutation, 0..64usize).prop_map(|(m, at)| KeyChoice::Mutated(m, at)),
        2 => header_bytes().prop_map(KeyChoice::Raw),
    ]
}

pub fn hostile() -> impl Strategy<Value = Hostile> {
    (
        method(),
        path(),
        key(),
        prop::option::of(header_bytes()),
        prop::option::of(prop_oneof![
            header_bytes(),
            Just(b"{etag}".to_vec()),
            Just(b"*".to_vec()),
            Just(b"W/\"x\", *".to_vec()),
        ]),
        prop_oneof![
            4 => Just(Vec::new()),
            1 => prop::collection::vec(any::<u8>(), 1..256),
        ],
    )
        .prop_map(
            |(method, path, key, request_id, if_none_match, body)| Hostile {
                method,
                path,
                key,
                request_id,
                if_none_match,
                body,
            },
        )
}
