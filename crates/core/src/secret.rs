//! A string that must never be printed: `Debug` and `Display` show a
//! placeholder, and the only way to the value is [`Secret::expose`], which is
//! easy to grep for.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Mask a secret for display: never the value, only a short suffix of a long
/// one so an operator can tell two values apart.
pub fn mask(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() >= 16 {
        let tail: String = chars[chars.len() - 4..].iter().collect();
        format!("••••{tail}")
    } else {
        "••••".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_print() {
        let s = Secret::new("hunter2-very-secret");
        assert_eq!(format!("{s:?} {s}"), "Secret(***) ***");
        assert_eq!(mask("short"), "••••");
        assert_eq!(mask("abcdefghijklmnopqrstuvwxyz"), "••••wxyz");
    }
}
