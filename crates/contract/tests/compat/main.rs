//! The test `openapi_json_keeps_every_released_promise` (also `cargo xtask api-compat`): fails
//! when `openapi.json` breaks a released v1 document. Beside the drift test, in the crate that
//! generates the document, so the inner loop sees a breaking change as soon as CI does.
//!
//! Every `release/*/openapi.json` is a baseline: a document clients were given. The current
//! `openapi.json` must keep each baseline's promises for every path under `/api/v1`; paths
//! outside it (a new major version such as `/api/v2`) are free to differ. The rules follow
//! oasdiff's breaking-change catalogue, Stripe's list of backward-compatible changes and Google
//! AIP-180, read through one principle: a **request** input may only accept more than before,
//! and a **response** may only promise more (never less) than before.
//!
//! | rule | breaking when |
//! |---|---|
//! | `path-removed` | a path under /api/v1 is gone (renamed counts as gone; renaming a path parameter does not) |
//! | `operation-removed` | a method of a path is gone (marking it `deprecated` is fine) |
//! | `operation-id-changed` | an operationId changed or vanished: generated clients' method names break |
//! | `security-changed` | an operation now wants credentials the released document did not accept (a scheme renamed with the same definition is fine) |
//! | `request-parameter-removed` | a parameter is gone: clients that send it may be refused |
//! | `new-required-request-parameter` | a new parameter is required |
//! | `request-parameter-became-required` | an optional parameter became required |
//! | `request-body-became-required` | a request body is now required |
//! | `request-media-type-removed` | a request body media type is no longer accepted |
//! | `new-required-request-property` | a request body has a new required property |
//! | `request-property-became-required` | an optional request body property became required |
//! | `request-enum-value-removed` | a request input accepts fewer enum values (or an enum now restricts it) |
//! | `request-union-branch-removed` | a request input lost a oneOf/anyOf branch |
//! | `type-changed` | a request input accepts fewer types, or a response may send new ones |
//! | `format-changed` | a format was added or changed on a request input, or changed or dropped on a response |
//! | `pattern-changed` | a pattern was added or changed on a request input, or changed or dropped on a response |
//! | `max-length-decreased` | a request input's maxLength was added or lowered |
//! | `min-length-increased` | a request input's minLength was raised |
//! | `maximum-decreased` | a request input's maximum (or exclusiveMaximum) was added or lowered |
//! | `minimum-increased` | a request input's minimum (or exclusiveMinimum) was added or raised |
//! | `max-items-decreased` | a request input's maxItems was added or lowered |
//! | `min-items-increased` | a request input's minItems was raised |
//! | `response-status-removed` | a documented status of an operation is gone |
//! | `response-media-type-removed` | a response media type is gone |
//! | `response-property-removed` | a response body property is gone (at any depth, in arrays too; optional ones too) |
//! | `response-property-no-longer-required` | a response property that was always sent may now be left out |
//! | `response-property-became-nullable` | a response value may now be null |
//! | `response-bound-loosened` | a response bound (maxLength, minLength, maximum, minimum, maxItems, minItems) was loosened or dropped |
//! | `response-union-branch-added` | a response oneOf/anyOf gained a branch: clients may get a shape they do not know |
//! | `response-header-removed` | a documented response header is gone (optional ones too) |
//! | `response-header-no-longer-required` | a response header that was always sent may now be left out |
//!
//! Additive changes pass: new paths and operations, new optional parameters, new response
//! properties and optional headers, new statuses, new components, `deprecated: true`, and edits
//! of descriptions, summaries and examples.
//!
//! Choices worth knowing:
//! - Response enums are not held. This document keeps its enums open on purpose (`ErrorCode` is
//!   any string, `KnownErrorCode` lists today's codes, and docs/API.md tells clients to treat an
//!   unknown code as a generic error), so adding a value is allowed; removing one only means a
//!   client never sees it, which does not break it either.
//! - Patterns and formats cannot be compared as languages, so any change on a side where it
//!   could hurt counts as breaking, a truly looser request pattern too: such a change waits
//!   for a new major path (`/api/v2`), like every breaking one; a baseline is never edited.
//! - A request body property that disappears is not flagged: the body schemas of this API do
//!   not forbid unknown properties, so clients that still send it are not refused.
//! - `$ref`s are followed (schemas, responses, parameters, headers, request bodies: any local
//!   `#/...` pointer), `allOf` members are merged into one schema, `oneOf`/`anyOf` branches are
//!   paired by `$ref` and then by position, and a `$ref` cycle stops the walk.

