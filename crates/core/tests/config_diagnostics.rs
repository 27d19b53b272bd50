//! Config errors point at file, line and column, and one pass reports every
//! independent problem.

use std::collections::HashMap;

use connecta_core::config::{
    ConnectorKind, CredentialScheme, McpTransport, STARTER_CONFIG, parse_config,
};

fn env() -> HashMap<String, String> {
    HashMap::from([("TOKEN".to_string(), "0123456789abcdef-token".to_string())])
}

#[test]
fn the_starter_config_parses() {
    let c = parse_config(STARTER_CONFIG, "connecta.toml", &env()).expect("starter parses");
    assert_eq!(c.connectors.len(), 1);
    assert_eq!(c.connectors[0].id, "demo");
    assert!(c.auth.open);
}

#[test]
fn the_starter_configs_commented_api_connector_parses_once_uncommented() {
    let start = STARTER_CONFIG
        .find("# An HTTP API")
        .expect("the starter shows an api connector");
    let uncommented: String = STARTER_CONFIG[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.strip_prefix("# ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let c = parse_config(
        &format!("[auth]\nopen = true\n{uncommented}"),
        "connecta.toml",
        &env(),
    )
    .expect("the api example parses");
    assert_eq!(c.connectors[0].id, "weather");
    let ConnectorKind::Api(api) = &c.connectors[0].kind else {
        panic!("an api connector")
    };
    assert!(!api.allow_private_network, "private networks stay refused");
    assert_eq!(api.tools[0].name, "get_forecast");
    assert!(c.connectors[0].credential.is_some());
}

#[test]
fn typo_bad_type_and_missing_env_are_all_reported_with_positions() {
    let text = r#"[server]
listen = "127.0.0.1:9000"

[auth]
bearer_tokens = ["${MISSING_TOKEN}"]

[[connector]]
id = "notes"
comand = "connecta"
timeout_ms = "fast"
"#;
    let err = parse_config(text, "bad.toml", &env()).expect_err("must fail");
    let rendered = err.to_string();
    assert!(
        rendered.contains("bad.toml:5:18: environment variable MISSING_TOKEN is not set"),
        "{rendered}"
    );
    assert!(
        rendered.contains("bad.toml:9:1: unknown key `comand`"),
        "{rendered}"
    );
    assert!(
        rendered.contains("bad.toml:10:14: `timeout_ms`: invalid type"),
        "{rendered}"
    );
    assert!(err.diagnostics.len() >= 3, "{rendered}");
}

#[test]
fn lowering_errors_have_positions_too() {
    let text = r#"[[connector]]
id = "a.b"
command = "x"

[[connector]]
id = "ok"
kind = "mcp"
"#;
    let err = parse_config(text, "c.toml", &env()).expect_err("must fail");
    let rendered = err.to_string();
    assert!(
        rendered.contains("c.toml:2:6: connector id \"a.b\""),
        "{rendered}"
    );
    assert!(
        rendered.contains("needs `url` (streamable HTTP) or `command` (stdio)"),
        "{rendered}"
    );
}

#[test]
fn env_interpolation_reaches_headers_and_secrets_stay_hidden() {
    let text = r#"[[connector]]
id = "everything"
url = "http://127.0.0.1:3001/mcp"
headers = { Authorization = "Bearer ${TOKEN}" }
"#;
    let c = parse_config(text, "c.toml", &env()).expect("parses");
    let ConnectorKind::Mcp(m) = &c.connectors[0].kind else {
        panic!("mcp connector expected")
    };
    let McpTransport::Http { headers, .. } = &m.transport else {
        panic!("http transport expected")
    };
    assert_eq!(headers[0].1.expose(), "Bearer 0123456789abcdef-token");
    assert!(!format!("{c:?}").contains("0123456789abcdef-token"));
}

#[test]
fn open_endpoint_is_refused_beyond_loopback() {
    let text = "[server]\nlisten = \"0.0.0.0:8787\"\n[auth]\nopen = true\n";
    let err = parse_config(text, "c.toml", &env()).expect_err("must fail");
    assert!(
        err.to_string()
            .contains("c.toml:4:8: auth.open = true is refused"),
        "{err}"
    );
}

#[test]
fn syntax_errors_are_located() {
    let err = parse_config("[server\nlisten = 1", "s.toml", &env()).expect_err("must fail");
    assert_eq!(err.diagnostics[0].line, 1);
}

#[test]
fn api_connectors_lower_with_validation() {
    let text = r#"[[connector]]
id = "weather"
kind = "api"
base_url = "https://api.weather.example"
[[connector.tool]]
name = "get_forecast"
description = "Forecast for a place"
read_only = true
method = "GET"
path = "/forecast/{city}"
input_schema = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
[[connector.tool]]
name = "broken"
description = "x"
path = "/x/{nope}"
input_schema = { type = "object" }
"#;
    let err = parse_config(text, "api.toml", &env()).expect_err("second tool lacks read_only");
    let r = err.to_string();
    assert!(r.contains("needs `read_only"), "{r}");
}

#[test]
fn a_credential_cannot_be_shadowed_by_a_header_or_argument() {
    let text = r#"[[connector]]
id = "gh"
kind = "api"
base_url = "https://api.github.example"
headers = { authorization = "Bearer static" }
[connector.credential]
label = "GitHub token"
[[connector.tool]]
name = "me"
description = "Who am I"
read_only = true
path = "/user"
headers = { Authorization = "x" }
header_args = { token = "AUTHORIZATION" }
input_schema = { type = "object", properties = { token = { type = "string" } } }

[[connector]]
id = "keyed"
kind = "api"
base_url = "https://api.keyed.example"
[connector.credential]
placement = "query"
query_param = "api_key"
[[connector.tool]]
name = "q"
description = "Query"
read_only = true
path = "/q"
input_schema = { type = "object", properties = { api_key = { type = "string" } } }

[[connector]]
id = "child"
command = "some-server"
[connector.credential]
label = "Token"
"#;
    let err = parse_config(text, "shadow.toml", &env()).expect_err("shadowing is refused");
    let r = err.to_string();
    assert!(r.contains("header \"Authorization\" in `headers`"), "{r}");
    assert!(r.contains("tool \"me\": header \"Authorization\""), "{r}");
    assert!(
        r.contains("a header argument sent as \"Authorization\""),
        "{r}"
    );
    assert!(r.contains("the argument \"api_key\""), "{r}");
    assert!(r.contains("give a stdio child its secret with env"), "{r}");
    assert!(
        r.contains("shadow.toml:6"),
        "located at the credential table: {r}"
    );
}

#[test]
fn search_terms_are_normalized_and_bad_ones_are_located() {
    let text = r#"[auth]
open = true

[[connector]]
id = "desk"
command = "x"
search_terms = { Closing = "update", open = "create" }
"#;
    let c = parse_config(text, "c.toml", &env()).expect("parses");
    // Normalized as the index and the ranker see words ("closing" folds
    // to the stem of "close").
    let term = |w: &str| connecta_core::search::search_term(w).expect("a word");
    assert!(
        c.connectors[0]
            .search_terms
            .contains(&(term("close"), term("update"))),
        "{:?}",
        c.connectors[0].search_terms
    );
    assert_eq!(c.connectors[0].search_terms.len(), 2);

    let text = r#"[auth]
open = true

[[connector]]
id = "desk"
command = "x"
search_terms = { close = "update ticket", up = "create", pods = "pod" }
"#;
    let err = parse_config(text, "c.toml", &env()).expect_err("must fail");
    let rendered = err.to_string();
    assert!(
        rendered.contains(
            "c.toml:7:26: search_terms: \"close\" = \"update ticket\" needs one word on each side"
        ),
        "{rendered}"
    );
    assert!(
        rendered.contains("search_terms: \"up\" = \"create\" needs one word"),
        "{rendered}"
    );
    assert!(
        rendered.contains("search_terms: \"pods\" = \"pod\" maps a word to itself"),
        "{rendered}"
    );
    assert_eq!(err.diagnostics.len(), 3, "{rendered}");
}

#[test]
fn a_query_credential_goes_as_is_and_refuses_bearer() {
    let connector = |scheme: &str| {
        format!(
            "[[connector]]\nid = \"keyed\"\nkind = \"api\"\nbase_url = \"https://api.keyed.example\"\n[connector.credential]\nplacement = \"query\"\nquery_param = \"api_key\"\n{scheme}[[connector.tool]]\nname = \"q\"\ndescription = \"Query\"\nread_only = true\npath = \"/q\"\ninput_schema = {{ type = \"object\" }}\n"
        )
    };
    let config = parse_config(&connector(""), "q.toml", &env()).expect("valid");
    let slot = config.connectors[0].credential.as_ref().expect("a slot");
    assert_eq!(slot.scheme, CredentialScheme::Raw);
    let err = parse_config(&connector("scheme = \"bearer\"\n"), "q.toml", &env())
        .expect_err("bearer in a query is refused");
    let r = err.to_string();
    assert!(
        r.contains("q.toml:8:10: a credential in the query goes as is"),
        "{r}"
    );
}

#[test]
fn overrides_on_an_api_connector_are_an_error_where_they_are() {
    let text = "[[connector]]\nid = \"api1\"\nkind = \"api\"\nbase_url = \"https://api.example\"\noverrides.r = { destructive = true }\n[[connector.tool]]\nname = \"r\"\ndescription = \"Read\"\nread_only = true\npath = \"/r\"\ninput_schema = { type = \"object\" }\n";
    let err = parse_config(text, "o.toml", &env()).expect_err("overrides are refused");
    let r = err.to_string();
    assert!(
        r.contains("o.toml:5:15: connector \"api1\": `overrides` do not apply to an api connector"),
        "{r}"
    );
}
