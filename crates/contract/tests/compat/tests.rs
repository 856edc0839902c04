//! Each rule against a mutation of the real `openapi.json`, and the additive changes that must
//! pass. One table of cases, so every rule is seen to fire (`every_rule_fires_alone`).

#![allow(clippy::unwrap_used)]

use serde_json::{json, Value};

use super::*;

const PROVIDERS: &str = "/paths/~1api~1v1~1providers";
const ZONES: &str = "/paths/~1api~1v1~1providers~1{providerId}~1regions~1{regionId}~1zones";
const PROFILE: &str = "/paths/~1api~1v1~1applications~1profiles~1{profileId}";
const SCHEMAS: &str = "/components/schemas";
const LIST_ZONES: &str = "GET /api/v1/providers/{providerId}/regions/{regionId}/zones";
const DELETE_PROFILE: &str = "DELETE /api/v1/applications/profiles/{profileId}";
const CREATE_PROFILE: &str = "POST /api/v1/applications/profiles/{profileId}";
const BODY: &str = "/paths/~1api~1v1~1applications~1profiles~1{profileId}/post/requestBody";

/// The repository's current document.
fn real() -> Value {
    let text = std::fs::read_to_string(root().join("openapi.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn at<'d>(doc: &'d mut Value, pointer: &str) -> &'d mut Value {
    let found = doc.pointer_mut(pointer);
    found.unwrap_or_else(|| panic!("openapi.json has no {pointer}"))
}

/// Removes the member a pointer names from its object; returns it.
fn remove(doc: &mut Value, pointer: &str) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let key = key.replace("~1", "/").replace("~0", "~");
    let removed = at(doc, parent).as_object_mut().unwrap().remove(&key);
    removed.unwrap_or_else(|| panic!("openapi.json has no {pointer}"))
}

/// Removes `value` from the array at `pointer` (a `required` list, an enum).
fn remove_item(doc: &mut Value, pointer: &str, value: &str) {
    let list = at(doc, pointer).as_array_mut().unwrap();
    let before = list.len();
    list.retain(|v| v != value);
    assert_eq!(list.len(), before - 1, "{pointer} does not list {value}");
}

fn set(doc: &mut Value, pointer: &str, value: Value) {
    *at(doc, pointer) = value;
}

/// The findings of the real document with `prepare` applied, against that with `edit` applied
/// too: `prepare` adds parts the real document does not have yet (request bodies, enums).
fn findings(prepare: fn(&mut Value), edit: fn(&mut Value)) -> Vec<Finding> {
    let mut base = real();
    prepare(&mut base);
    assert_eq!(
        check(&base, &base),
        [],
        "the prepared baseline must pass itself"
    );
    let mut current = base.clone();
    edit(&mut current);
    check(&base, &current)
}

fn nothing(_: &mut Value) {}

/// A query parameter `filter` the real document does not have, to hold request inputs to.
fn query(doc: &mut Value, schema: Value) {
    let params = at(doc, &format!("{ZONES}/get/parameters"));
    let filter = json!({"name": "filter", "in": "query", "required": false, "schema": schema});
    params.as_array_mut().unwrap().push(filter);
}

/// `filter` with every bound.
fn bounded(doc: &mut Value) {
    let schema = json!({
        "type": ["string", "integer", "array"],
        "maxLength": 20, "minLength": 1, "maximum": 100, "minimum": 1, "maxItems": 5, "minItems": 1
    });
    query(doc, schema);
}

fn query_schema(doc: &mut Value) -> &mut Value {
    let params = at(doc, &format!("{ZONES}/get/parameters"));
    let params = params.as_array_mut().unwrap();
    &mut params.iter_mut().find(|p| p["name"] == "filter").unwrap()["schema"]
}

/// A request body (the real document has none yet), and a recursive response schema.
fn with_body(doc: &mut Value) {
    at(doc, PROFILE)["post"] = json!({
        "operationId": "putProfile",
        "requestBody": {"required": false, "content": {"application/json": {"schema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {
                "$ref": "#/components/schemas/Tag"}}}
        }}}},
        "responses": {"204": {"description": "Done."}}
    });
    let schemas = at(doc, SCHEMAS);
    schemas["Tag"] = json!({"type": "object", "properties": {"key": {"type": "string"}}});
    schemas["Node"] = json!({"allOf": [
        {"$ref": "#/components/schemas/Named"},
        {"type": "object", "properties": {"children": {
            "type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}
    ]});
    schemas["Named"] = json!({
        "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}
    });
    // A cycle of bare refs too: it must not hang.
    schemas["Loop"] = json!({"$ref": "#/components/schemas/Loop2"});
    schemas["Loop2"] = json!({"$ref": "#/components/schemas/Loop"});
    at(doc, "/paths")["/api/v1/tree"] = json!({"get": {
        "operationId": "tree",
        "responses": {"200": {"description": "The tree.", "content": {"application/json": {
            "schema": {"type": "object", "properties": {
                "root": {"$ref": "#/components/schemas/Node"},
                "loop": {"$ref": "#/components/schemas/Loop"}
            }}
        }}}}
    }});
}

/// A breaking change: prepare, edit, the rule that alone must fire, where, and what a finding
/// says (`""` to not check the detail).
type Case = (
    fn(&mut Value),
    fn(&mut Value),
    Rule,
    &'static str,
    &'static str,
);

#[rustfmt::skip]
fn breaking() -> Vec<Case> {
    use Rule::*;
    vec![
        (nothing, |d| drop(remove(d, &format!("{PROFILE}/delete/responses/404"))), ResponseStatusRemoved, DELETE_PROFILE, "response 404 was removed"),
        (nothing, |d| { set(d, &format!("{SCHEMAS}/ZoneList/properties/id/type"), json!("integer")) }, TypeChanged, LIST_ZONES, "property \"id\": type changed from \"string\" to \"integer\""),
        (nothing, |d| remove_item(d, &format!("{SCHEMAS}/ZoneList/required"), "id"), ResponsePropertyNoLongerRequired, LIST_ZONES, "property \"id\" is no longer required"),
        (nothing, |d| { set(d, &format!("{SCHEMAS}/ZoneList/properties/message/type"), json!(["string", "null"])) }, ResponsePropertyBecameNullable, LIST_ZONES, "property \"message\" may now be null"),
        (nothing, |d| { drop(remove(d, &format!("{ZONES}/get/responses/200/headers/ETag"))) }, ResponseHeaderRemoved, "zones 200", "header \"ETag\" was removed"),
        (nothing, |d| { set(d, &format!("{ZONES}/get/responses/200/headers/ETag/required"), json!(false)) }, ResponseHeaderNoLongerRequired, LIST_ZONES, ""),
        (nothing, |d| { let json = remove(d, &format!("{ZONES}/get/responses/200/content/application~1json")); at(d, &format!("{ZONES}/get/responses/200/content"))["application/problem+json"] = json; }, ResponseMediaTypeRemoved, LIST_ZONES, ""),
        (nothing, |d| set(d, &format!("{SCHEMAS}/ZoneId/pattern"), json!("^.+$")), PatternChanged, LIST_ZONES, "property \"data[]\": pattern changed"),
        (nothing, |d| { set(d, &format!("{ZONES}/get/responses/429/headers/Retry-After/schema/format"), json!("int64")) }, FormatChanged, "zones 429 header Retry-After", ""),
        (nothing, |d| { set(d, &format!("{SCHEMAS}/ZoneList/properties/message/maxLength"), json!(1024)) }, ResponseBoundLoosened, LIST_ZONES, "property \"message\": maxLength changed from 256 to 1024"),
        // `ErrorCode` is `anyOf [KnownErrorCode, string]`, behind a `$ref` with a sibling
        // description in `ErrorBody`.
        (nothing, |d| { at(d, &format!("{SCHEMAS}/ErrorCode/anyOf")) .as_array_mut() .unwrap() .push(json!({"type": "integer"})) }, ResponseUnionBranchAdded, "404 application/json", "property \"error_code\": the oneOf/anyOf branch of type"),
        (nothing, |d| { set(d, &format!("{ZONES}/get/operationId"), json!("listRegionZones")) }, OperationIdChanged, LIST_ZONES, "operationId \"listZones\" became \"listRegionZones\""),
        (nothing, |d| drop(remove(d, PROVIDERS)), PathRemoved, "/api/v1/providers", ""),
        (nothing, |d| drop(remove(d, &format!("{PROVIDERS}/head"))), OperationRemoved, "HEAD /api/v1/providers", ""),
        (nothing, |d| { at(d, "/components/securitySchemes")["bearer"] = json!({"type": "http", "scheme": "bearer"}); at(d, &format!("{PROFILE}/delete"))["security"] = json!([{"bearer": []}]); }, SecurityChanged, DELETE_PROFILE, "[apiKey in header x-api-key] is no longer accepted"),
        (nothing, |d| { let params = at(d, &format!("{ZONES}/get/parameters")) .as_array_mut() .unwrap(); params .iter_mut() .filter(|p| p["name"] == "If-None-Match") .for_each(|p| p["required"] = json!(true)); }, RequestParameterBecameRequired, "header parameter If-None-Match", "the parameter became required"),
        (nothing, |d| { at(d, &format!("{PROFILE}/delete/parameters")) .as_array_mut() .unwrap() .push(json!({ "name": "If-Match", "in": "header", "required": true, "schema": {"$ref": "#/components/schemas/EntityTag"} })) }, NewRequiredRequestParameter, "header parameter If-Match", ""),
        (nothing, |d| { at(d, &format!("{ZONES}/get/parameters")) .as_array_mut() .unwrap() .retain(|p| p["name"] != "X-Request-Id") }, RequestParameterRemoved, LIST_ZONES, ""),
        (nothing, |d| { set(d, &format!("{SCHEMAS}/ProfileId/pattern"), json!("^prof_[0-9A-Z]{26}$")) }, PatternChanged, "path parameter profileId", ""),
        (nothing, |d| set(d, &format!("{SCHEMAS}/ProfileId/type"), json!("integer")), TypeChanged, DELETE_PROFILE, ""),
        (bounded, |d| query_schema(d)["maxLength"] = json!(10), MaxLengthDecreased, "query parameter filter", ""),
        (bounded, |d| query_schema(d)["minLength"] = json!(3), MinLengthIncreased, "query parameter filter", ""),
        (bounded, |d| query_schema(d)["maximum"] = json!(50), MaximumDecreased, "query parameter filter", ""),
        (bounded, |d| query_schema(d)["minimum"] = json!(5), MinimumIncreased, "query parameter filter", ""),
        (bounded, |d| query_schema(d)["maxItems"] = json!(2), MaxItemsDecreased, "query parameter filter", ""),
        (bounded, |d| query_schema(d)["minItems"] = json!(2), MinItemsIncreased, "query parameter filter", ""),
        (|d| query(d, json!({"type": "string", "enum": ["asc", "desc"]})), |d| query_schema(d)["enum"] = json!(["asc"]), RequestEnumValueRemoved, LIST_ZONES, "value(s) [\"desc\"] are no longer accepted"),
        (|d| { query(d, json!({"anyOf": [{"$ref": "#/components/schemas/ZoneId"}, {"type": "integer"}]})) }, |d| drop(query_schema(d)["anyOf"].as_array_mut().unwrap().pop()), RequestUnionBranchRemoved, LIST_ZONES, ""),
        (|d| query(d, json!({"type": "string"})), |d| query_schema(d)["format"] = json!("uuid"), FormatChanged, LIST_ZONES, ""),
        (with_body, |d| { at(d, &format!("{BODY}/content/application~1json/schema"))["required"] = json!(["name"]) }, RequestPropertyBecameRequired, CREATE_PROFILE, "property \"name\" became required"),
        (with_body, |d| { let tag = at(d, &format!("{SCHEMAS}/Tag")); tag["properties"]["value"] = json!({"type": "string"}); tag["required"] = json!(["value"]); }, NewRequiredRequestProperty, CREATE_PROFILE, "new required property \"tags[].value\""),
        (with_body, |d| set(d, &format!("{BODY}/required"), json!(true)), RequestBodyBecameRequired, CREATE_PROFILE, ""),
        (with_body, |d| { let json = remove(d, &format!("{BODY}/content/application~1json")); at(d, &format!("{BODY}/content"))["application/merge-patch+json"] = json; }, RequestMediaTypeRemoved, CREATE_PROFILE, ""),
        // Through a `$ref` cycle and `allOf`.
        (with_body, |d| drop(remove(d, &format!("{SCHEMAS}/Named/properties/name"))), ResponsePropertyRemoved, "GET /api/v1/tree 200", "property \"root.name\" was removed"),
        (nothing, |d| { remove(d, &format!("{SCHEMAS}/ZoneList/properties/message")); remove_item(d, &format!("{SCHEMAS}/ZoneList/required"), "message"); }, ResponsePropertyRemoved, LIST_ZONES, "property \"message\" was removed"),
    ]
}

#[test]
fn every_rule_fires_alone() {
    let mut fired = BTreeSet::new();
    for (i, (prepare, edit, rule, location, detail)) in breaking().into_iter().enumerate() {
        let findings = findings(prepare, edit);
        assert!(
            !findings.is_empty(),
            "case {i}: expected {rule}, found nothing"
        );
        for finding in &findings {
            assert_eq!(
                finding.rule, rule,
                "case {i}: unexpected {finding}\nall: {findings:#?}"
            );
        }
        let located = |f: &Finding| f.location.contains(location);
        assert!(
            findings.iter().any(located),
            "case {i}: no {rule} at {location}: {findings:#?}"
        );
        assert!(
            findings.iter().any(|f| f.detail.contains(detail)),
            "case {i}: no {detail:?}: {findings:#?}"
        );
        fired.insert(rule);
    }
    assert_eq!(fired.len(), Rule::ALL.len(), "a rule without a case");
    // The line the command prints, for the last case.
    let (prepare, edit, ..) = breaking().pop().unwrap();
    assert_eq!(
        format!("error: {}", findings(prepare, edit)[0]),
        "error: [response-property-removed] GET /api/v1/providers/{providerId}/regions/{regionId}/zones 200 \
         application/json: property \"message\" was removed"
    );
}

/// Additive and documentation changes, all at once: none may break a client.
fn additive(d: &mut Value) {
    at(d, &format!("{SCHEMAS}/ZoneList/properties"))["next"] = json!({"type": ["string", "null"]});
    let delete = at(d, &format!("{PROFILE}/delete")).clone();
    at(d, "/paths")["/api/v1/applications/profiles"] = json!({"get": delete});
    let mut post = at(d, &format!("{PROVIDERS}/get")).clone();
    post["operationId"] = json!("createProvider");
    at(d, PROVIDERS)["post"] = post;
    query(d, json!({"type": "string", "maxLength": 10}));
    // 410 is a status the document does not have (409 came with `Idempotency-Key`).
    let gone = at(d, &format!("{PROFILE}/delete/responses/404")).clone();
    let responses = at(d, &format!("{PROFILE}/delete/responses"));
    assert!(
        responses.get("410").is_none(),
        "410 is documented now; pick another"
    );
    responses["410"] = gone;
    at(d, &format!("{ZONES}/get/responses/200/headers"))["X-Next"] = json!({"schema": {}});
    set(
        d,
        &format!("{ZONES}/get/summary"),
        json!("Zones of a region"),
    );
    set(d, &format!("{ZONES}/get/description"), json!("Rewritten."));
    at(d, &format!("{ZONES}/head"))["deprecated"] = json!(true);
    at(d, &format!("{SCHEMAS}/ZoneList"))["example"] = json!({"data": []});
    let codes = at(d, &format!("{SCHEMAS}/KnownErrorCode/enum"));
    codes.as_array_mut().unwrap().push(json!("conflict"));
    at(d, SCHEMAS)["Profile"] = json!({"type": "object"});
    remove_item(d, &format!("{SCHEMAS}/ListingStatus/enum"), "success");
}

/// Renames a path parameter and a security scheme: nothing a client sends changes.
fn renamed(d: &mut Value) {
    let profile = remove(d, PROFILE).to_string();
    let profile = profile.replace("\"name\":\"profileId\"", "\"name\":\"id\"");
    at(d, "/paths")["/api/v1/applications/profiles/{id}"] = serde_json::from_str(&profile).unwrap();
    let scheme = remove(d, "/components/securitySchemes/apiKey");
    at(d, "/components/securitySchemes")["key"] = scheme;
    let text = d.to_string().replace("{\"apiKey\":[]}", "{\"key\":[]}");
    *d = serde_json::from_str(&text).unwrap();
}

/// A baseline's path outside /api/v1, which is not held.
fn with_v2(d: &mut Value) {
    let providers = at(d, PROVIDERS).clone();
    at(d, "/paths")["/api/v2/providers"] = providers;
}

#[test]
fn additive_and_documentation_changes_pass() {
    assert_eq!(findings(nothing, additive), []);
    assert_eq!(findings(nothing, renamed), []);
    // Loosening a request input.
    assert_eq!(
        findings(bounded, |d| query_schema(d)["maxLength"] = json!(50)),
        []
    );
    assert_eq!(
        findings(with_v2, |d| drop(remove(d, "/paths/~1api~1v2~1providers"))),
        []
    );
    assert!(
        held_operations(&real()) >= 7,
        "the baseline holds the v1 operations"
    );
}

#[test]
fn every_rule_is_in_the_module_table() {
    let docs = include_str!("main.rs");
    for &rule in Rule::ALL {
        assert!(
            docs.contains(&format!("//! | `{}` |", rule.id())),
            "{rule} not in the table"
        );
        assert!(!rule.description().is_empty());
    }
    let rows = docs.lines().filter(|l| l.starts_with("//! | `")).count();
    assert_eq!(
        rows,
        Rule::ALL.len(),
        "the table lists a rule that does not exist"
    );
}

/// The command on a scratch repository: `release/v1.0.0/openapi.json` (the real document,
/// unless `baseline` is false) and `openapi.json`.
fn command(name: &str, baseline: bool, current: &Value) -> Result<()> {
    let root =
        std::env::temp_dir().join(format!("appzone-api-compat-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("release/v1.0.0")).unwrap();
    if baseline {
        std::fs::write(root.join("release/v1.0.0/openapi.json"), real().to_string()).unwrap();
    }
    std::fs::write(root.join("openapi.json"), current.to_string()).unwrap();
    let result = run_in(&root);
    std::fs::remove_dir_all(&root).unwrap();
    result
}

#[test]
fn the_command_names_the_rule_and_needs_a_baseline() {
    let mut broken = real();
    remove(
        &mut broken,
        &format!("{SCHEMAS}/ZoneList/properties/message"),
    );
    let err = format!("{:#}", command("broken", true, &broken).unwrap_err());
    assert!(err.contains("response-property-removed"), "{err}");
    command("kept", true, &real()).unwrap();
    let err = format!("{:#}", command("none", false, &real()).unwrap_err());
    assert!(
        err.contains("no released baseline under release/*/openapi.json"),
        "{err}"
    );
}