// A failure is a message: the test prints it.
type Result<T> = std::result::Result<T, String>;

macro_rules! bail {
    ($($message:tt)*) => {
        return Err(format!($($message)*))
    };
}

mod rules;
mod schema;
mod security;
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub(crate) use rules::Rule;
use schema::Dir;

/// The paths a baseline holds: `/api/v1` and everything under it.
const HELD: &str = "/api/v1";

/// The HTTP methods a path item may hold.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// How deep `$ref` chains and nested schemas are followed before the walk gives up; a
/// backstop under the cycle guard, far beyond any real nesting.
const MAX_DEPTH: usize = 64;

/// A broken promise: which rule, where (operation, status, media type or parameter), and what
/// changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) rule: Rule,
    pub(crate) location: String,
    pub(crate) detail: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}: {}", self.rule, self.location, self.detail)
    }
}

/// `openapi.json` against every `release/*/openapi.json` of the repository.
#[test]
fn openapi_json_keeps_every_released_promise() {
    if let Err(message) = run_in(&root()) {
        panic!("{message}");
    }
}

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The JSON document in the file at `path`.
fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    serde_json::from_str(&text).map_err(|err| format!("{} is not JSON: {err}", path.display()))
}

/// The check for the repository at `root`.
fn run_in(root: &Path) -> Result<()> {
    let baselines = baselines(root)?;
    if baselines.is_empty() {
        // Under CI a missing baseline would make the guard hold nothing while looking green.
        bail!(
            "no released baseline under release/*/openapi.json: copy the openapi.json of the \
             released v1 to release/<version>/openapi.json"
        );
    }
    let current = read_json(&root.join("openapi.json"))?;
    let mut broken = BTreeSet::new();
    let mut count = 0;
    for path in &baselines {
        let name = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let baseline = read_json(path)?;
        let held = held_operations(&baseline);
        if held == 0 {
            bail!("{name} has no operation under {HELD}: it cannot be a released v1 document");
        }
        let findings = check(&baseline, &current);
        if findings.is_empty() {
            println!(
                "api-compat: openapi.json keeps the promises of {name}: {held} operations under \
                 {HELD} compared (paths, operation ids, security, parameters, request bodies, \
                 statuses, headers, media types, schemas)"
            );
            continue;
        }
        eprintln!("api-compat: openapi.json against {name}:");
        for finding in &findings {
            eprintln!("error: {finding}");
        }
        count += findings.len();
        broken.extend(findings.iter().map(|f| f.rule));
    }
    if count > 0 {
        for rule in &broken {
            eprintln!("  {rule}: {}", rule.description());
        }
        let rules: Vec<&str> = broken.iter().map(|r| r.id()).collect();
        bail!(
            "openapi.json breaks a released v1 document: {count} finding(s) ({}). Make the change \
             additive, or put it under a new major path such as /api/v2 (docs/API.md)",
            rules.join(", ")
        );
    }
    Ok(())
}

/// Every `release/<version>/openapi.json` under `root` (in name order: each is held alike).
fn baselines(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join("release");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => bail!("cannot read {}: {err}", dir.display()),
    };
    let mut documents: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path().join("openapi.json")))
        .filter(|document| document.is_file())
        .collect();
    documents.sort();
    Ok(documents)
}

