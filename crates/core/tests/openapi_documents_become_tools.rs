//! `kind = "openapi"` at config load: real public documents (a trimmed
//! GitHub REST description, OpenAPI 3.0 JSON; the Swagger Petstore, 3.0
//! YAML) and a 3.1 document become `api` tools with the method's
//! classification, parameters routed where the document puts them, and
//! input schemas whose `$ref`s resolve inside them; bad documents are
//! refused with the document's own location.

use std::collections::HashMap;

use connecta_core::config::{
    ApiConfig, Config, ConfigError, ConnectorKind, HttpMethod, STARTER_CONFIG,
    parse_config_with_files,
};
use serde_json::{Value, json};

const GITHUB: &str = include_str!("../../connecta/tests/fixtures/openapi/github-issues.json");
const PETSTORE: &str = include_str!("../../connecta/tests/fixtures/openapi/petstore.yaml");

fn env() -> HashMap<String, String> {
    HashMap::new()
}

fn files(extra: &[(&str, &str)]) -> HashMap<String, String> {
    let mut f = HashMap::from([
        ("github.json".to_owned(), GITHUB.to_owned()),
        ("petstore.yaml".to_owned(), PETSTORE.to_owned()),
    ]);
    for (k, v) in extra {
        f.insert((*k).to_owned(), (*v).to_owned());
    }
    f
}

fn connector(spec: &str, extra: &str) -> String {
    format!(
        "[[connector]]\nid = \"api\"\nkind = \"openapi\"\nspec = \"{spec}\"\nbase_url = \"https://api.example.com/v3\"\n{extra}"
    )
}

fn load(text: &str, extra: &[(&str, &str)]) -> Result<Config, ConfigError> {
    parse_config_with_files(text, "c.toml", &env(), &files(extra))
}

fn api(c: &Config) -> &ApiConfig {
    match &c.connectors[0].kind {
        ConnectorKind::Api(a) => a,
        other => panic!("not an api connector: {other:?}"),
    }
}

/// Every `$ref` in a schema points at something inside it.
fn refs_resolve(schema: &Value) {
    fn walk(v: &Value, root: &Value) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(r)) = o.get("$ref") {
                    let p = r.strip_prefix('#').expect("local ref");
                    assert!(root.pointer(p).is_some(), "{r} does not resolve");
                }
                for (k, v) in o {
                    if !matches!(
                        k.as_str(),
                        "enum" | "const" | "default" | "examples" | "example"
                    ) {
                        walk(v, root);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, root)),
            _ => {}
        }
    }
    walk(schema, schema);
}

#[test]
fn the_github_issues_description_becomes_fifty_eight_tools() {
    let c = load(&connector("github.json", ""), &[]).expect("loads");
    let a = api(&c);
    assert_eq!(a.spec.as_deref(), Some("github.json"));
    assert_eq!(c.connectors[0].kind.as_str(), "openapi");
    assert_eq!(a.tools.len(), 58);
    let reads = a.tools.iter().filter(|t| t.read_only).count();
    assert_eq!(reads, 27, "GET is read-only, everything else is not");
    for t in &a.tools {
        assert_eq!(t.read_only, t.method == HttpMethod::Get, "{}", t.name);
        assert!(!t.description.is_empty(), "{}", t.name);
        assert_eq!(t.input_schema["additionalProperties"], false, "{}", t.name);
        refs_resolve(&t.input_schema);
    }
    let get = a
        .tools
        .iter()
        .find(|t| t.name == "issues_get")
        .expect("issues/get");
    assert_eq!(get.path, "/repos/{owner}/{repo}/issues/{issue_number}");
    assert_eq!(get.title.as_deref(), Some("Get an issue"));
    assert_eq!(
        get.input_schema["required"],
        json!(["owner", "repo", "issue_number"])
    );
    assert_eq!(
        get.input_schema["properties"]["issue_number"]["type"],
        "integer"
    );
    let list = a
        .tools
        .iter()
        .find(|t| t.name == "issues_list_for_repo")
        .expect("list");
    assert!(list.query.contains(&"state".to_owned()), "{:?}", list.query);
    assert!(list.query.contains(&"per_page".to_owned()));
    // A JSON object body becomes one argument per member.
    let create = a
        .tools
        .iter()
        .find(|t| t.name == "issues_create")
        .expect("create");
    assert_eq!(create.method, HttpMethod::Post);
    assert!(!create.read_only);
    assert!(
        create.body.contains(&"title".to_owned()),
        "{:?}",
        create.body
    );
    assert!(create.body_arg.is_none());
    let required = create.input_schema["required"]
        .as_array()
        .expect("required");
    assert!(required.contains(&json!("title")), "{required:?}");
    // 3.0's `nullable` is 3.1's `"null"` type.
    let milestone = &create.input_schema["properties"]["milestone"];
    assert!(milestone.to_string().contains("null"), "{milestone}");
}

