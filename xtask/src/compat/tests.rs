//! Each rule against a mutation of the real `openapi.json`, and the additive changes that must
//! pass.

#![allow(clippy::unwrap_used)]

use serde_json::{json, Value};

use super::*;

const PROVIDERS: &str = "/paths/~1api~1v1~1providers";
const ZONES: &str = "/paths/~1api~1v1~1providers~1{providerId}~1regions~1{regionId}~1zones";
const PROFILE: &str = "/paths/~1api~1v1~1applications~1profiles~1{profileId}";
const SCHEMAS: &str = "/components/schemas";
const LIST_ZONES: &str = "GET /api/v1/providers/{providerId}/regions/{regionId}/zones";
const DELETE_PROFILE: &str = "DELETE /api/v1/applications/profiles/{profileId}";

/// The repository's current document.
fn real() -> Value {
    let text = std::fs::read_to_string(crate::root().join("openapi.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn at<'d>(doc: &'d mut Value, pointer: &str) -> &'d mut Value {
    doc.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("openapi.json has no {pointer}"))
}

/// Removes the member a pointer names from its object.
fn remove(doc: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let key = key.replace("~1", "/").replace("~0", "~");
    let removed = at(doc, parent).as_object_mut().unwrap().remove(&key);
    assert!(removed.is_some(), "openapi.json has no {pointer}");
}

/// Removes `value` from the array at `pointer` (a `required` list).
fn remove_item(doc: &mut Value, pointer: &str, value: &str) {
    let list = at(doc, pointer).as_array_mut().unwrap();
    let before = list.len();
    list.retain(|v| v != value);
    assert_eq!(list.len(), before - 1, "{pointer} does not list {value}");
}

/// The findings of the real document against itself with `edit` applied.
fn mutated(edit: impl FnOnce(&mut Value)) -> Vec<Finding> {
    prepared_then_mutated(|_| {}, edit)
}

/// The findings of the real document with `prepare` applied, against that with `edit` applied
/// too: for rules about parts the real document does not have yet (request bodies, enums).
fn prepared_then_mutated(
    prepare: impl FnOnce(&mut Value),
    edit: impl FnOnce(&mut Value),
) -> Vec<Finding> {
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

/// Asserts that `rule` fired, only it, and at least once at a location containing `location`.
fn assert_only(findings: &[Finding], rule: Rule, location: &str) {
    assert!(!findings.is_empty(), "expected {rule}, found nothing");
    for finding in findings {
        assert_eq!(
            finding.rule, rule,
            "unexpected: {finding}\nall: {findings:#?}"
        );
    }
    assert!(
        findings.iter().any(|f| f.location.contains(location)),
        "no {rule} at {location}: {findings:#?}"
    );
}

fn assert_detail(findings: &[Finding], detail: &str) {
    assert!(
        findings.iter().any(|f| f.detail.contains(detail)),
        "no finding says {detail:?}: {findings:#?}"
    );
}

// --- the real document ---

#[test]
fn the_real_document_passes_against_itself() {
    let doc = real();
    assert!(
        held_operations(&doc) >= 7,
        "the baseline holds the v1 operations"
    );
    assert_eq!(check(&doc, &doc), []);
}

#[test]
fn every_rule_is_in_the_module_table() {
    let docs = include_str!("mod.rs");
    let mut ids = BTreeSet::new();
    for &rule in Rule::ALL {
        assert!(ids.insert(rule.id()), "{rule} twice");
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

// --- responses ---

#[test]
fn zone_list_keeps_its_message() {
    let findings = mutated(|doc| {
        remove(doc, &format!("{SCHEMAS}/ZoneList/properties/message"));
        remove_item(doc, &format!("{SCHEMAS}/ZoneList/required"), "message");
    });
    assert_only(&findings, Rule::ResponsePropertyRemoved, LIST_ZONES);
    let line = format!("error: {}", findings[0]);
    assert_eq!(
        line,
        "error: [response-property-removed] GET \
         /api/v1/providers/{providerId}/regions/{regionId}/zones 200 application/json: property \
         \"message\" was removed"
    );
}

#[test]
fn delete_profile_keeps_its_404() {
    let findings = mutated(|doc| remove(doc, &format!("{PROFILE}/delete/responses/404")));
    assert_only(&findings, Rule::ResponseStatusRemoved, DELETE_PROFILE);
    assert_detail(&findings, "response 404 was removed");
}

#[test]
fn response_property_types_stay() {
    let findings = mutated(|doc| {
        *at(doc, &format!("{SCHEMAS}/ZoneList/properties/id/type")) = json!("integer");
    });
    assert_only(&findings, Rule::TypeChanged, LIST_ZONES);
    assert_detail(
        &findings,
        "property \"id\": type changed from \"string\" to \"integer\"",
    );
}

#[test]
fn response_properties_stay_required() {
    let findings = mutated(|doc| remove_item(doc, &format!("{SCHEMAS}/ZoneList/required"), "id"));
    assert_only(
        &findings,
        Rule::ResponsePropertyNoLongerRequired,
        LIST_ZONES,
    );
    assert_detail(&findings, "property \"id\" is no longer required");
}

#[test]
fn response_properties_do_not_become_nullable() {
    let findings = mutated(|doc| {
        *at(doc, &format!("{SCHEMAS}/ZoneList/properties/message/type")) =
            json!(["string", "null"]);
    });
    assert_only(&findings, Rule::ResponsePropertyBecameNullable, LIST_ZONES);
    assert_detail(&findings, "property \"message\" may now be null");
}

#[test]
fn response_headers_stay() {
    let findings = mutated(|doc| remove(doc, &format!("{ZONES}/get/responses/200/headers/ETag")));
    assert_only(
        &findings,
        Rule::ResponseHeaderRemoved,
        &format!("{LIST_ZONES} 200"),
    );
    assert_detail(&findings, "header \"ETag\" was removed");
}

#[test]
fn response_headers_stay_required() {
    let findings = mutated(|doc| {
        *at(
            doc,
            &format!("{ZONES}/get/responses/200/headers/ETag/required"),
        ) = json!(false);
    });
    assert_only(&findings, Rule::ResponseHeaderNoLongerRequired, LIST_ZONES);
}

#[test]
fn response_media_types_stay() {
    let findings = mutated(|doc| {
        let content = at(doc, &format!("{ZONES}/get/responses/200/content"));
        let json = content
            .as_object_mut()
            .unwrap()
            .remove("application/json")
            .unwrap();
        content["application/problem+json"] = json;
    });
    assert_only(&findings, Rule::ResponseMediaTypeRemoved, LIST_ZONES);
}

#[test]
fn response_patterns_stay_inside_arrays() {
    let findings = mutated(|doc| {
        *at(doc, &format!("{SCHEMAS}/ZoneId/pattern")) = json!("^.+$");
    });
    assert_only(&findings, Rule::PatternChanged, LIST_ZONES);
    assert_detail(&findings, "property \"data[]\": pattern changed");
}

#[test]
fn response_formats_stay() {
    let findings = mutated(|doc| {
        let header = format!("{ZONES}/get/responses/429/headers/Retry-After/schema/format");
        *at(doc, &header) = json!("int64");
    });
    assert_only(
        &findings,
        Rule::FormatChanged,
        &format!("{LIST_ZONES} 429 header Retry-After"),
    );
}

#[test]
fn response_bounds_do_not_loosen() {
    let findings = mutated(|doc| {
        *at(
            doc,
            &format!("{SCHEMAS}/ZoneList/properties/message/maxLength"),
        ) = json!(1024);
    });
    assert_only(&findings, Rule::ResponseBoundLoosened, LIST_ZONES);
    assert_detail(
        &findings,
        "property \"message\": maxLength changed from 256 to 1024",
    );
}

#[test]
fn response_unions_gain_no_branch() {
    // `ErrorCode` is `anyOf [KnownErrorCode, string]`, behind a `$ref` with a sibling
    // description in `ErrorBody`.
    let findings = mutated(|doc| {
        let any_of = at(doc, &format!("{SCHEMAS}/ErrorCode/anyOf"));
        any_of
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "integer"}));
    });
    assert_only(
        &findings,
        Rule::ResponseUnionBranchAdded,
        "404 application/json",
    );
    assert_detail(
        &findings,
        "property \"error_code\": the oneOf/anyOf branch of type",
    );
}

// --- operations and paths ---

#[test]
fn operation_ids_stay() {
    let findings = mutated(|doc| {
        *at(doc, &format!("{ZONES}/get/operationId")) = json!("listRegionZones");
    });
    assert_only(&findings, Rule::OperationIdChanged, LIST_ZONES);
    assert_detail(
        &findings,
        "operationId \"listZones\" became \"listRegionZones\"",
    );
}

#[test]
fn paths_stay() {
    let findings = mutated(|doc| remove(doc, PROVIDERS));
    assert_only(&findings, Rule::PathRemoved, "/api/v1/providers");
    assert_eq!(findings.len(), 1);
}

#[test]
fn operations_stay() {
    let findings = mutated(|doc| remove(doc, &format!("{PROVIDERS}/head")));
    assert_only(&findings, Rule::OperationRemoved, "HEAD /api/v1/providers");
}

#[test]
fn security_requirements_stay() {
    let findings = mutated(|doc| {
        at(doc, "/components/securitySchemes")["bearer"] =
            json!({"type": "http", "scheme": "bearer"});
        at(doc, &format!("{PROFILE}/delete"))["security"] = json!([{"bearer": []}]);
    });
    assert_only(&findings, Rule::SecurityChanged, DELETE_PROFILE);
    assert_detail(
        &findings,
        "[apiKey in header x-api-key] is no longer accepted",
    );
}

#[test]
fn renaming_a_security_scheme_is_no_change() {
    let findings = mutated(|doc| {
        let schemes = at(doc, "/components/securitySchemes")
            .as_object_mut()
            .unwrap();
        let scheme = schemes.remove("apiKey").unwrap();
        schemes.insert("key".into(), scheme);
        let text = serde_json::to_string(doc)
            .unwrap()
            .replace("{\"apiKey\":[]}", "{\"key\":[]}");
        *doc = serde_json::from_str(&text).unwrap();
    });
    assert_eq!(findings, []);
}

// --- request parameters ---

#[test]
fn if_none_match_stays_optional() {
    let findings = mutated(|doc| {
        for param in at(doc, &format!("{ZONES}/get/parameters"))
            .as_array_mut()
            .unwrap()
        {
            if param["name"] == "If-None-Match" {
                param["required"] = json!(true);
            }
        }
    });
    assert_only(&findings, Rule::RequestParameterBecameRequired, LIST_ZONES);
    assert_detail(&findings, "the parameter became required");
    assert!(findings[0]
        .location
        .ends_with("header parameter If-None-Match"));
}

#[test]
fn no_new_required_header() {
    let findings = mutated(|doc| {
        let params = at(doc, &format!("{PROFILE}/delete/parameters"));
        params.as_array_mut().unwrap().push(json!({
            "name": "If-Match", "in": "header", "required": true,
            "schema": {"$ref": "#/components/schemas/EntityTag"}
        }));
    });
    assert_only(&findings, Rule::NewRequiredRequestParameter, DELETE_PROFILE);
    assert!(findings[0].location.ends_with("header parameter If-Match"));
}

#[test]
fn parameters_stay() {
    let findings = mutated(|doc| {
        let params = at(doc, &format!("{ZONES}/get/parameters"))
            .as_array_mut()
            .unwrap();
        params.retain(|p| p["name"] != "X-Request-Id");
    });
    assert_only(&findings, Rule::RequestParameterRemoved, LIST_ZONES);
}

#[test]
fn profile_id_pattern_is_not_narrowed() {
    let findings = mutated(|doc| {
        *at(doc, &format!("{SCHEMAS}/ProfileId/pattern")) = json!("^prof_[0-9A-Z]{26}$");
    });
    assert_only(&findings, Rule::PatternChanged, DELETE_PROFILE);
    assert!(findings[0].location.ends_with("path parameter profileId"));
}

#[test]
fn request_types_stay() {
    let findings = mutated(|doc| *at(doc, &format!("{SCHEMAS}/ProfileId/type")) = json!("integer"));
    assert_only(&findings, Rule::TypeChanged, DELETE_PROFILE);
}

/// A query parameter the real document does not have, to hold the rules of request inputs.
fn with_query(schema: Value) -> impl FnOnce(&mut Value) {
    move |doc| {
        let params = at(doc, &format!("{ZONES}/get/parameters"));
        params.as_array_mut().unwrap().push(json!({
            "name": "filter", "in": "query", "required": false, "schema": schema
        }));
    }
}

fn query_schema(doc: &mut Value) -> &mut Value {
    let params = at(doc, &format!("{ZONES}/get/parameters"))
        .as_array_mut()
        .unwrap();
    let filter = params.iter_mut().find(|p| p["name"] == "filter").unwrap();
    &mut filter["schema"]
}

#[test]
fn request_bounds_do_not_tighten() {
    let cases = [
        ("maxLength", json!(10), Rule::MaxLengthDecreased),
        ("minLength", json!(3), Rule::MinLengthIncreased),
        ("maximum", json!(50), Rule::MaximumDecreased),
        ("minimum", json!(5), Rule::MinimumIncreased),
        ("maxItems", json!(2), Rule::MaxItemsDecreased),
        ("minItems", json!(2), Rule::MinItemsIncreased),
    ];
    for (keyword, tighter, rule) in cases {
        let schema = json!({
            "type": ["string", "integer", "array"],
            "maxLength": 20, "minLength": 1, "maximum": 100, "minimum": 1,
            "maxItems": 5, "minItems": 1
        });
        let findings = prepared_then_mutated(with_query(schema), |doc| {
            query_schema(doc)[keyword] = tighter;
        });
        assert_only(
            &findings,
            rule,
            &format!("{LIST_ZONES} query parameter filter"),
        );
    }
    // Loosening a request input is fine.
    let findings = prepared_then_mutated(
        with_query(json!({"type": "string", "maxLength": 5})),
        |doc| {
            query_schema(doc)["maxLength"] = json!(50);
        },
    );
    assert_eq!(findings, []);
}

#[test]
fn request_enum_values_stay() {
    let schema = json!({"type": "string", "enum": ["asc", "desc"]});
    let findings = prepared_then_mutated(with_query(schema), |doc| {
        query_schema(doc)["enum"] = json!(["asc"]);
    });
    assert_only(&findings, Rule::RequestEnumValueRemoved, LIST_ZONES);
    assert_detail(&findings, "value(s) [\"desc\"] are no longer accepted");
}

#[test]
fn request_union_branches_stay() {
    let schema = json!({"anyOf": [{"$ref": "#/components/schemas/ZoneId"}, {"type": "integer"}]});
    let findings = prepared_then_mutated(with_query(schema), |doc| {
        query_schema(doc)["anyOf"] = json!([{"$ref": "#/components/schemas/ZoneId"}]);
    });
    assert_only(&findings, Rule::RequestUnionBranchRemoved, LIST_ZONES);
}

#[test]
fn request_formats_stay() {
    let findings = prepared_then_mutated(with_query(json!({"type": "string"})), |doc| {
        query_schema(doc)["format"] = json!("uuid");
    });
    assert_only(&findings, Rule::FormatChanged, LIST_ZONES);
}

// --- request bodies (the real document has none yet) ---

const CREATE_PROFILE: &str = "POST /api/v1/applications/profiles/{profileId}";

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
    at(doc, SCHEMAS)["Tag"] = json!({
        "type": "object", "properties": {"key": {"type": "string"}}
    });
}

