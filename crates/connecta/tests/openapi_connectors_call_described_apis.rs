//! `kind = "openapi"` end to end, through the real binary: real public
//! OpenAPI documents shipped as fixtures (GitHub's REST description trimmed
//! to the 58 operations tagged `issues`, OpenAPI 3.0 JSON; the Swagger
//! Petstore, OpenAPI 3.0 YAML; and a small 3.1 document) become tools that `search_tools` finds and
//! `call_tool` calls, against a stand-in provider on loopback that echoes
//! each request. Writes cross `call_destructive_tool`; the vault credential
//! is applied; arguments are checked against the schema the document
//! gives; `connecta check` names a bad document's own location.

mod api_support;
mod support;

use std::path::PathBuf;
use std::time::Duration;

use api_support::*;
use serde_json::{Value, json};
use support::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openapi")
        .join(name)
}

async fn call_destructive(client: &Client, address: &str, args: Value) -> (Value, bool) {
    call(
        client,
        "call_destructive_tool",
        json!({"address": address, "args": args, "resultMode": "value", "reason": "test"}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn github_issues_operations_are_found_called_and_writes_need_approval() {
    let provider = start_echo_provider().await;
    let gw = Gateway::start(&format!(
        r#"
[[connector]]
id = "gh"
kind = "openapi"
spec = {spec}
base_url = "http://127.0.0.1:{port}/api"
allow_private_network = true

[connector.credential]
label = "GitHub token"
"#,
        spec = q(&fixture("github-issues.json").display().to_string()),
        port = provider.port
    ));
    let health = gw.wait_catalogs().await;
    assert_eq!(health["connectors"][0]["kind"], "openapi", "{health}");
    assert_eq!(health["connectors"][0]["catalog"]["tools"], 58, "{health}");
    set_credential(&gw.config_path, "gh", GOOD_TOKEN, &[]);
    let client = connect(&gw.url()).await;

    // Every operation is a tool search can page through...
    let (page, err) = call(
        &client,
        "search_tools",
        json!({"connector": "gh", "limit": 100}),
    )
    .await;
    assert!(!err, "{page}");
    assert_eq!(page["total"], 58, "{page}");
    let (page, _) = call(
        &client,
        "search_tools",
        json!({"connector": "gh", "safety": "readOnly", "limit": 100}),
    )
    .await;
    assert_eq!(page["total"], 27, "GET operations are the read-only ones");
    // ...and find by what it does.
    let (page, _) = call(
        &client,
        "search_tools",
        json!({"query": "list issues in a repository", "connector": "gh"}),
    )
    .await;
    let first = page["tools"][0]["address"].as_str().unwrap_or_default();
    assert!(
        page.to_string().contains("gh.issues_list_for_repo"),
        "{page}"
    );
    assert!(first.starts_with("gh.issues_list"), "{page}");
    let (page, _) = call(
        &client,
        "search_tools",
        json!({"query": "lock an issue", "connector": "gh"}),
    )
    .await;
    assert_eq!(page["tools"][0]["address"], "gh.issues_lock", "{page}");

    // A GET with path and query parameters, credential applied last.
    let (v, err) = call_tool(
        &client,
        "gh.issues_get",
        json!({"owner": "octo", "repo": "hello world", "issue_number": 7}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["method"], "GET");
    assert_eq!(v["path"], "/api/repos/octo/hello%20world/issues/7");
    let (v, err) = call_tool(
        &client,
        "gh.issues_list_for_repo",
        json!({"owner": "octo", "repo": "r", "state": "closed", "labels": "bug,ui", "per_page": 5}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["query"], "state=closed&labels=bug%2Cui&per_page=5", "{v}");
    let seen = provider.requests();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter()
            .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {GOOD_TOKEN}"))),
        "{seen:?}"
    );

    // Arguments are checked against the document's schema before a request.
    let (v, err) = call_tool(&client, "gh.issues_get", json!({"owner": "octo"})).await;
    assert!(err);
    assert_eq!(code(&v), "invalid_args", "{v}");
    let (v, err) = call_tool(
        &client,
        "gh.issues_list_for_repo",
        json!({"owner": "o", "repo": "r", "state": "sideways"}),
    )
    .await;
    assert!(err);
    assert_eq!(code(&v), "invalid_args", "the enum is enforced: {v}");
    assert_eq!(provider.requests().len(), 2);

    // A POST is a write: refused by call_tool, made by call_destructive_tool.
    let create = json!({"owner": "octo", "repo": "r", "title": "Crash on start", "labels": ["bug"], "milestone": null});
    let (v, err) = call_tool(&client, "gh.issues_create", create.clone()).await;
    assert!(err);
    assert_eq!(code(&v), "destructive_tool_requires_approval", "{v}");
    assert_eq!(
        v["error"]["nextAction"]["tool"], "call_destructive_tool",
        "{v}"
    );
    assert_eq!(
        provider.requests().len(),
        2,
        "the refusal never reaches the API"
    );
    let (v, err) = call_destructive(&client, "gh.issues_create", create).await;
    assert!(!err, "{v}");
    assert_eq!(v["method"], "POST");
    assert_eq!(v["path"], "/api/repos/octo/r/issues");
    assert_eq!(
        v["body"],
        json!({"title": "Crash on start", "labels": ["bug"], "milestone": null})
    );
    assert_eq!(v["headers"]["content-type"], "application/json");

    // A program reaches the same tools by their shortcut, read-only only.
    let (p, err) = program(
        &client,
        "async () => (await gh.issues_get_label({owner: 'o', repo: 'r', name: 'good first issue'})).path",
    )
    .await;
    assert!(!err, "{p}");
    assert_eq!(
        p["result"], "/api/repos/o/r/labels/good%20first%20issue",
        "{p}"
    );
    let (p, err) = program(
        &client,
        "async () => gh.issues_delete_label({owner: 'o', repo: 'r', name: 'x'})",
    )
    .await;
    assert!(err, "{p}");
    assert_eq!(
        p["error"]["code"], "destructive_tool_requires_approval",
        "{p}"
    );
    assert!(
        provider.requests().iter().all(|r| r.method != "DELETE"),
        "a program cannot delete"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_petstore_yaml_routes_bodies_arrays_and_headers_as_its_document_says() {
    let provider = start_echo_provider().await;
    let gw = Gateway::start(&format!(
        r#"
[[connector]]
id = "pets"
kind = "openapi"
spec = {spec}
base_url = "http://127.0.0.1:{port}/v3"
allow_private_network = true
exclude_tools = ["uploadFile"]
overrides.loginUser = {{ read_only = false }}
"#,
        spec = q(&fixture("petstore.yaml").display().to_string()),
        port = provider.port
    ));
    let health = gw.wait_catalogs().await;
    assert_eq!(health["connectors"][0]["catalog"]["tools"], 18, "{health}");
    let client = connect(&gw.url()).await;

    let (v, err) = call_tool(&client, "pets.getPetById", json!({"petId": 5})).await;
    assert!(!err, "{v}");
    assert_eq!(v["path"], "/v3/pet/5");
    let (v, err) = call_tool(&client, "pets.getPetById", json!({"petId": "five"})).await;
    assert!(err, "an integer path parameter: {v}");
    assert_eq!(code(&v), "invalid_args");
    let (v, err) = call_tool(
        &client,
        "pets.findPetsByTags",
        json!({"tags": ["a", "b c"]}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(
        v["query"], "tags=a&tags=b+c",
        "arrays as repeated keys: {v}"
    );

    // An object body: one argument per member, `$ref`s checked.
    let (v, err) = call_destructive(
        &client,
        "pets.addPet",
        json!({"name": "Rex", "photoUrls": [], "category": {"id": 1, "name": "Dogs"}, "status": "available"}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["method"], "POST");
    assert_eq!(
        v["body"],
        json!({"name": "Rex", "photoUrls": [], "category": {"id": 1, "name": "Dogs"}, "status": "available"})
    );
    let (v, err) = call_destructive(
        &client,
        "pets.addPet",
        json!({"name": "Rex", "photoUrls": [], "category": {"id": "one"}}),
    )
    .await;
    assert!(err, "the referenced Category schema is enforced: {v}");
    assert_eq!(code(&v), "invalid_args");
    // An array body: one `body` argument that is the whole body.
    let (v, err) = call_destructive(
        &client,
        "pets.createUsersWithListInput",
        json!({"body": [{"username": "a"}, {"username": "b"}]}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["body"], json!([{"username": "a"}, {"username": "b"}]));
    // A header parameter is a header.
    let (v, err) = call_destructive(
        &client,
        "pets.deletePet",
        json!({"petId": 9, "api_key": "k-123"}),
    )
    .await;
    assert!(!err, "{v}");
    assert_eq!(v["method"], "DELETE");
    assert_eq!(v["headers"]["api_key"], "k-123");
    // The operator made one GET a write.
    let (v, err) = call_tool(
        &client,
        "pets.loginUser",
        json!({"username": "u", "password": "p"}),
    )
    .await;
    assert!(err);
    assert_eq!(code(&v), "destructive_tool_requires_approval", "{v}");
    assert!(
        !provider
            .requests()
            .iter()
            .any(|r| r.target.contains("login")),
        "refused before the request"
    );
}

/// A small OpenAPI 3.1 document using what 3.1 adds to schemas (type
/// arrays, `null` in a `oneOf`, a recursive `$ref`) and a HEAD operation;
/// its `security` is written as a map, a mistake in a part connecta does
/// not read.
const NOTES_3_1: &str = r##"openapi: 3.1.0
info: {title: Notes, version: "1"}
paths:
  /notes:
    get:
      operationId: listNotes
      summary: List notes
      parameters:
        - {name: tag, in: query, schema: {type: [string, "null"]}}
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 50}}
      responses:
        "200": {description: ok}
      security: {apiKey: []}
    post:
      operationId: createNote
      summary: Create a note
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Note"}
      responses: {"201": {description: created}}
  /notes/{id}:
    head:
      operationId: noteExists
      summary: Whether a note exists
      parameters:
        - {name: id, in: path, required: true, schema: {type: string, pattern: "^[a-z0-9-]+$"}}
      responses: {"200": {description: exists}}
components:
  schemas:
    Note:
      type: object
      required: [title]
      properties:
        title: {type: string, minLength: 1}
        tags: {type: array, items: {type: string}, uniqueItems: true}
        parent: {oneOf: [{$ref: "#/components/schemas/Note"}, {type: "null"}]}
"##;

#[tokio::test(flavor = "multi_thread")]
async fn a_three_one_yaml_document_with_type_arrays_recursion_and_head() {
    let provider = start_echo_provider().await;
    let docs = tempfile::tempdir().expect("tempdir");
    let spec = docs.path().join("notes.yaml");
    std::fs::write(&spec, NOTES_3_1).expect("write");
    let gw = Gateway::start(&format!(
        "[[connector]]\nid = \"notes\"\nkind = \"openapi\"\nspec = {}\nbase_url = \"http://127.0.0.1:{}\"\nallow_private_network = true\n",
        q(&spec.display().to_string()),
        provider.port
    ));
    let health = gw.wait_catalogs().await;
    assert_eq!(health["connectors"][0]["catalog"]["tools"], 3, "{health}");
    let client = connect(&gw.url()).await;

    let (v, err) = call_tool(&client, "notes.listNotes", json!({"tag": null, "limit": 5})).await;
    assert!(!err, "{v}");
    assert_eq!(v["query"], "limit=5", "a null argument is not sent: {v}");
    let (v, err) = call_tool(&client, "notes.listNotes", json!({"limit": 500})).await;
    assert!(err);
    assert_eq!(code(&v), "invalid_args", "{v}");
    let (v, err) = call_tool(&client, "notes.noteExists", json!({"id": "abc"})).await;
    assert!(!err, "HEAD is read-only: {v}");
    assert_eq!(v, json!({"value": null}), "a HEAD answer has no body");
    let (v, err) = call_tool(&client, "notes.noteExists", json!({"id": "a/b"})).await;
    assert!(err);
    assert_eq!(code(&v), "invalid_args", "the pattern is enforced: {v}");
    let note =
        json!({"title": "child", "tags": ["x"], "parent": {"title": "root", "parent": null}});
    let (v, err) = call_tool(&client, "notes.createNote", note.clone()).await;
    assert!(err);
    assert_eq!(code(&v), "destructive_tool_requires_approval", "{v}");
    let (v, err) = call_destructive(
        &client,
        "notes.createNote",
        json!({"title": "child", "parent": {"title": ""}}),
    )
    .await;
    assert!(err, "the recursive schema is checked all the way down: {v}");
    assert_eq!(code(&v), "invalid_args");
    let (v, err) = call_destructive(&client, "notes.createNote", note.clone()).await;
    assert!(!err, "{v}");
    assert_eq!(v["body"], note);
    let seen: Vec<(String, String)> = provider
        .requests()
        .into_iter()
        .map(|r| (r.method, r.target))
        .collect();
    assert_eq!(
        seen,
        [
            ("GET".to_owned(), "/notes?limit=5".to_owned()),
            ("HEAD".to_owned(), "/notes/abc".to_owned()),
            ("POST".to_owned(), "/notes".to_owned()),
        ]
    );
}

fn check(dir: &std::path::Path, config: &str) -> (bool, String, String) {
    let path = dir.join("connecta.toml");
    std::fs::write(&path, config).expect("write config");
    let (status, out, err) = run(
        std::process::Command::new(bin())
            .args(["check", "--config"])
            .arg(&path),
        Duration::from_secs(60),
    );
    (status.success(), out, err)
}

#[test]
fn check_reports_the_documents_problems_at_their_location() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(fixture("petstore.yaml"), dir.path().join("petstore.yaml")).expect("copy");
    let connector = |spec: &str, extra: &str| {
        format!(
            "[auth]\nopen = true\n\n[[connector]]\nid = \"pets\"\nkind = \"openapi\"\nspec = \"{spec}\"\nbase_url = \"https://petstore3.swagger.io/api/v3\"\n{extra}"
        )
    };
    // The document as published has an operation whose body is not JSON.
    let (ok, _, err) = check(dir.path(), &connector("petstore.yaml", ""));
    assert!(!ok);
    assert!(
        err.contains("connecta.toml:7:8: OpenAPI document petstore.yaml at /paths/~1pet~1{petId}~1uploadImage/post/requestBody: operation \"uploadFile\" takes its request body only as application/octet-stream"),
        "{err}"
    );
    // Excluding it, the relative path resolves next to the config.
    let (ok, out, err) = check(
        dir.path(),
        &connector("petstore.yaml", "exclude_tools = [\"uploadFile\"]\n"),
    );
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("connector pets: openapi petstore.yaml at https://petstore3.swagger.io/api/v3 (18 tools)"),
        "{out}"
    );
    // YAML that does not parse: the document's line and column.
    let broken = std::fs::read_to_string(fixture("petstore.yaml"))
        .expect("fixture")
        .replacen("paths:\n  /pet:\n", "paths:\n  /pet:\n  - oops\n", 1);
    std::fs::write(dir.path().join("broken.yaml"), broken).expect("write");
    let (ok, _, err) = check(dir.path(), &connector("broken.yaml", ""));
    assert!(!ok);
    assert!(
        err.contains("OpenAPI document broken.yaml:38:9: not valid YAML: mapping values are not allowed in this context"),
        "where the parser stopped, the line after the stray item: {err}"
    );
    // A reference to a schema that is not there: the pointer of the `$ref`.
    let dangling = std::fs::read_to_string(fixture("petstore.yaml"))
        .expect("fixture")
        .replace(
            "$ref: '#/components/schemas/Category'",
            "$ref: '#/components/schemas/Kind'",
        );
    std::fs::write(dir.path().join("dangling.yaml"), dangling).expect("write");
    let (ok, _, err) = check(
        dir.path(),
        &connector("dangling.yaml", "include_tools = [\"addPet\"]\n"),
    );
    assert!(!ok);
    assert!(
        err.contains("dangling.yaml at /components/schemas/Pet/properties/category/$ref: $ref \"#/components/schemas/Kind\" does not resolve"),
        "{err}"
    );
    // A missing file.
    let (ok, _, err) = check(dir.path(), &connector("nowhere.json", ""));
    assert!(!ok);
    assert!(
        err.contains("the OpenAPI document nowhere.json cannot be read"),
        "{err}"
    );
}