/// The breaking changes from `baseline` to `current`, for the paths under `/api/v1` of the
/// baseline.
pub(crate) fn check(baseline: &Value, current: &Value) -> Vec<Finding> {
    let mut comparer = Comparer {
        base: baseline,
        cur: current,
        findings: Vec::new(),
        in_progress: Vec::new(),
    };
    comparer.document();
    comparer.findings
}

fn is_held(template: &str) -> bool {
    template == HELD || template.starts_with("/api/v1/")
}

/// How many operations of `doc` a baseline holds.
fn held_operations(doc: &Value) -> usize {
    held_paths(doc)
        .map(|(_, item)| {
            let item = resolve(doc, item);
            METHODS.iter().filter(|m| item.get(**m).is_some()).count()
        })
        .sum()
}

fn held_paths(doc: &Value) -> impl Iterator<Item = (&String, &Value)> {
    entries(doc, "paths").filter(|(template, _)| is_held(template))
}

/// A path template with its parameter names blanked (`/a/{}`): clients send values, not names,
/// so `/a/{id}` and `/a/{profileId}` are the same path to them.
fn normalize(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut in_name = false;
    for ch in template.chars() {
        match ch {
            '{' => {
                in_name = true;
                out.push_str("{}");
            }
            '}' => in_name = false,
            _ if in_name => {}
            _ => out.push(ch),
        }
    }
    out
}

/// The names of a template's path parameters, in order.
fn path_names(template: &str) -> Vec<&str> {
    template
        .split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .collect()
}

/// Follows local `$ref`s (`#/components/...`, or any `#/...` pointer) to the value they name.
/// A ref that does not resolve (external, or dangling) leaves the value as it is; a chain
/// longer than [`MAX_DEPTH`] stops there, so a cycle of refs cannot hang the walk.
fn resolve<'v>(doc: &'v Value, mut value: &'v Value) -> &'v Value {
    for _ in 0..MAX_DEPTH {
        match value
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| pointer(doc, r))
        {
            Some(target) => value = target,
            None => break,
        }
    }
    value
}

fn pointer<'v>(doc: &'v Value, reference: &str) -> Option<&'v Value> {
    reference.strip_prefix('#').and_then(|p| doc.pointer(p))
}

fn required(value: &Value) -> bool {
    value
        .get("required")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The entries of an object member (`responses`, `headers`, `content`...), none when absent.
fn entries<'v>(value: &'v Value, key: &str) -> impl Iterator<Item = (&'v String, &'v Value)> {
    value
        .get(key)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

/// "Any value": stands for a schema that is absent.
static ANY: Value = Value::Null;

/// One side of an operation: the path template, its path item and the operation object.
#[derive(Clone, Copy)]
struct Operation<'v> {
    template: &'v str,
    item: &'v Value,
    op: &'v Value,
}

/// The walk over both documents, collecting findings.
struct Comparer<'a> {
    base: &'a Value,
    cur: &'a Value,
    findings: Vec<Finding>,
    /// The `$ref` pairs whose comparison is under way: meeting one again is a cycle.
    in_progress: Vec<(&'a str, &'a str)>,
}

impl<'a> Comparer<'a> {
    fn report(&mut self, rule: Rule, location: &str, detail: String) {
        let finding = Finding {
            rule,
            location: location.to_owned(),
            detail,
        };
        if !self.findings.contains(&finding) {
            self.findings.push(finding);
        }
    }

