//! Operator sign-in: the secret check, the signed session cookie, and the
//! limit on failed attempts.
//!
//! A session is `v2.<expiry ms>.<name, base64url>.<HMAC, base64url>`: no
//! server-side state, so every replica with the same secret accepts it.
//! The HMAC key is derived from the secret with HKDF-SHA256 under its own
//! label ([`SESSION_KEY_INFO`]), so a new secret ends every session and no
//! other use of the secret can yield the same key. (`v1` sessions were
//! signed under a key made by hashing the secret; they are refused, and
//! their operators sign in again.) The secret itself is only ever compared
//! (constant time, as digests of equal length), never stored or echoed;
//! the digest and the key are wiped when the gateway drops them.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use connecta_core::secret::Secret;
use hkdf::Hkdf;
use hmac::{Hmac, KeyInit, Mac};
use rand::RngExt;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

/// The cookie's name: this prefix and a hash of the gateway's public URL,
/// so gateways on one host (cookies ignore ports) keep their own sessions,
/// and replicas behind one URL share one.
const COOKIE_PREFIX: &str = "connecta_operator_";

/// The HKDF-SHA256 `info` of the session cookies' HMAC key (the operator
/// secret is the input key material). Any other key ever derived from the
/// secret takes another label.
const SESSION_KEY_INFO: &[u8] = b"connecta operator session cookie v2";

/// The cookie format this build signs and accepts.
const SESSION_VERSION: &str = "v2";

/// Failed sign-ins allowed per window, across all callers.
const MAX_FAILURES: u32 = 10;
const FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// What the operator UI knows about its secret and sessions.
pub struct Operator {
    /// SHA-256 of the secret: what a presented secret's digest is compared to.
    secret_digest: [u8; 32],
    /// The HMAC key for session cookies, derived from the secret.
    mac_key: [u8; 32],
    /// How long a sign-in lasts.
    lifetime: Duration,
    /// `Secure` on the cookie (the public URL is https).
    secure: bool,
    /// (window start, failures in it): a guessing limit for the whole
    /// gateway, so spreading guesses over connections does not help.
    failures: Mutex<(Instant, u32)>,
    /// The cookie's name (see [`COOKIE_PREFIX`]).
    cookie_name: String,
}

/// Who is signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub name: String,
    pub expires_at_ms: i64,
}

/// Why a sign-in was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum SignInRefusal {
    WrongSecret,
    /// Too many failures lately; try again after this long.
    TooMany(Duration),
}

/// A fresh secret for the generated file: 256 random bits.
pub fn generate_secret() -> Secret {
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes);
    Secret::new(URL_SAFE_NO_PAD.encode(bytes))
}

/// What a signed-in operator is called in the activity log: letters and
/// digits of any script, spaces and `.'_@-`, at most 64 characters, with
/// controls and bidi formatting dropped and runs of spaces made one;
/// `operator` when nothing is left.
pub fn clean_name(name: Option<&str>) -> String {
    let mut kept = String::new();
    for c in name.unwrap_or("").chars() {
        if kept.chars().count() >= 64 {
            break;
        }
        if c.is_alphanumeric() || matches!(c, '.' | '_' | '@' | '-' | '\'') {
            kept.push(c);
        } else if c.is_whitespace() && !kept.is_empty() && !kept.ends_with(' ') {
            kept.push(' ');
        }
    }
    let kept = kept.trim_end();
    if kept.is_empty() {
        "operator".to_owned()
    } else {
        kept.to_owned()
    }
}

impl Operator {
    pub fn new(secret: &Secret, lifetime: Duration, public_url: &str) -> Operator {
        let secure = public_url.starts_with("https://");
        let url_hash = Sha256::digest(public_url.trim_end_matches('/').as_bytes());
        let secret_digest: [u8; 32] = Sha256::digest(secret.expose().as_bytes()).into();
        Operator {
            secret_digest,
            mac_key: session_key(secret),
            lifetime,
            secure,
            failures: Mutex::new((Instant::now(), 0)),
            cookie_name: format!("{COOKIE_PREFIX}{}", hex::encode(&url_hash[..4])),
        }
    }

