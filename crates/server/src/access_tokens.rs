//! Operator-issued access tokens for `/mcp`.
//!
//! A token is `cnt_` and 43 base64url characters (256 random bits). It is
//! shown once, when it is issued; the store keeps its SHA-256, a name, a
//! short id (`tok_` and 8 hex digits) and optional expiry and revocation
//! times. A caller presenting one is the actor `token:<name>/<id>` in the
//! activity log, so a name reused after a revocation is a different caller.
//!
//! Verification asks the store for the token's digest (the digest is a
//! lookup key: it says nothing of the token) and keeps a valid answer for
//! [`REVALIDATE`], so a revocation takes effect within that time on every
//! replica that shares the database. Expiry is checked on every request.
//!
//! Must never: keep or log a token, or accept one the store could not be
//! asked about (a store failure refuses the request).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use connecta_core::activity::Actor;
use connecta_core::secret::Secret;
use connecta_store::{AccessTokenRow, Store};
use rand::RngExt;
use sha2::{Digest, Sha256};

/// Every issued token starts with this, so it can be told from a static
/// bearer token (and found by secret scanners).
pub const PREFIX: &str = "cnt_";

/// How long a token found valid is trusted without asking the store again:
/// the longest a revocation can take to reach a running gateway.
pub const REVALIDATE: Duration = Duration::from_secs(2);

/// Tokens whose validity is remembered at once; past this the memory is
/// cleared (an attacker presenting many valid tokens is not a concern:
/// each had to be issued).
const MAX_REMEMBERED: usize = 4_096;

/// A token's state as the operator sees it.
pub fn status(t: &AccessTokenRow, now_ms: i64) -> &'static str {
    if t.revoked_at_ms.is_some() {
        "revoked"
    } else if t.expires_at_ms.is_some_and(|e| e <= now_ms) {
        "expired"
    } else {
        "active"
    }
}

/// A token just issued: the only moment its text exists.
#[derive(Debug)]
pub struct Issued {
    pub token: Secret,
    pub row: AccessTokenRow,
}

/// A new token named `name`. The name is checked here: 1 to 64 characters,
/// letters, digits, `.`, `_` and `-`.
pub fn issue(name: &str, now_ms: i64, expires_at_ms: Option<i64>) -> Result<Issued, String> {
    check_name(name)?;
    if expires_at_ms.is_some_and(|e| e <= now_ms) {
        return Err("the expiry must be in the future".into());
    }
    let mut secret = [0u8; 32];
    rand::rng().fill(&mut secret);
    let mut id = [0u8; 4];
    rand::rng().fill(&mut id);
    let token = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(secret));
    Ok(Issued {
        row: AccessTokenRow {
            id: format!("tok_{}", hex::encode(id)),
            name: name.to_owned(),
            digest: digest(&token).to_vec(),
            created_at_ms: now_ms,
            expires_at_ms,
            revoked_at_ms: None,
        },
        token: Secret::new(token),
    })
}

/// A token name: 1 to 64 letters, digits, `.`, `_` or `-`, not `tok_…`.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if name.is_empty() || name.len() > 64 || !ok_chars {
        return Err(format!(
            "token name {name:?} is not valid: use 1 to 64 letters, digits, `.`, `_` or `-`"
        ));
    }
    // `tok_…` is an id's shape: `revoke` takes a name or an id, and the two
    // must never be confused.
    if name.starts_with("tok_") {
        return Err(format!(
            "token name {name:?} is not valid: names starting with `tok_` are kept for token ids"
        ));
    }
    Ok(())
}

pub fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The actor a token's caller is recorded as.
pub fn actor(row: &AccessTokenRow) -> Actor {
    Actor {
        kind: "token".into(),
        id: Some(format!("{}/{}", row.name, row.id)),
    }
}

/// Why a presented token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Unknown to this gateway (or not a token at all).
    Unknown,
    Expired,
    Revoked,
    /// The store could not be asked: refuse, and say it may be retried.
    Unavailable,
}

