//! A string that must never be printed: `Debug` and `Display` show a
//! placeholder, and the only way to the value is [`Secret::expose`], which is
//! easy to grep for.
//!
//! The value lives in a `secrecy` box, which overwrites it with zeros when
//! the last copy is dropped, and two secrets are compared in constant time
//! (as SHA-256 digests, so neither contents nor lengths show in the time a
//! comparison takes).

use std::fmt;

use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

#[derive(Clone)]
pub struct Secret(SecretString);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(SecretString::from(value.into()))
    }

    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    pub fn is_empty(&self) -> bool {
        self.expose().is_empty()
    }
}

impl ConstantTimeEq for Secret {
    fn ct_eq(&self, other: &Secret) -> subtle::Choice {
        let a: [u8; 32] = Sha256::digest(self.expose().as_bytes()).into();
        let b: [u8; 32] = Sha256::digest(other.expose().as_bytes()).into();
        a.ct_eq(&b)
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Secret) -> bool {
        self.ct_eq(other).into()
    }
}

impl Eq for Secret {}

/// The inner `SecretString` zeroizes its buffer when dropped.
impl zeroize::ZeroizeOnDrop for Secret {}

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

    /// Equality goes through the constant-time comparison, and the value
    /// is wiped when dropped (both are properties of the type).
    #[test]
    fn secrets_compare_in_constant_time_and_are_wiped_on_drop() {
        fn wiped_on_drop<T: zeroize::ZeroizeOnDrop>() {}
        wiped_on_drop::<Secret>();
        let a = Secret::new("correct-horse");
        assert!(bool::from(a.ct_eq(&Secret::new("correct-horse"))));
        assert!(!bool::from(a.ct_eq(&Secret::new("correct-horsf"))));
        assert!(!bool::from(a.ct_eq(&Secret::new("correct"))));
        assert_eq!(a, a.clone());
        assert_ne!(a, Secret::new(""));
    }
}