fn body_schema(doc: &mut Value) -> &mut Value {
    at(
        doc,
        &format!("{PROFILE}/post/requestBody/content/application~1json/schema"),
    )
}

#[test]
fn request_properties_do_not_become_required() {
    let findings = prepared_then_mutated(with_body, |doc| {
        body_schema(doc)["required"] = json!(["name"]);
    });
    assert_only(
        &findings,
        Rule::RequestPropertyBecameRequired,
        CREATE_PROFILE,
    );
    assert_detail(&findings, "property \"name\" became required");
}

#[test]
fn no_new_required_request_property() {
    let findings = prepared_then_mutated(with_body, |doc| {
        let tag = at(doc, &format!("{SCHEMAS}/Tag"));
        tag["properties"]["value"] = json!({"type": "string"});
        tag["required"] = json!(["value"]);
    });
    assert_only(&findings, Rule::NewRequiredRequestProperty, CREATE_PROFILE);
    assert_detail(&findings, "new required property \"tags[].value\"");
}

#[test]
fn request_bodies_stay_optional() {
    let findings = prepared_then_mutated(with_body, |doc| {
        *at(doc, &format!("{PROFILE}/post/requestBody/required")) = json!(true);
    });
    assert_only(&findings, Rule::RequestBodyBecameRequired, CREATE_PROFILE);
}