    fn document(&mut self) {
        // The current paths by normalized template, so a renamed path parameter still matches.
        let current: BTreeMap<String, (&'a str, &'a Value)> = entries(self.cur, "paths")
            .map(|(t, item)| (normalize(t), (t.as_str(), resolve(self.cur, item))))
            .collect();
        for (template, item) in held_paths(self.base) {
            let Some(&(cur_template, cur_item)) = current.get(&normalize(template)) else {
                self.report(Rule::PathRemoved, template, "the path was removed".into());
                continue;
            };
            let item = resolve(self.base, item);
            for method in METHODS {
                let Some(op) = item.get(method) else { continue };
                let location = format!("{} {template}", method.to_ascii_uppercase());
                let Some(cur_op) = cur_item.get(method) else {
                    self.report(
                        Rule::OperationRemoved,
                        &location,
                        "the operation was removed".into(),
                    );
                    continue;
                };
                let base = Operation { template, item, op };
                let cur = Operation {
                    template: cur_template,
                    item: cur_item,
                    op: cur_op,
                };
                self.operation(&location, base, cur);
            }
        }
    }

    fn operation(&mut self, location: &str, base: Operation<'a>, cur: Operation<'a>) {
        let id = |op: &'a Value| op.get("operationId").and_then(Value::as_str);
        if let Some(was) = id(base.op) {
            match id(cur.op) {
                Some(now) if now == was => {}
                Some(now) => self.report(
                    Rule::OperationIdChanged,
                    location,
                    format!("operationId \"{was}\" became \"{now}\""),
                ),
                None => self.report(
                    Rule::OperationIdChanged,
                    location,
                    format!("operationId \"{was}\" was removed"),
                ),
            }
        }
        self.security(location, base.op, cur.op);
        self.parameters(location, base, cur);
        self.request_body(location, base.op, cur.op);
        self.responses(location, base.op, cur.op);
    }

    fn parameters(&mut self, location: &str, base: Operation<'a>, cur: Operation<'a>) {
        let base_params = parameters(self.base, base);
        let cur_params = parameters(self.cur, cur);
        for (key, param) in &base_params {
            let name = param.get("name").and_then(Value::as_str).unwrap_or("?");
            let here = format!("{location} {} parameter {name}", key.0);
            let Some(cur_param) = cur_params.get(key) else {
                self.report(
                    Rule::RequestParameterRemoved,
                    &here,
                    "the parameter was removed: clients that send it may be refused".into(),
                );
                continue;
            };
            if !is_required(param) && is_required(cur_param) {
                self.report(
                    Rule::RequestParameterBecameRequired,
                    &here,
                    "the parameter became required".into(),
                );
            }
            let (b, c) = (param_schema(param), param_schema(cur_param));
            self.schema(Dir::Request, &here, "", b, c, 0);
        }
        for (key, param) in &cur_params {
            if !base_params.contains_key(key) && is_required(param) {
                let name = param.get("name").and_then(Value::as_str).unwrap_or("?");
                self.report(
                    Rule::NewRequiredRequestParameter,
                    &format!("{location} {} parameter {name}", key.0),
                    "a new parameter is required".into(),
                );
            }
        }
    }

    fn request_body(&mut self, location: &str, base_op: &'a Value, cur_op: &'a Value) {
        let base = base_op.get("requestBody").map(|b| resolve(self.base, b));
        let cur = cur_op.get("requestBody").map(|b| resolve(self.cur, b));
        let Some(cur) = cur else {
            // A body the server no longer reads is ignored, not refused.
            return;
        };
        if required(cur) && !base.is_some_and(required) {
            self.report(
                Rule::RequestBodyBecameRequired,
                location,
                "a request body is now required".into(),
            );
        }
        let Some(base) = base else { return };
        for (media, content) in entries(base, "content") {
            let here = format!("{location} request body {media}");
            let Some(cur_content) = cur.get("content").and_then(|c| c.get(media)) else {
                self.report(
                    Rule::RequestMediaTypeRemoved,
                    location,
                    format!("request media type \"{media}\" is no longer accepted"),
                );
                continue;
            };
            let b = content.get("schema").unwrap_or(&ANY);
            let c = cur_content.get("schema").unwrap_or(&ANY);
            self.schema(Dir::Request, &here, "", b, c, 0);
        }
    }