#[test]
fn include_and_exclude_by_operation_id_name_and_tag() {
    let c = load(
        &connector(
            "github.json",
            "include_tools = [\"issues/get*\", \"issues_list_for_repo\"]\nexclude_tools = [\"issues/get-label\"]\n",
        ),
        &[],
    )
    .expect("loads");
    let mut names: Vec<&str> = api(&c).tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "issues_get",
            "issues_get_comment",
            "issues_get_event",
            "issues_get_milestone",
            "issues_get_parent",
            "issues_list_for_repo"
        ]
    );
    // Applied while lowering; curation has nothing left to filter.
    assert!(c.connectors[0].include_tools.is_empty());
    let c = load(
        &connector("petstore.yaml", "include_tags = [\"store\"]\n"),
        &[],
    )
    .expect("loads");
    let names: Vec<&str> = api(&c).tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["getInventory", "placeOrder", "getOrderById", "deleteOrder"]
    );
    let c = load(
        &connector("petstore.yaml", "exclude_tags = [\"pet\", \"user\"]\n"),
        &[],
    )
    .expect("loads");
    assert_eq!(api(&c).tools.len(), 4);
}

#[test]
fn the_petstore_yaml_needs_its_octet_stream_upload_excluded() {
    let e = load(&connector("petstore.yaml", ""), &[]).expect_err("uploadFile has no JSON body");
    let text = e.to_string();
    assert!(
        text.contains("petstore.yaml at /paths/~1pet~1{petId}~1uploadImage/post/requestBody")
            || text.contains("uploadFile"),
        "{text}"
    );
    assert_eq!(e.diagnostics.len(), 1, "{text}");
    assert_eq!(e.diagnostics[0].line, 4, "reported at the spec key: {text}");
    let c = load(
        &connector("petstore.yaml", "exclude_tools = [\"uploadFile\"]\n"),
        &[],
    )
    .expect("loads");
    let a = api(&c);
    assert_eq!(a.tools.len(), 18);
    let add = a.tools.iter().find(|t| t.name == "addPet").expect("addPet");
    assert_eq!(add.method, HttpMethod::Post);
    assert_eq!(
        add.body,
        ["id", "name", "category", "photoUrls", "tags", "status"]
    );
    assert_eq!(add.input_schema["required"], json!(["name", "photoUrls"]));
    assert_eq!(
        add.input_schema["properties"]["category"],
        json!({"$ref": "#/$defs/Category"})
    );
    assert!(add.input_schema["$defs"]["Tag"].is_object());
    // A body that is an array is one `body` argument.
    let list = a
        .tools
        .iter()
        .find(|t| t.name == "createUsersWithListInput")
        .expect("createUsersWithListInput");
    assert_eq!(list.body_arg.as_deref(), Some("body"));
    assert_eq!(list.input_schema["properties"]["body"]["type"], "array");
    // Header parameters go to headers.
    let delete = a
        .tools
        .iter()
        .find(|t| t.name == "deletePet")
        .expect("deletePet");
    assert_eq!(
        delete.header_args,
        [("api_key".to_owned(), "api_key".to_owned())]
    );
    assert_eq!(delete.input_schema["required"], json!(["petId"]));
}

#[test]
fn overrides_change_the_classification_of_one_operation() {
    let c = load(
        &connector(
            "petstore.yaml",
            "exclude_tools = [\"uploadFile\"]\noverrides.loginUser = { read_only = false }\noverrides.placeOrder = { read_only = true }\n",
        ),
        &[],
    )
    .expect("loads");
    let a = api(&c);
    let get = |n: &str| a.tools.iter().find(|t| t.name == n).expect(n);
    assert!(!get("loginUser").read_only);
    assert!(get("placeOrder").read_only);
    assert!(get("getPetById").read_only);
    assert!(!get("deletePet").read_only);
    let e = load(
        &connector(
            "github.json",
            "overrides.\"issues/create\" = { read_only = true }\noverrides.nope = { destructive = true }\n",
        ),
        &[],
    )
    .expect_err("unknown override names");
    let text = e.to_string();
    assert!(text.contains("named \"issues_create\""), "{text}");
    assert!(
        text.contains("overrides.\"nope\" names no operation"),
        "{text}"
    );
}

