//! Connector shortcut namespaces (contract A1–A5): one lazy global per
//! connector, named by the sanitizing rule, forwarding to the host's
//! `__callNamespace`. This module decides the names and refuses the
//! deployments whose ids collide (A4); the sandbox defines, in each run,
//! the shortcuts the program names ([`connecta_sandbox::Shortcuts`]).

use std::collections::BTreeMap;

use connecta_core::address::{RESERVED_GLOBALS, sanitize_identifier};

/// The shortcut globals of a deployment, or the error every `execute_code`
/// request must fail with (A4).
pub(crate) fn aliases(connector_ids: &[&str]) -> Result<Vec<(String, String)>, String> {
    let mut by_alias: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for id in connector_ids {
        by_alias
            .entry(sanitize_identifier(id))
            .or_default()
            .push(id);
    }
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for (alias, ids) in by_alias {
        if ids.len() > 1 {
            problems.push(format!(
                "connector ids {} all become the program global `{alias}`",
                ids.join(", ")
            ));
        } else if RESERVED_GLOBALS.contains(&alias.as_str()) {
            problems.push(format!(
                "connector id \"{}\" becomes `{alias}`, a global the sandbox reserves",
                ids[0]
            ));
        } else {
            out.push((alias, ids[0].to_owned()));
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(format!(
            "execute_code is unavailable until an operator renames connectors: {}",
            problems.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a2_aliases_are_sanitized_identifiers() {
        let a = aliases(&["my-service", "9lives", "delete"]).expect("no collisions");
        let names: Vec<&str> = a.iter().map(|(x, _)| x.as_str()).collect();
        assert_eq!(names, vec!["_9lives", "delete_", "my_service"]);
    }

    #[test]
    fn a4_collisions_and_reserved_names_fail_naming_the_ids() {
        let e = aliases(&["my-svc", "my_svc", "ok"]).expect_err("collision");
        assert!(e.contains("my-svc, my_svc"), "{e}");
        let e = aliases(&["console"]).expect_err("reserved");
        assert!(e.contains("\"console\""), "{e}");
    }
}