    fn responses(&mut self, location: &str, base_op: &'a Value, cur_op: &'a Value) {
        for (status, response) in entries(base_op, "responses") {
            let Some(cur_response) = cur_op.get("responses").and_then(|r| r.get(status)) else {
                self.report(
                    Rule::ResponseStatusRemoved,
                    location,
                    format!("response {status} was removed"),
                );
                continue;
            };
            let response = resolve(self.base, response);
            let cur_response = resolve(self.cur, cur_response);
            let here = format!("{location} {status}");
            self.headers(&here, response, cur_response);
            for (media, content) in entries(response, "content") {
                let Some(cur_content) = cur_response.get("content").and_then(|c| c.get(media))
                else {
                    self.report(
                        Rule::ResponseMediaTypeRemoved,
                        &here,
                        format!("media type \"{media}\" was removed"),
                    );
                    continue;
                };
                let b = content.get("schema").unwrap_or(&ANY);
                let c = cur_content.get("schema").unwrap_or(&ANY);
                self.schema(Dir::Response, &format!("{here} {media}"), "", b, c, 0);
            }
        }
    }

    /// Response headers; their names are case-insensitive, as in HTTP.
    fn headers(&mut self, location: &str, response: &'a Value, cur_response: &'a Value) {
        let current: BTreeMap<String, &'a Value> = entries(cur_response, "headers")
            .map(|(name, h)| (name.to_ascii_lowercase(), resolve(self.cur, h)))
            .collect();
        for (name, header) in entries(response, "headers") {
            let header = resolve(self.base, header);
            let Some(&cur_header) = current.get(&name.to_ascii_lowercase()) else {
                self.report(
                    Rule::ResponseHeaderRemoved,
                    location,
                    format!("header \"{name}\" was removed"),
                );
                continue;
            };
            if required(header) && !required(cur_header) {
                self.report(
                    Rule::ResponseHeaderNoLongerRequired,
                    location,
                    format!("header \"{name}\" is no longer required"),
                );
            }
            let (b, c) = (param_schema(header), param_schema(cur_header));
            self.schema(
                Dir::Response,
                &format!("{location} header {name}"),
                "",
                b,
                c,
                0,
            );
        }
    }
}

/// An operation's parameters with the path item's, the operation's winning, keyed by where
/// they go and their name: a header by its lowercase name (HTTP headers are case-insensitive)
/// and a path parameter by its position in the template (its name is not on the wire).
fn parameters<'v>(doc: &'v Value, side: Operation<'v>) -> BTreeMap<(String, String), &'v Value> {
    let names = path_names(side.template);
    let mut found = BTreeMap::new();
    for owner in [side.item, side.op] {
        let list = owner.get("parameters").and_then(Value::as_array);
        for param in list.into_iter().flatten() {
            let param = resolve(doc, param);
            let name = param.get("name").and_then(Value::as_str);
            let place = param.get("in").and_then(Value::as_str);
            let (Some(name), Some(place)) = (name, place) else {
                continue;
            };
            let key = match place {
                "header" => name.to_ascii_lowercase(),
                "path" => names
                    .iter()
                    .position(|n| *n == name)
                    .map_or_else(|| name.to_owned(), |i| format!("#{i}")),
                _ => name.to_owned(),
            };
            found.insert((place.to_owned(), key), param);
        }
    }
    found
}

/// Whether clients must send the parameter: path parameters always, others when `required`.
fn is_required(param: &Value) -> bool {
    required(param) || param.get("in").and_then(Value::as_str) == Some("path")
}

/// The schema of a parameter or header: `schema`, or the one of its `content`.
fn param_schema(param: &Value) -> &Value {
    param
        .get("schema")
        .or_else(|| {
            param
                .get("content")
                .and_then(Value::as_object)
                .and_then(|c| c.values().next())
                .and_then(|m| m.get("schema"))
        })
        .unwrap_or(&ANY)
}