const DOC31: &str = r##"{
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "1"},
  "paths": {
    "/trees/{id}": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
      "get": {
        "summary": "Get a tree",
        "parameters": [
          {"$ref": "#/components/parameters/Depth"},
          {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
          {"name": "session", "in": "cookie", "schema": {"type": "string"}},
          {"name": "Accept", "in": "header", "schema": {"type": "string"}}
        ]
      },
      "put": {
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}
      },
      "head": {}
    }
  },
  "components": {
    "parameters": {"Depth": {"name": "depth", "in": "query", "schema": {"type": ["integer", "null"], "minimum": 0}}},
    "schemas": {
      "Node": {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"},
        "id": {"type": "string", "readOnly": true},
        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
      }}
    }
  }
}"##;

#[test]
fn a_three_one_document_with_shared_parameters_and_a_recursive_schema() {
    let c = load(&connector("t.json", ""), &[("t.json", DOC31)]).expect("loads");
    let a = api(&c);
    let names: Vec<&str> = a.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["get_trees_id", "put_trees_id", "head_trees_id"]);
    let get = &a.tools[0];
    assert!(get.read_only);
    assert_eq!(get.description, "Get a tree");
    assert_eq!(get.query, ["depth"]);
    assert_eq!(
        get.header_args,
        [("X-Trace".to_owned(), "X-Trace".to_owned())]
    );
    let props = get.input_schema["properties"].as_object().expect("props");
    assert_eq!(
        props.keys().collect::<Vec<_>>(),
        ["id", "depth", "X-Trace"],
        "the optional cookie and the Accept header are not arguments"
    );
    assert_eq!(props["depth"]["type"], json!(["integer", "null"]));
    let put = &a.tools[1];
    assert!(!put.read_only);
    assert_eq!(put.description, "PUT /trees/{id}");
    assert_eq!(
        put.body,
        ["name", "children"],
        "readOnly members are not sent"
    );
    assert_eq!(put.input_schema["required"], json!(["id", "name"]));
    assert_eq!(
        put.input_schema["$defs"]["Node"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    refs_resolve(&put.input_schema);
    let head = &a.tools[2];
    assert_eq!(head.method, HttpMethod::Head);
    assert!(head.read_only);
}

#[test]
fn spec_errors_name_the_documents_own_location() {
    let check = |doc: &str, name: &str, want: &str| {
        let e = load(&connector(name, ""), &[(name, doc)]).expect_err(want);
        let text = e.to_string();
        assert!(text.contains(want), "want {want:?} in:\n{text}");
        assert!(text.starts_with("c.toml:4:"), "at the spec key: {text}");
    };
    check(
        "openapi: 3.1.0\ninfo: {title: t\n",
        "bad.yaml",
        "bad.yaml:3:1: not valid YAML",
    );
    check(
        "{\"openapi\": \"3.1.0\",\n \"info\": }",
        "bad.json",
        "bad.json:2:10: not valid JSON",
    );
    let unresolved = DOC31.replace(
        "#/components/parameters/Depth",
        "#/components/parameters/Gone",
    );
    check(
        &unresolved,
        "u.json",
        "u.json at /paths/~1trees~1{id}/get/parameters/0/$ref: $ref \"#/components/parameters/Gone\" does not resolve",
    );
    let unresolved = DOC31.replace(
        "\"#/components/schemas/Node\"}}}",
        "\"#/components/schemas/Gone\"}}}",
    );
    check(
        &unresolved,
        "s.json",
        "does not resolve: the document has nothing at /components/schemas/Gone",
    );
    let schemaless = DOC31.replace(
        "{\"name\": \"X-Trace\", \"in\": \"header\", \"schema\": {\"type\": \"string\"}}",
        "{\"name\": \"X-Trace\", \"in\": \"header\"}",
    );
    check(
        &schemaless,
        "n.json",
        "n.json at /paths/~1trees~1{id}/get/parameters/1: parameter \"X-Trace\" has neither a schema nor content",
    );
    check(
        "{\"openapi\": \"3.1.0\", \"info\": {\"title\": \"t\", \"version\": \"1\"}, \"paths\": {\"/a\": {\"get\": {\"parameters\": [{\"name\": \"a\", \"in\": \"body\"}]}}}}",
        "v.json",
        "v.json at /paths/~1a/get/parameters/0",
    );
    check("swagger: '2.0'\n", "old.yaml", "Swagger 2.0");
    let e = load(&connector("missing.yaml", ""), &[]).expect_err("missing");
    assert!(e.to_string().contains("missing.yaml cannot be read"), "{e}");
}

#[test]
fn keys_of_other_kinds_are_refused_on_openapi_and_back() {
    let e = load(
        &format!(
            "{}url = \"http://x\"\n[[connector.tool]]\nname = \"t\"\n",
            connector("petstore.yaml", "exclude_tools = [\"uploadFile\"]\n")
        ),
        &[],
    )
    .expect_err("foreign keys");
    let text = e.to_string();
    assert!(text.contains("`url` does not apply"), "{text}");
    assert!(
        text.contains("`[[connector.tool]]` does not apply"),
        "{text}"
    );
    let e = load(
        "[[connector]]\nid = \"a\"\nkind = \"api\"\nbase_url = \"https://x\"\nspec = \"petstore.yaml\"\ninclude_tags = [\"x\"]\n[[connector.tool]]\nname = \"t\"\ndescription = \"d\"\nread_only = true\npath = \"/t\"\ninput_schema = { type = \"object\" }\n",
        &[],
    )
    .expect_err("spec on api");
    let text = e.to_string();
    assert!(text.contains("`spec` does not apply"), "{text}");
    assert!(text.contains("`include_tags` does not apply"), "{text}");
    let e = load(
        "[[connector]]\nid = \"a\"\nkind = \"openapi\"\nbase_url = \"https://x\"\n",
        &[],
    )
    .expect_err("no spec");
    assert!(e.to_string().contains("needs `spec`"), "{e}");
}

#[test]
fn the_starter_configs_commented_openapi_connector_loads_once_uncommented() {
    let start = STARTER_CONFIG
        .find("# An HTTP API described by an OpenAPI")
        .expect("the starter shows an openapi connector");
    let uncommented: String = STARTER_CONFIG[start..]
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.strip_prefix("# ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let c = load(&format!("[auth]\nopen = false\n{uncommented}"), &[]).expect("loads");
    assert_eq!(api(&c).tools.len(), 58, "the issues-tagged operations");
    assert!(c.connectors[0].credential.is_some());
}

#[test]
fn operations_that_cannot_be_called_as_documented_are_errors_until_excluded() {
    let doc = r##"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {
      "/a": {
        "get": {"operationId": "list.items"},
        "post": {"operationId": "list-items"},
        "options": {"operationId": "probe"}
      },
      "/b": {
        "get": {"operationId": "search", "parameters": [
          {"name": "filter", "in": "query", "style": "deepObject", "schema": {"type": "object"}}
        ]},
        "put": {"operationId": "withCookie", "parameters": [
          {"name": "session", "in": "cookie", "required": true, "schema": {"type": "string"}}
        ]}
      }
    }}"##;
    let e = load(&connector("d.json", ""), &[("d.json", doc)]).expect_err("four problems");
    let text = e.to_string();
    assert_eq!(e.diagnostics.len(), 4, "{text}");
    for want in [
        "d.json at /paths/~1a/post: operation \"list-items\" and operation \"list.items\" are both the tool \"list_items\"",
        "d.json at /paths/~1a/options: operation \"probe\" is an OPTIONS operation",
        "d.json at /paths/~1b/get/parameters/0: parameter \"filter\" uses a serialization connecta does not send",
        "d.json at /paths/~1b/put/parameters/0: operation \"withCookie\" needs the cookie \"session\"",
    ] {
        assert!(text.contains(want), "want {want:?} in:\n{text}");
    }
    let c = load(
        &connector(
            "d.json",
            "exclude_tools = [\"list-items\", \"probe\", \"search\", \"withCookie\"]\n",
        ),
        &[("d.json", doc)],
    )
    .expect("loads once excluded");
    let names: Vec<&str> = api(&c).tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["list_items"]);
}
