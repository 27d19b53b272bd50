//! Compact schemas: a one-line, TypeScript-like rendering of a tool's input
//! or output JSON Schema (contract S1), and the key lists that come from the
//! same walk (S2).
//!
//! - Property prose (`description`, `title`, examples) is omitted; exact
//!   constraints that change what a call may carry (bounds, lengths, format,
//!   short patterns, defaults) stay as `/* … */` comments.
//! - Required members come first, then optional ones (`name?:`), each group in
//!   declaration order.
//! - Local `$ref`s (`#/$defs/…`, `#/definitions/…`, `#`) are resolved; a
//!   recursive reference renders as `unknown`; a remote or dangling one is
//!   `unknown` too. `allOf` branches that are objects merge into one object;
//!   otherwise they render as an intersection (`A & B`). `anyOf`/`oneOf`,
//!   type lists and `nullable` render as unions; `enum`/`const` as literals.
//! - Every shape is capped (1,024 bytes by default). A capped shape is still
//!   valid in the grammar of [`grammar`], with `unknown` types and a
//!   `/* truncated */` marker, and is flagged `truncated`.
//!
//! Key lists are present only when the shape is an object and was not
//! truncated: absent means "read the schema", `[]` means "takes no fields".
//!
//! Architecture invariant: this module never fetches a remote `$ref` and
//! never fails — any JSON value renders to some valid shape.

pub mod grammar;
mod render;
mod resolve;

use serde_json::Value;

pub use grammar::{GrammarError, validate};

/// The per-shape cap of contract S1, in UTF-8 bytes.
pub const SHAPE_CAP_BYTES: usize = 1024;

/// The compact rendering of one schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactSchema {
    pub text: String,
    pub truncated: bool,
    /// Top-level member names in rendered order; `None` when the shape is
    /// not an object or was truncated.
    pub keys: Option<Vec<String>>,
    /// The required subset of `keys`, same order and same absence rule.
    pub required_keys: Option<Vec<String>>,
}

/// Render `schema` compactly in at most `cap_bytes` bytes (never less than
/// the 19 bytes of `{ /* truncated */ }`).
pub fn render_compact(schema: &Value, cap_bytes: usize) -> CompactSchema {
    let cap = cap_bytes.max(19);
    let mut r = render::Renderer::new(schema);
    let shape = r.resolver().object_shape(schema);
    let text = match &shape {
        Some(s) => r.render_object(s, cap),
        None => r.render(schema, cap),
    };
    let truncated = r.truncated;
    let (keys, required_keys) = match shape {
        Some(s) if !truncated => {
            let ordered = s.ordered();
            let keys = ordered.iter().map(|(n, _, _)| (*n).to_owned()).collect();
            let req = ordered
                .iter()
                .filter(|(_, _, r)| *r)
                .map(|(n, _, _)| (*n).to_owned())
                .collect();
            (Some(keys), Some(req))
        }
        _ => (None, None),
    };
    CompactSchema {
        text,
        truncated,
        keys,
        required_keys,
    }
}

/// Key lists of an exact schema (no cap): `(keys, required_keys)` in the
/// order a compact rendering would show them, or `None` when the schema is
/// not an object shape. Used when exact JSON schemas are returned.
pub fn object_keys(schema: &Value) -> Option<(Vec<String>, Vec<String>)> {
    let r = resolve::Resolver::new(schema);
    let shape = r.object_shape(schema)?;
    let ordered = shape.ordered();
    Some((
        ordered.iter().map(|(n, _, _)| (*n).to_owned()).collect(),
        ordered
            .iter()
            .filter(|(_, _, r)| *r)
            .map(|(n, _, _)| (*n).to_owned())
            .collect(),
    ))
}

#[cfg(test)]
mod tests;
