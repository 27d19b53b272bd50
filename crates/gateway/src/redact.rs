//! Secret redaction for text that leaves the gateway (errors, logs): any
//! configured secret value that appears verbatim is replaced.

use std::borrow::Cow;
use std::sync::RwLock;

/// Values shorter than this are not redacted (they would shred ordinary text).
const MIN_SECRET_LEN: usize = 6;
const MARK: &str = "[redacted]";

#[derive(Default)]
pub struct Redactor {
    secrets: RwLock<Vec<String>>,
}

impl Redactor {
    pub fn add(&self, secret: &str) {
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        let mut s = self.secrets.write().unwrap_or_else(|p| p.into_inner());
        if !s.iter().any(|x| x == secret) {
            s.push(secret.to_owned());
            // Longest first, so a secret containing another is replaced whole.
            s.sort_by_key(|x| std::cmp::Reverse(x.len()));
        }
    }

    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let secrets = self.secrets.read().unwrap_or_else(|p| p.into_inner());
        let mut out: Cow<'a, str> = Cow::Borrowed(text);
        for s in secrets.iter() {
            if out.contains(s.as_str()) {
                out = Cow::Owned(out.replace(s.as_str(), MARK));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_replaced() {
        let r = Redactor::default();
        r.add("abc");
        r.add("hunter2-secret");
        assert_eq!(
            r.redact("token hunter2-secret failed"),
            "token [redacted] failed"
        );
        assert_eq!(r.redact("abc is short"), "abc is short");
    }
}