    /// Check a presented secret; on success, the `Set-Cookie` value of a new
    /// session for `name`.
    pub fn sign_in(
        &self,
        presented: &str,
        name: &str,
        now_ms: i64,
    ) -> Result<(Session, String), SignInRefusal> {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if failures.0.elapsed() >= FAILURE_WINDOW {
            *failures = (Instant::now(), 0);
        }
        if failures.1 >= MAX_FAILURES {
            return Err(SignInRefusal::TooMany(
                FAILURE_WINDOW.saturating_sub(failures.0.elapsed()),
            ));
        }
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        if !bool::from(digest.ct_eq(&self.secret_digest)) {
            failures.1 += 1;
            return Err(SignInRefusal::WrongSecret);
        }
        drop(failures);
        let session = Session {
            name: name.to_owned(),
            expires_at_ms: now_ms + i64::try_from(self.lifetime.as_millis()).unwrap_or(i64::MAX),
        };
        let cookie = self.cookie(&self.encode(&session), self.lifetime.as_secs());
        Ok((session, cookie))
    }

    /// The `Set-Cookie` value that ends a session in the browser.
    pub fn sign_out_cookie(&self) -> String {
        self.cookie("", 0)
    }

    /// The session in a `Cookie` header, if one is there, signed by us and
    /// not expired.
    pub fn session(&self, cookie_header: Option<&str>, now_ms: i64) -> Option<Session> {
        let value = cookie_header?
            .split(';')
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == self.cookie_name)
            .map(|(_, v)| v)?;
        let (body, mac) = value.rsplit_once('.')?;
        let mac = URL_SAFE_NO_PAD.decode(mac).ok()?;
        let mut m = self.mac();
        m.update(body.as_bytes());
        m.verify_slice(&mac).ok()?;
        let mut parts = body.split('.');
        let (Some(SESSION_VERSION), Some(exp), Some(name), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let expires_at_ms: i64 = exp.parse().ok()?;
        if expires_at_ms <= now_ms {
            return None;
        }
        let name = String::from_utf8(URL_SAFE_NO_PAD.decode(name).ok()?).ok()?;
        Some(Session {
            name,
            expires_at_ms,
        })
    }

    fn mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.mac_key).expect("HMAC takes any key length")
    }

    fn encode(&self, s: &Session) -> String {
        let body = format!(
            "{SESSION_VERSION}.{}.{}",
            s.expires_at_ms,
            URL_SAFE_NO_PAD.encode(s.name.as_bytes())
        );
        let mut m = self.mac();
        m.update(body.as_bytes());
        let mac = URL_SAFE_NO_PAD.encode(m.finalize().into_bytes());
        format!("{body}.{mac}")
    }

    fn cookie(&self, value: &str, max_age_secs: u64) -> String {
        format!(
            "{}={value}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age={max_age_secs}{}",
            self.cookie_name,
            if self.secure { "; Secure" } else { "" }
        )
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        self.mac_key.zeroize();
        self.secret_digest.zeroize();
    }
}

