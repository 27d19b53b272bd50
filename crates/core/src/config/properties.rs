//! Property tests of the config loader, and the checked-in corpus of bad
//! configs in `crates/core/corpus/config/` (each file says, in `# expect:`
//! lines, where and what it must be refused for).
//!
//! The budget is small and bounded: `PROPTEST_CASES` cases per property
//! (256 unless set), and at most five seconds of shrinking on a failure.

use std::collections::HashMap;

use proptest::prelude::*;

use super::load::interpolate;
use super::{ConfigError, NoSpecFiles, Scope, parse_config, parse_config_for};

/// `PROPTEST_CASES` cases (proptest's default reads it; 256 unset).
fn config() -> ProptestConfig {
    ProptestConfig {
        max_shrink_time: 5_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Every diagnostic points inside the text, and says something.
fn located(text: &str, e: &ConfigError) -> Result<(), TestCaseError> {
    let lines = text.split('\n').count();
    prop_assert!(!e.diagnostics.is_empty(), "an error with no diagnostic");
    for d in &e.diagnostics {
        prop_assert!(d.line >= 1 && d.line <= lines, "line {} of {lines}", d.line);
        prop_assert!(d.column >= 1, "column {}", d.column);
        prop_assert!(!d.message.trim().is_empty());
    }
    Ok(())
}

/// Keys of the public shape, each with where it lives.
const KEYS: &[(&str, &str)] = &[
    ("server", "listen"),
    ("server", "data_dir"),
    ("server", "public_url"),
    ("server", "max_request_bytes"),
    ("server", "max_batch_messages"),
    ("server", "request_body_timeout_ms"),
    ("auth", "open"),
    ("auth", "bearer_tokens"),
    ("limits", "result_cap_bytes"),
    ("limits", "stash_caller_quota_bytes"),
    ("approvals", "policy"),
    ("store", "url"),
    ("operator", "secret"),
    ("code", "heap_mib"),
    ("server", "no_such_key"),
];

/// A TOML value of any type, as text.
fn toml_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        "[ -~]{0,24}".prop_map(|s| toml_string(&s)),
        Just("\"${CFG_PROP_UNSET}\"".to_owned()),
        Just("\"http://\"".to_owned()),
        Just("\"http://127.0.0.1:99999/mcp\"".to_owned()),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..3).prop_map(|kv| {
                let parts: Vec<String> = kv.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                format!("{{ {} }}", parts.join(", "))
            }),
        ]
    })
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a JSON string is a TOML basic string")
}

/// A document of known sections and keys with values of any type, and
/// maybe a connector.
fn document() -> impl Strategy<Value = String> {
    let entries = prop::collection::vec((0..KEYS.len(), toml_value()), 0..8);
    let connector = prop::option::of((
        "[a-z]{1,8}",
        prop_oneof![
            toml_value().prop_map(|v| format!("url = {v}")),
            toml_value().prop_map(|v| format!("command = {v}")),
            toml_value().prop_map(|v| format!(
                "kind = \"api\"\nbase_url = {v}\n[[connector.tool]]\nname = \"t\"\ndescription = \"d\"\nread_only = true\npath = \"/x\"\ninput_schema = {{ type = \"object\" }}"
            )),
            toml_value().prop_map(|v| format!(
                "kind = \"api\"\nbase_url = \"https://a.example\"\n[[connector.tool]]\nname = \"t\"\ndescription = \"d\"\nread_only = true\npath = \"/x\"\ninput_schema = {{ type = \"object\", properties = {{ a = {v} }} }}"
            )),
        ],
    ));
    (entries, connector).prop_map(|(entries, connector)| {
        let mut sections: Vec<(&str, Vec<String>)> = Vec::new();
        for (i, value) in entries {
            let (section, key) = KEYS[i];
            let line = format!("{key} = {value}");
            match sections.iter_mut().find(|(s, _)| *s == section) {
                Some((_, lines)) if !lines.iter().any(|l| l.starts_with(&format!("{key} ="))) => {
                    lines.push(line)
                }
                Some(_) => {}
                None => sections.push((section, vec![line])),
            }
        }
        let mut text = String::new();
        for (section, lines) in sections {
            text.push_str(&format!("[{section}]\n{}\n\n", lines.join("\n")));
        }
        if let Some((id, body)) = connector {
            text.push_str(&format!("[[connector]]\nid = \"{id}\"\n{body}\n"));
        }
        text
    })
}

