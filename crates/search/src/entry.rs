//! One tool as a search page or `describe` shows it.

use serde_json::{Map, Value};

use connecta_core::Schema;
use connecta_core::address::format_address;
use connecta_core::config::Guide;
use connecta_core::schema::{CompactSchema, object_keys};

use super::index::CatalogIndex;

/// Without `fullDescriptions`, a description is cut to its first sentence
/// and at most this many bytes (on a word boundary, marked with `…`).
pub const SHORT_DESCRIPTION_BYTES: usize = 160;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Schemas {
    /// Compact input shape only (the `search_tools` default).
    CompactInput,
    /// Compact input and output shapes.
    Compact,
    /// Exact input and output schemas, and the raw annotations.
    Json,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryOptions {
    pub schemas: Schemas,
    pub full_descriptions: bool,
    /// Code mode: `inputKeys`, `requiredInputKeys`, `outputKeys`.
    pub keys: bool,
    pub annotations: bool,
}

/// One tool of an index as a page entry; its compact shapes come from the
/// index's per-tool cache (rendered the first time any page shows it).
pub(crate) fn entry(
    index: &CatalogIndex,
    id: u32,
    guide: Option<&Guide>,
    opts: EntryOptions,
) -> Value {
    let connector = index.connector();
    let tool = index.tool(id);
    let mut m = Map::with_capacity(8);
    m.insert(
        "address".into(),
        Value::String(format_address(connector, &tool.name)),
    );
    m.insert("name".into(), Value::String(tool.name.clone()));
    if let Some(title) = tool.title.as_ref().or(tool.annotations.title.as_ref()) {
        m.insert("title".into(), Value::String(title.clone()));
    }
    let description = tool.description();
    if !description.is_empty() {
        let text = if opts.full_descriptions {
            description.to_owned()
        } else {
            shorten(description, SHORT_DESCRIPTION_BYTES)
        };
        m.insert("description".into(), Value::String(text));
    }
    m.insert("readOnly".into(), Value::Bool(tool.read_only()));
    if opts.annotations && !tool.annotations.is_empty() {
        m.insert(
            "annotations".into(),
            serde_json::to_value(&tool.annotations).unwrap_or(Value::Null),
        );
    }
    if opts.schemas == Schemas::Json {
        exact_shape(&mut m, "input", &tool.input_schema, opts, true);
        if let Some(out) = &tool.output_schema {
            exact_shape(&mut m, "output", out, opts, false);
        }
    } else {
        compact_shape(&mut m, "input", index.compact_input(id), opts, true);
        if opts.schemas == Schemas::Compact
            && let Some(out) = index.compact_output(id)
        {
            compact_shape(&mut m, "output", out, opts, false);
        }
    }
    if let Some(g) = guide {
        m.insert("guideSummary".into(), Value::String(g.summary.clone()));
        if g.required {
            m.insert("guideRequired".into(), Value::Bool(true));
        }
        if opts.full_descriptions {
            m.insert("guide".into(), Value::String(g.text.clone()));
        }
    }
    Value::Object(m)
}

fn exact_shape(
    m: &mut Map<String, Value>,
    which: &str,
    schema: &Schema,
    opts: EntryOptions,
    input: bool,
) {
    let schema = schema.value();
    let keys = opts.keys.then(|| object_keys(&schema));
    m.insert(name(which, "Schema"), schema);
    match keys {
        Some(Some((k, r))) => key_lists(m, which, Some(&k), Some(&r), input),
        Some(None) => key_lists(m, which, None, None, input),
        None => {}
    }
}

fn compact_shape(
    m: &mut Map<String, Value>,
    which: &str,
    c: &CompactSchema,
    opts: EntryOptions,
    input: bool,
) {
    m.insert(name(which, "Schema"), Value::String(c.text.clone()));
    if c.truncated {
        m.insert(name(which, "SchemaTruncated"), Value::Bool(true));
    }
    if opts.keys {
        key_lists(
            m,
            which,
            c.keys.as_deref(),
            c.required_keys.as_deref(),
            input,
        );
    }
}

fn key_lists(
    m: &mut Map<String, Value>,
    which: &str,
    keys: Option<&[String]>,
    required: Option<&[String]>,
    input: bool,
) {
    let strings = |v: &[String]| Value::Array(v.iter().cloned().map(Value::String).collect());
    if let Some(k) = keys {
        m.insert(name(which, "Keys"), strings(k));
    }
    if input && let Some(r) = required {
        m.insert("requiredInputKeys".into(), strings(r));
    }
}

/// `input` or `output` joined to a suffix (`inputSchema`), sized exactly.
fn name(which: &str, suffix: &str) -> String {
    let mut s = String::with_capacity(which.len() + suffix.len());
    s.push_str(which);
    s.push_str(suffix);
    s
}

/// The first sentence of `text`, at most `max` bytes, cut on a word
/// boundary and marked with `…` when anything was dropped.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    // `text.find(". ")`, without building a substring searcher.
    let first = text
        .as_bytes()
        .windows(2)
        .position(|w| w == b". ")
        .map(|i| &text[..=i])
        .into_iter()
        .chain(text.find('\n').map(|i| text[..i].trim_end()))
        .min_by_key(|s| s.len())
        .unwrap_or(text);
    let dropped_rest = first.len() < text.len();
    if first.len() <= max {
        let mut out = first.to_owned();
        if dropped_rest {
            out.push_str(" …");
        }
        return out;
    }
    let budget = max.saturating_sub('…'.len_utf8());
    let mut cut = connecta_core::error::floor_char_boundary(first, budget);
    if let Some(space) = first[..cut].rfind(' ')
        && space > budget / 2
    {
        cut = space;
    }
    let mut out = first[..cut].trim_end().to_owned();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_keep_the_first_sentence_within_the_budget() {
        assert_eq!(shorten("Get one issue.", 160), "Get one issue.");
        assert_eq!(
            shorten("Get one issue. Requires repo scope.", 160),
            "Get one issue. …"
        );
        assert_eq!(shorten("List files\nMore text", 160), "List files …");
        let long = "word ".repeat(100);
        let s = shorten(&long, 160);
        assert!(s.len() <= 160, "{}", s.len());
        assert!(s.ends_with('…'));
        let multibyte = "é".repeat(200);
        assert!(shorten(&multibyte, 160).len() <= 160);
    }
}