#[test]
fn request_media_types_stay() {
    let findings = prepared_then_mutated(with_body, |doc| {
        let content = at(doc, &format!("{PROFILE}/post/requestBody/content"));
        let json = content
            .as_object_mut()
            .unwrap()
            .remove("application/json")
            .unwrap();
        content["application/merge-patch+json"] = json;
    });
    assert_only(&findings, Rule::RequestMediaTypeRemoved, CREATE_PROFILE);
}

// --- $ref cycles and allOf ---

#[test]
fn recursive_schemas_end_and_are_compared() {
    let prepare = |doc: &mut Value| {
        at(doc, SCHEMAS)["Node"] = json!({"allOf": [
            {"$ref": "#/components/schemas/Named"},
            {"type": "object", "properties": {"children": {
                "type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}
        ]});
        at(doc, SCHEMAS)["Named"] = json!({
            "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}
        });
        // A cycle of bare refs too: it must not hang.
        at(doc, SCHEMAS)["Loop"] = json!({"$ref": "#/components/schemas/Loop2"});
        at(doc, SCHEMAS)["Loop2"] = json!({"$ref": "#/components/schemas/Loop"});
        at(doc, "/paths")["/api/v1/tree"] = json!({"get": {
            "operationId": "tree",
            "responses": {"200": {"description": "The tree.", "content": {"application/json": {
                "schema": {"type": "object", "properties": {
                    "root": {"$ref": "#/components/schemas/Node"},
                    "loop": {"$ref": "#/components/schemas/Loop"}
                }}
            }}}}
        }});
    };
    let findings = prepared_then_mutated(prepare, |doc| {
        remove(doc, &format!("{SCHEMAS}/Named/properties/name"));
    });
    assert_only(
        &findings,
        Rule::ResponsePropertyRemoved,
        "GET /api/v1/tree 200",
    );
    assert_detail(&findings, "property \"root.name\" was removed");
}

// --- additive changes pass ---

#[test]
fn a_new_optional_response_property_passes() {
    let findings = mutated(|doc| {
        let properties = at(doc, &format!("{SCHEMAS}/ZoneList/properties"));
        properties["next"] = json!({"type": ["string", "null"], "description": "Next page."});
    });
    assert_eq!(findings, []);
}

#[test]
fn a_new_operation_and_path_pass() {
    let findings = mutated(|doc| {
        let delete = at(doc, &format!("{PROFILE}/delete")).clone();
        at(doc, "/paths")["/api/v1/applications/profiles"] = json!({"get": delete});
        let mut post = at(doc, &format!("{PROVIDERS}/get")).clone();
        post["operationId"] = json!("createProvider");
        at(doc, PROVIDERS)["post"] = post;
    });
    assert_eq!(findings, []);
}

#[test]
fn a_new_optional_query_parameter_and_a_new_status_pass() {
    let findings = mutated(|doc| {
        with_query(json!({"type": "string", "maxLength": 10}))(doc);
        // 410 is a status the document does not have (409 came with `Idempotency-Key`).
        let gone = at(doc, &format!("{PROFILE}/delete/responses/404")).clone();
        let responses = at(doc, &format!("{PROFILE}/delete/responses"));
        assert!(
            responses.get("410").is_none(),
            "410 is documented now; pick another"
        );
        responses["410"] = gone;
        let headers = at(doc, &format!("{ZONES}/get/responses/200/headers"));
        headers["X-Next"] = json!({"schema": {"type": "string"}, "required": false});
    });
    assert_eq!(findings, []);
}

#[test]
fn documentation_edits_new_codes_and_deprecation_pass() {
    let findings = mutated(|doc| {
        *at(doc, &format!("{ZONES}/get/summary")) = json!("Zones of a region");
        *at(doc, &format!("{ZONES}/get/description")) = json!("Rewritten.");
        at(doc, &format!("{ZONES}/head"))["deprecated"] = json!(true);
        at(doc, &format!("{SCHEMAS}/ZoneList"))["example"] = json!({"data": []});
        let codes = at(doc, &format!("{SCHEMAS}/KnownErrorCode/enum"));
        codes.as_array_mut().unwrap().push(json!("conflict"));
        at(doc, SCHEMAS)["Profile"] = json!({"type": "object"});
        remove_item(doc, &format!("{SCHEMAS}/ListingStatus/enum"), "success");
    });
    assert_eq!(findings, []);
}

#[test]
fn renaming_a_path_parameter_passes() {
    let findings = mutated(|doc| {
        let item = at(doc, "/paths").as_object_mut().unwrap();
        let profile = item
            .remove("/api/v1/applications/profiles/{profileId}")
            .unwrap();
        let text = serde_json::to_string(&profile).unwrap();
        let text = text.replace("\"name\":\"profileId\"", "\"name\":\"id\"");
        item.insert(
            "/api/v1/applications/profiles/{id}".into(),
            serde_json::from_str(&text).unwrap(),
        );
    });
    assert_eq!(findings, []);
}

#[test]
fn paths_outside_v1_are_not_held() {
    let prepare = |doc: &mut Value| {
        let providers = at(doc, PROVIDERS).clone();
        at(doc, "/paths")["/api/v2/providers"] = providers;
    };
    let findings = prepared_then_mutated(prepare, |doc| {
        remove(doc, "/paths/~1api~1v2~1providers");
    });
    assert_eq!(findings, [], "a baseline's /api/v2 path is not held");
    let findings = prepared_then_mutated(prepare, |doc| {
        remove(doc, "/paths/~1api~1v2~1providers");
        remove(doc, PROVIDERS);
    });
    assert_only(&findings, Rule::PathRemoved, "/api/v1/providers");
    assert_eq!(findings.len(), 1);
}

// --- the command ---

/// A scratch repository with `release/v1.0.0/openapi.json` (the real document, unless
/// `baseline` is false) and `openapi.json`.
fn scratch(name: &str, baseline: bool, current: &Value) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("appzone-api-compat-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("release/v1.0.0")).unwrap();
    if baseline {
        let text = serde_json::to_string_pretty(&real()).unwrap();
        std::fs::write(root.join("release/v1.0.0/openapi.json"), text).unwrap();
    }
    std::fs::write(root.join("openapi.json"), current.to_string()).unwrap();
    root
}

#[test]
fn the_command_fails_naming_the_rule() {
    let mut current = real();
    remove(
        &mut current,
        &format!("{SCHEMAS}/ZoneList/properties/message"),
    );
    let root = scratch("broken", true, &current);
    let result = run_in(&root);
    std::fs::remove_dir_all(&root).unwrap();
    let err = format!("{:#}", result.unwrap_err());
    assert!(err.contains("response-property-removed"), "{err}");
}

#[test]
fn the_command_passes_a_kept_document() {
    let root = scratch("kept", true, &real());
    let result = run_in(&root);
    std::fs::remove_dir_all(&root).unwrap();
    result.unwrap();
}

#[test]
fn the_command_fails_without_a_baseline() {
    let root = scratch("none", false, &real());
    let result = run_in(&root);
    std::fs::remove_dir_all(&root).unwrap();
    let err = format!("{:#}", result.unwrap_err());
    assert!(
        err.contains("no released baseline under release/*/openapi.json"),
        "{err}"
    );
}
