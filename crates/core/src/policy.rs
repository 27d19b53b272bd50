//! The fail-closed read-only predicate and the safety filter built on it.
//!
//! Architecture invariant: [`is_read_only`] is the only place that decides
//! whether a tool may run without crossing `call_destructive_tool`. Search's
//! `safety` filter, `call_tool`, and every call a program makes ask it.

use serde::{Deserialize, Serialize};

/// Tool annotations as a downstream (or an operator override) states them.
/// Every hint is optional: absence is information, and absence is not consent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl Annotations {
    pub fn is_empty(&self) -> bool {
        *self == Annotations::default()
    }
}

/// A tool is read-only only when it says so explicitly and does not also say
/// it is destructive. Missing, false and contradictory annotations all fail
/// closed to "approval required".
pub fn is_read_only(annotations: &Annotations) -> bool {
    annotations.read_only_hint == Some(true) && annotations.destructive_hint != Some(true)
}

/// Whether an automatic retry of a failed attempt is allowed for this tool:
/// only read-only or explicitly idempotent tools are ever retried.
pub fn may_retry(annotations: &Annotations) -> bool {
    is_read_only(annotations) || annotations.idempotent_hint == Some(true)
}

/// The `safety` filter of search (contract S1a). It filters rows only; it
/// grants nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Safety {
    ReadOnly,
    ApprovalRequired,
    #[default]
    All,
}

impl Safety {
    pub fn admits(self, annotations: &Annotations) -> bool {
        match self {
            Safety::All => true,
            Safety::ReadOnly => is_read_only(annotations),
            Safety::ApprovalRequired => !is_read_only(annotations),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(ro: Option<bool>, de: Option<bool>) -> Annotations {
        Annotations {
            read_only_hint: ro,
            destructive_hint: de,
            ..Annotations::default()
        }
    }

    #[test]
    fn e4_read_only_requires_an_explicit_claim_and_no_contradiction() {
        assert!(is_read_only(&ann(Some(true), None)));
        assert!(is_read_only(&ann(Some(true), Some(false))));
        assert!(
            !is_read_only(&ann(Some(true), Some(true))),
            "contradictory fails closed"
        );
        assert!(!is_read_only(&ann(None, None)), "missing fails closed");
        assert!(!is_read_only(&ann(Some(false), Some(false))));
        assert!(!is_read_only(&ann(None, Some(false))));
    }

    #[test]
    fn s1a_safety_classes_are_complementary() {
        for a in [
            ann(Some(true), None),
            ann(Some(true), Some(true)),
            ann(None, None),
            ann(Some(false), None),
        ] {
            assert_ne!(
                Safety::ReadOnly.admits(&a),
                Safety::ApprovalRequired.admits(&a)
            );
            assert!(Safety::All.admits(&a));
        }
    }
}