fn no_env() -> HashMap<String, String> {
    HashMap::new()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_text_is_loaded_or_refused_at_located_places(text in "[ -~\n\t\u{e9}\u{1F600}]{0,200}") {
        if let Err(e) = parse_config(&text, "c.toml", &no_env()) {
            located(&text, &e)?;
        }
    }

    #[test]
    fn known_keys_with_values_of_any_type_are_loaded_or_refused_at_located_places(
        text in document()
    ) {
        if let Err(e) = parse_config(&text, "c.toml", &no_env()) {
            located(&text, &e)?;
        }
    }

    #[test]
    fn a_scoped_load_reports_nothing_a_full_load_would_not(text in document()) {
        let full = parse_config(&text, "c.toml", &no_env());
        for scope in [Scope::Store, Scope::Credentials { whole: None }] {
            let scoped = parse_config_for(&text, "c.toml", &no_env(), scope, &NoSpecFiles);
            match (&full, scoped) {
                (Ok(_), scoped) => prop_assert!(scoped.is_ok(), "{scope:?}: {:?}", scoped.err()),
                (Err(full), Err(scoped)) => {
                    for d in &scoped.diagnostics {
                        prop_assert!(full.diagnostics.contains(d), "{scope:?} alone: {d:?}");
                    }
                }
                (Err(_), Ok(_)) => {}
            }
        }
    }

    #[test]
    fn a_secret_is_never_repeated_in_a_diagnostic(
        secret in "zq[a-z0-9 :/@%]{4,30}",
        place in 0usize..6,
    ) {
        let text = [
            "[auth]\nbearer_tokens = [\"${S}\"]\n",
            "[operator]\nsecret = \"${S}\"\n",
            "[store]\nurl = \"${S}\"\n",
            "[[connector]]\nid = \"c\"\nurl = \"${S}\"\n",
            "[[connector]]\nid = \"c\"\nurl = \"https://x.example\"\nheaders = { \"Bad Name\" = \"${S}\" }\n",
            "[[connector]]\nid = \"c\"\nkind = \"api\"\nbase_url = \"${S}\"\n",
        ][place];
        let text = format!("{text}\n[server]\nlisten = 5\n");
        let env = HashMap::from([("S".to_owned(), secret.clone())]);
        let e = parse_config(&text, "c.toml", &env).expect_err("listen = 5 is refused");
        for d in &e.diagnostics {
            prop_assert!(!d.message.contains(&secret), "{:?} repeats the secret", d);
        }
    }

    #[test]
    fn text_without_a_reference_is_left_as_it_is(text in "[^$]{0,64}") {
        prop_assert_eq!(interpolate(&text, &no_env()), Ok(text));
    }

    #[test]
    fn references_are_replaced_and_escapes_kept(
        before in "[^$]{0,16}",
        name in "[A-Z_][A-Z0-9_]{0,8}",
        value in "[^$]{0,16}",
        after in "[^$]{0,16}",
    ) {
        let env = HashMap::from([(name.clone(), value.clone())]);
        let text = format!("{before}${{{name}}}{after}$${{{name}}}");
        prop_assert_eq!(
            interpolate(&text, &env),
            Ok(format!("{before}{value}{after}${{{name}}}"))
        );
    }
}

/// One file of the corpus: its text, the environment its `# env:` lines
/// set, the scope its `# scope:` line names, and its `# expect:` lines
/// (`L:C: words`; none means it loads).
struct Case {
    name: String,
    text: String,
    env: HashMap<String, String>,
    scope: Scope<'static>,
    expect: Vec<String>,
}

fn corpus() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/config");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus/config")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read");
            let mut case = Case {
                name: path
                    .file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned(),
                env: HashMap::new(),
                scope: Scope::Everything,
                expect: Vec::new(),
                text: text.clone(),
            };
            for line in text.lines() {
                if let Some(e) = line.strip_prefix("# expect: ") {
                    case.expect.push(e.to_owned());
                } else if let Some(kv) = line.strip_prefix("# env: ") {
                    let (k, v) = kv.split_once('=').expect("NAME=value");
                    case.env.insert(k.to_owned(), v.to_owned());
                } else if let Some(s) = line.strip_prefix("# scope: ") {
                    case.scope = match s {
                        "store" => Scope::Store,
                        "credentials" => Scope::Credentials { whole: None },
                        other => panic!("unknown scope {other}"),
                    };
                }
            }
            case
        })
        .collect()
}

#[test]
fn the_corpus_of_bad_configs_is_refused_where_it_says() {
    let cases = corpus();
    assert!(cases.len() >= 8, "the corpus lost its files");
    for case in cases {
        let got = parse_config_for(&case.text, &case.name, &case.env, case.scope, &NoSpecFiles);
        match got {
            Ok(_) => assert!(
                case.expect.is_empty(),
                "{} loaded, but should be refused for {:?}",
                case.name,
                case.expect
            ),
            Err(e) => {
                let shown = e.to_string();
                assert!(
                    !case.expect.is_empty(),
                    "{} was refused:\n{shown}",
                    case.name
                );
                for expected in &case.expect {
                    assert!(
                        shown.contains(&format!("{}:{expected}", case.name)),
                        "{}: no `{expected}` in\n{shown}",
                        case.name
                    );
                }
                assert_eq!(
                    e.diagnostics.len(),
                    case.expect.len(),
                    "{}: every problem is written down:\n{shown}",
                    case.name
                );
            }
        }
    }
}