#[derive(Clone)]
struct Remembered {
    actor: Actor,
    expires_at_ms: Option<i64>,
    checked: Instant,
}

/// Verifies issued tokens against the store, remembering valid ones briefly.
pub struct TokenVerifier {
    store: Arc<dyn Store>,
    remembered: Mutex<HashMap<[u8; 32], Remembered>>,
}

impl TokenVerifier {
    pub fn new(store: Arc<dyn Store>) -> TokenVerifier {
        TokenVerifier {
            store,
            remembered: Mutex::new(HashMap::new()),
        }
    }

    pub async fn verify(&self, token: &str, now_ms: i64) -> Result<Actor, Refusal> {
        if !token.starts_with(PREFIX) {
            return Err(Refusal::Unknown);
        }
        let digest = digest(token);
        let known = self.lock().get(&digest).cloned();
        if let Some(r) = known
            && r.checked.elapsed() < REVALIDATE
        {
            return live(r.expires_at_ms, now_ms).map(|()| r.actor);
        }
        let row = match self.store.token_by_digest(&digest).await {
            Ok(Some(row)) => row,
            Ok(None) => return Err(Refusal::Unknown),
            Err(e) => {
                // Store errors carry no token: the digest is bound, never formatted.
                tracing::error!("could not check an access token: {e}");
                return Err(Refusal::Unavailable);
            }
        };
        if row.revoked_at_ms.is_some() {
            self.lock().remove(&digest);
            return Err(Refusal::Revoked);
        }
        live(row.expires_at_ms, now_ms)?;
        let actor = actor(&row);
        let mut remembered = self.lock();
        if remembered.len() >= MAX_REMEMBERED {
            remembered.clear();
        }
        remembered.insert(
            digest,
            Remembered {
                actor: actor.clone(),
                expires_at_ms: row.expires_at_ms,
                checked: Instant::now(),
            },
        );
        Ok(actor)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Remembered>> {
        self.remembered.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn live(expires_at_ms: Option<i64>, now_ms: i64) -> Result<(), Refusal> {
    match expires_at_ms {
        Some(at) if at <= now_ms => Err(Refusal::Expired),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_prefers_revoked_then_expired() {
        let mut t = AccessTokenRow {
            id: "tok_1".into(),
            name: "ci".into(),
            digest: vec![0; 32],
            created_at_ms: 0,
            expires_at_ms: Some(100),
            revoked_at_ms: None,
        };
        assert_eq!(status(&t, 99), "active");
        assert_eq!(status(&t, 100), "expired");
        t.revoked_at_ms = Some(50);
        assert_eq!(status(&t, 99), "revoked");
    }

    #[test]
    fn an_issued_token_has_256_random_bits_and_only_its_digest_is_kept() {
        let a = issue("ci-bot", 1_000, None).expect("issued");
        let b = issue("ci-bot", 1_000, None).expect("issued");
        let text = a.token.expose();
        assert!(text.starts_with(PREFIX));
        assert_eq!(text.len(), PREFIX.len() + 43);
        assert_ne!(text, b.token.expose());
        assert_ne!(a.row.id, b.row.id);
        assert!(a.row.id.starts_with("tok_") && a.row.id.len() == 12);
        assert_eq!(a.row.digest, digest(text).to_vec());
        assert!(
            !format!("{a:?}").contains(text),
            "Debug must not show the token"
        );
    }

    #[test]
    fn names_are_short_and_plain_and_expiry_is_in_the_future() {
        for bad in [
            "",
            "two words",
            "ünïcode",
            "a/b",
            "tok_1662ef81",
            &"x".repeat(65),
        ] {
            assert!(issue(bad, 0, None).is_err(), "{bad:?}");
        }
        for good in ["ci", "claude.desktop", "team_a-1", &"x".repeat(64)] {
            assert!(issue(good, 0, None).is_ok(), "{good:?}");
        }
        assert!(issue("ci", 1_000, Some(1_000)).is_err());
        assert!(issue("ci", 1_000, Some(1_001)).is_ok());
    }
}
