//! The security rule of `cargo xtask api-compat`: every set of credentials a baseline accepted
//! must still be accepted.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{resolve, Comparer, Rule};

impl<'a> Comparer<'a> {
    /// Every set of credentials the baseline accepted must still be accepted: some current
    /// alternative must ask for no scheme (or scope) beyond it.
    pub(super) fn security(&mut self, location: &str, base_op: &'a Value, cur_op: &'a Value) {
        let base = requirements(self.base, base_op);
        let cur = requirements(self.cur, cur_op);
        for alternative in &base {
            let accepted = cur.iter().any(|wanted| {
                wanted.iter().all(|(scheme, scopes)| {
                    alternative
                        .get(scheme)
                        .is_some_and(|given| scopes.is_subset(given))
                })
            });
            if !accepted {
                let now: Vec<String> = cur.iter().map(show_requirement).collect();
                self.report(
                    Rule::SecurityChanged,
                    location,
                    format!(
                        "{} is no longer accepted; the operation now wants {}",
                        show_requirement(alternative),
                        now.join(" or ")
                    ),
                );
            }
        }
    }
}

/// One security alternative: each scheme (by what it is) with its scopes.
type Requirement = BTreeMap<String, BTreeSet<String>>;

/// An operation's security alternatives: its own `security`, else the document's. No
/// requirement at all is one alternative asking for nothing. Each scheme is named by its
/// definition (`apiKey in header x-api-key`), so renaming a scheme is no change while
/// redefining one is.
fn requirements(doc: &Value, op: &Value) -> Vec<Requirement> {
    let list = op
        .get("security")
        .or_else(|| doc.get("security"))
        .and_then(Value::as_array);
    let alternatives: Vec<Requirement> = list
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|alternative| {
            alternative
                .iter()
                .map(|(name, scopes)| {
                    let scopes = scopes.as_array().into_iter().flatten();
                    let scopes = scopes.filter_map(Value::as_str).map(str::to_owned);
                    (scheme(doc, name), scopes.collect())
                })
                .collect()
        })
        .collect();
    if alternatives.is_empty() {
        vec![Requirement::new()]
    } else {
        alternatives
    }
}

/// What a security scheme is, as the client sees it.
fn scheme(doc: &Value, name: &str) -> String {
    let escaped = name.replace('~', "~0").replace('/', "~1");
    let Some(scheme) = doc.pointer(&format!("/components/securitySchemes/{escaped}")) else {
        return format!("undefined scheme {name}");
    };
    let scheme = resolve(doc, scheme);
    let field = |key: &str| scheme.get(key).and_then(Value::as_str).unwrap_or("");
    match field("type") {
        "apiKey" if field("in") == "header" => {
            format!("apiKey in header {}", field("name").to_ascii_lowercase())
        }
        "apiKey" => format!("apiKey in {} {}", field("in"), field("name")),
        "http" => format!("http {}", field("scheme").to_ascii_lowercase()),
        other => format!("{other} {name}"),
    }
}

fn show_requirement(requirement: &Requirement) -> String {
    if requirement.is_empty() {
        return "no credentials".into();
    }
    let parts: Vec<String> = requirement
        .iter()
        .map(|(scheme, scopes)| {
            if scopes.is_empty() {
                format!("[{scheme}]")
            } else {
                format!("[{scheme} with scopes {scopes:?}]")
            }
        })
        .collect();
    parts.join(" + ")
}