/// The session cookies' HMAC key: HKDF-SHA256 of the operator secret
/// (no salt) under [`SESSION_KEY_INFO`].
fn session_key(secret: &Secret) -> [u8; 32] {
    let mut key = [0u8; 32];
    Hkdf::<Sha256>::new(None, secret.expose().as_bytes())
        .expand(SESSION_KEY_INFO, &mut key)
        .expect("32 bytes is a valid HKDF-SHA256 output length");
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(secret: &str) -> Operator {
        Operator::new(
            &Secret::new(secret),
            Duration::from_secs(3600),
            "http://127.0.0.1:8787",
        )
    }

    fn value(set_cookie: &str) -> String {
        set_cookie.split(';').next().expect("pair").to_owned()
    }

    #[test]
    fn a_session_is_accepted_until_it_expires() {
        let o = op("correct-horse-battery-staple");
        let (s, set) = o
            .sign_in("correct-horse-battery-staple", "alice", 1_000)
            .expect("signed in");
        assert_eq!(s.name, "alice");
        assert!(set.contains("HttpOnly") && set.contains("SameSite=Strict"));
        assert!(set.contains("Path=/ui") && !set.contains("Secure"));
        let header = format!("other=1; {}", value(&set));
        assert_eq!(o.session(Some(&header), 2_000), Some(s.clone()));
        assert_eq!(o.session(Some(&header), s.expires_at_ms), None);
        assert_eq!(o.session(None, 2_000), None);
    }

    #[test]
    fn a_forged_or_foreign_cookie_is_refused() {
        let o = op("correct-horse-battery-staple");
        let (s, set) = o
            .sign_in("correct-horse-battery-staple", "alice", 1_000)
            .expect("signed in");
        let good = value(&set);
        // Another name, or a later expiry, under the same MAC.
        let (body, mac) = good.rsplit_once('.').expect("mac");
        let forged_name = body.replace(
            &URL_SAFE_NO_PAD.encode("alice"),
            &URL_SAFE_NO_PAD.encode("mallory"),
        );
        let forged_exp = body.replace(
            &s.expires_at_ms.to_string(),
            &(s.expires_at_ms * 10).to_string(),
        );
        for bad in [
            format!("{forged_name}.{mac}"),
            format!("{forged_exp}.{mac}"),
            format!("{body}."),
            format!("{}=", o.cookie_name),
            format!("{}=v2.9999999999999.YQ.AAAA", o.cookie_name),
        ] {
            assert_eq!(o.session(Some(&bad), 2_000), None, "{bad}");
        }
        // A new secret ends every session.
        assert_eq!(
            op("another-secret-entirely").session(Some(&good), 2_000),
            None
        );
    }

    /// The session key is HKDF-SHA256(secret, info = SESSION_KEY_INFO):
    /// the cookie below was signed by an independent implementation (Python's
    /// `hmac`/`hashlib`, RFC 5869 by hand). A cookie signed under the old
    /// key (SHA-256 of a prefix and the secret) is refused.
    #[test]
    fn the_session_key_is_derived_with_hkdf_under_its_own_label() {
        let o = op("correct-horse-battery-staple");
        let cookie = |v: &str| format!("{}={v}", o.cookie_name);
        let hkdf_signed = "v2.4102444800000.YWxpY2U.Ie3ym-WxGDeuvlr4-EekffdEth3JhixwHpYMBLSbldk";
        assert_eq!(
            o.session(Some(&cookie(hkdf_signed)), 1_000),
            Some(Session {
                name: "alice".into(),
                expires_at_ms: 4_102_444_800_000
            })
        );
        let hash_signed = "v1.4102444800000.YWxpY2U.UFaLrjb1sndij5qfxsK_7mZ4gFcOaLus3hgeZwLOiNk";
        assert_eq!(o.session(Some(&cookie(hash_signed)), 1_000), None);
    }

    #[test]
    fn guessing_is_limited_for_everyone() {
        let o = op("correct-horse-battery-staple");
        for _ in 0..MAX_FAILURES {
            assert_eq!(
                o.sign_in("wrong", "x", 0).map(|_| ()),
                Err(SignInRefusal::WrongSecret)
            );
        }
        match o.sign_in("correct-horse-battery-staple", "x", 0) {
            Err(SignInRefusal::TooMany(wait)) => assert!(wait <= FAILURE_WINDOW),
            other => panic!("the right secret must wait too: {other:?}"),
        }
    }

    #[test]
    fn names_are_cleaned_for_the_activity_log() {
        assert_eq!(clean_name(Some(" alice@example.com ")), "alice@example.com");
        assert_eq!(clean_name(Some("<script>x</script>")), "scriptxscript");
        assert_eq!(clean_name(Some("Zoë  O'Neil")), "Zoë O'Neil");
        assert_eq!(clean_name(Some("eve\u{202e}lapyap")), "evelapyap");
        assert_eq!(clean_name(Some("   ")), "operator");
        assert_eq!(clean_name(None), "operator");
        assert_eq!(clean_name(Some(&"a".repeat(200))).len(), 64);
    }
}
