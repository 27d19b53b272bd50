//! Canonical addresses (`<connector>.<tool>`, contract A1) and the sanitizing
//! rule that turns connector ids and tool names into JavaScript identifiers for
//! the shortcut namespaces (A2). One rule, here, used by every caller (A5).

/// A parsed canonical address. Connector ids never contain `.`, so the first
/// dot separates the connector from the tool; tool names may contain dots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address<'a> {
    pub connector: &'a str,
    pub tool: &'a str,
}

impl<'a> Address<'a> {
    pub fn parse(address: &'a str) -> Option<Address<'a>> {
        let (connector, tool) = address.split_once('.')?;
        if connector.is_empty() || tool.is_empty() {
            return None;
        }
        Some(Address { connector, tool })
    }
}

pub fn format_address(connector: &str, tool: &str) -> String {
    let mut s = String::with_capacity(connector.len() + 1 + tool.len());
    s.push_str(connector);
    s.push('.');
    s.push_str(tool);
    s
}

/// Whether a connector id is acceptable in configuration: 1–64 ASCII letters,
/// digits, `_` or `-`. No dots (they separate the address), nothing that needs
/// quoting in a URL path or a log line.
pub fn is_valid_connector_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// JavaScript reserved words (ES2023 keywords, strict-mode reserved words, and
/// the literals) — a sanitized name equal to one of these gets `_` appended.
pub const RESERVED_WORDS: &[&str] = &[
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
    "arguments",
    "eval",
    "undefined",
    "NaN",
    "Infinity",
];

/// Globals the sandbox owns; a connector whose sanitized id lands on one of
/// these fails every `execute_code` request (A4). A test asks the real
/// runtime for its globals and checks that each is here (or is a reserved
/// word, which sanitizing already moves aside).
pub const RESERVED_GLOBALS: &[&str] = &[
    "connecta",
    "console",
    "globalThis",
    "Object",
    "Array",
    "Function",
    "String",
    "Number",
    "Boolean",
    "Symbol",
    "BigInt",
    "Math",
    "JSON",
    "Date",
    "RegExp",
    "Error",
    "TypeError",
    "RangeError",
    "SyntaxError",
    "ReferenceError",
    "EvalError",
    "URIError",
    "AggregateError",
    "Promise",
    "Proxy",
    "Reflect",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "WeakRef",
    "ArrayBuffer",
    "DataView",
    "Intl",
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "encodeURI",
    "decodeURI",
    "encodeURIComponent",
    "decodeURIComponent",
    "escape",
    "unescape",
    "queueMicrotask",
    "Iterator",
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "BigInt64Array",
    "BigUint64Array",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "FinalizationRegistry",
    "InternalError",
    "DisposableStack",
    "AsyncDisposableStack",
    "SuppressedError",
];

/// The A2 rule: characters outside `[A-Za-z0-9_$]` become `_`, a leading digit
/// gets `_` prefixed, a reserved word gets `_` appended.
pub fn sanitize_identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    if name.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        out.push('_');
    }
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    if out.is_empty() {
        out.push('_');
    }
    if RESERVED_WORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a1_addresses_split_at_the_first_dot() {
        let a = Address::parse("my-service.get.thing").expect("parses");
        assert_eq!(a.connector, "my-service");
        assert_eq!(a.tool, "get.thing");
        assert!(Address::parse("nodot").is_none());
        assert!(Address::parse(".tool").is_none());
        assert!(Address::parse("conn.").is_none());
    }

    #[test]
    fn a2_sanitizing_rule() {
        assert_eq!(sanitize_identifier("my-service"), "my_service");
        assert_eq!(sanitize_identifier("get.thing"), "get_thing");
        assert_eq!(sanitize_identifier("9lives"), "_9lives");
        assert_eq!(sanitize_identifier("delete"), "delete_");
        assert_eq!(sanitize_identifier("$ok_1"), "$ok_1");
        assert_eq!(sanitize_identifier("ünï"), "_n_");
        assert_eq!(sanitize_identifier(""), "_");
    }

    #[test]
    fn connector_ids_are_plain() {
        assert!(is_valid_connector_id("notes"));
        assert!(is_valid_connector_id("my-svc_2"));
        assert!(!is_valid_connector_id("a.b"));
        assert!(!is_valid_connector_id(""));
        assert!(!is_valid_connector_id(&"a".repeat(65)));
        assert!(!is_valid_connector_id("sp ace"));
    }
}
