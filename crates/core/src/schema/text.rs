//! JSON text as `serde_json` writes it (strings, numbers, keys), written
//! straight into the shape being built instead of through `fmt` and a
//! temporary `String` each time: the compact renderer writes hundreds of
//! small literals per schema.

use std::fmt::Write as _;

use serde_json::Value;

pub(super) fn is_ident(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c == b'$')
        && bytes.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
}

/// A property key as the grammar spells it: bare when it is an identifier,
/// else a JSON string.
pub(super) fn push_key(out: &mut String, name: &str) {
    if is_ident(name) {
        out.push_str(name);
    } else {
        push_json_str(out, name);
    }
}

pub(super) fn key_len(name: &str) -> usize {
    if is_ident(name) {
        name.len()
    } else {
        json_str_len(name)
    }
}

/// Whether a string serializes to JSON as itself in quotes (nothing to
/// escape: no quote, backslash or control character).
pub(super) fn plain_json(s: &str) -> bool {
    !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)
}

/// A string as JSON, exactly as `serde_json` writes it.
pub(super) fn push_json_str(out: &mut String, s: &str) {
    if plain_json(s) {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&Value::String(s.to_owned()).to_string());
    }
}

fn json_str_len(s: &str) -> usize {
    if plain_json(s) {
        s.len() + 2
    } else {
        Value::String(s.to_owned()).to_string().len()
    }
}

/// A scalar as JSON, exactly as `serde_json` writes it, without going
/// through `fmt` for the common cases.
pub(super) fn push_json(out: &mut String, v: &Value) {
    match v {
        Value::String(s) => push_json_str(out, s),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
        _ => push_number(out, v),
    }
}

/// A number value as JSON: integers digit by digit, others through
/// `serde_json` (and any non-number value, too).
pub(super) fn push_number(out: &mut String, v: &Value) {
    match v {
        Value::Number(n) if n.is_u64() => push_u64(out, n.as_u64().unwrap_or(0)),
        Value::Number(n) if n.is_i64() => {
            out.push('-');
            push_u64(out, n.as_i64().unwrap_or(0).unsigned_abs());
        }
        _ => {
            let _ = write!(out, "{v}");
        }
    }
}

fn push_u64(out: &mut String, mut u: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// Comment text with any `*/` defused, so the comment cannot close early.
pub(super) fn push_comment_text(out: &mut String, s: &str) {
    if s.as_bytes().windows(2).any(|w| w == b"*/") {
        out.push_str(&s.replace("*/", "*\\/"));
    } else {
        out.push_str(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn literals_match_serde_json() {
        for v in [
            json!("plain"),
            json!("quote\" and \\ and \t tab \u{1} ctl"),
            json!(0),
            json!(18446744073709551615u64),
            json!(-9223372036854775808i64),
            json!(-42),
            json!(2.5),
            json!(1e300),
            json!(true),
            json!(null),
            json!([1, "a"]),
        ] {
            let mut out = String::new();
            push_json(&mut out, &v);
            assert_eq!(out, v.to_string());
        }
        for key in ["id", "_x$1", "x-odd key", "1st", "q\"", ""] {
            let mut out = String::new();
            push_key(&mut out, key);
            assert_eq!(out.len(), key_len(key), "{key}");
            assert_eq!(is_ident(key), out == key, "{key}");
        }
        let mut out = String::new();
        push_comment_text(&mut out, "a*/b*/");
        assert_eq!(out, "a*\\/b*\\/");
    }
}
