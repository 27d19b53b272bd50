//! One schema node's keywords, found in a single pass over its keys, and
//! the exact constraints a compact shape keeps as a comment.

use serde_json::{Map, Value};

use super::text::{plain_json, push_comment_text, push_json, push_number};

/// Short patterns are shown in comments; long ones are left to `describe`.
const MAX_PATTERN: usize = 40;

/// The keywords of one schema node the renderer reads, found in one pass
/// over its keys (a node has a handful; looking each keyword up costs more).
#[derive(Default)]
pub(super) struct View<'a> {
    pub(super) const_: Option<&'a Value>,
    pub(super) enum_: Option<&'a Value>,
    pub(super) any_of: Option<&'a Value>,
    pub(super) one_of: Option<&'a Value>,
    pub(super) all_of: Option<&'a Value>,
    pub(super) type_: Option<&'a Value>,
    pub(super) properties: bool,
    pub(super) required: bool,
    pub(super) additional: Option<&'a Value>,
    pub(super) items: Option<&'a Value>,
    pub(super) prefix_items: Option<&'a Value>,
    pub(super) nullable: bool,
    /// Some constraint keyword below is present.
    pub(super) constrained: bool,
    pub(super) format: Option<&'a Value>,
    pub(super) minimum: Option<&'a Value>,
    pub(super) exclusive_minimum: Option<&'a Value>,
    pub(super) maximum: Option<&'a Value>,
    pub(super) exclusive_maximum: Option<&'a Value>,
    pub(super) min_length: Option<&'a Value>,
    pub(super) max_length: Option<&'a Value>,
    pub(super) min_items: Option<&'a Value>,
    pub(super) max_items: Option<&'a Value>,
    pub(super) pattern: Option<&'a Value>,
    pub(super) default: Option<&'a Value>,
}

impl<'a> View<'a> {
    pub(super) fn of(map: &'a Map<String, Value>) -> View<'a> {
        let mut v = View::default();
        for (k, value) in map {
            let slot = match k.as_str() {
                "const" => &mut v.const_,
                "enum" => &mut v.enum_,
                "anyOf" => &mut v.any_of,
                "oneOf" => &mut v.one_of,
                "allOf" => &mut v.all_of,
                "type" => &mut v.type_,
                "additionalProperties" => &mut v.additional,
                "items" => &mut v.items,
                "prefixItems" => &mut v.prefix_items,
                "properties" => {
                    v.properties = true;
                    continue;
                }
                "required" => {
                    v.required = true;
                    continue;
                }
                "nullable" => {
                    v.nullable = *value == Value::Bool(true);
                    continue;
                }
                other => {
                    let slot = match other {
                        "format" => &mut v.format,
                        "minimum" => &mut v.minimum,
                        "exclusiveMinimum" => &mut v.exclusive_minimum,
                        "maximum" => &mut v.maximum,
                        "exclusiveMaximum" => &mut v.exclusive_maximum,
                        "minLength" => &mut v.min_length,
                        "maxLength" => &mut v.max_length,
                        "minItems" => &mut v.min_items,
                        "maxItems" => &mut v.max_items,
                        "pattern" => &mut v.pattern,
                        "default" => &mut v.default,
                        _ => continue,
                    };
                    v.constrained = true;
                    slot
                }
            };
            *slot = Some(value);
        }
        v
    }
}

/// Exact constraints worth keeping in a compact shape, as one comment.
/// Writes it into `out` (empty) and says whether there is one.
pub(super) fn constraints(view: &View<'_>, out: &mut String) -> bool {
    if !view.constrained {
        return false;
    }
    let out_start = out.len();
    let next = |out: &mut String| out.push_str(if out.len() == out_start { "/* " } else { ", " });
    if let Some(f) = view.format.and_then(Value::as_str) {
        next(out);
        push_comment_text(out, f);
    }
    fn num(v: Option<&Value>) -> Option<&Value> {
        v.filter(|v| v.is_number())
    }
    for (k, op) in [
        (view.minimum, ">= "),
        (view.exclusive_minimum, "> "),
        (view.maximum, "<= "),
        (view.exclusive_maximum, "< "),
    ] {
        if let Some(v) = num(k) {
            next(out);
            out.push_str(op);
            push_number(out, v);
        }
    }
    for (lo, hi, what) in [
        (view.min_length, view.max_length, "length "),
        (view.min_items, view.max_items, "items "),
    ] {
        let (lo, hi) = (num(lo), num(hi));
        if lo.is_none() && hi.is_none() {
            continue;
        }
        next(out);
        out.push_str(what);
        match (lo, hi) {
            (Some(a), Some(b)) => {
                push_number(out, a);
                out.push_str("..");
                push_number(out, b);
            }
            (Some(a), None) => {
                out.push_str(">= ");
                push_number(out, a);
            }
            (None, Some(b)) => {
                out.push_str("<= ");
                push_number(out, b);
            }
            (None, None) => {}
        }
    }
    if let Some(p) = view.pattern.and_then(Value::as_str)
        && p.len() <= MAX_PATTERN
    {
        next(out);
        out.push_str("pattern ");
        push_comment_text(out, p);
    }
    if let Some(d) = view.default {
        let integer = d.is_u64() || d.is_i64();
        match d {
            Value::Bool(_) | Value::Null | Value::Number(_) if integer || !d.is_number() => {
                next(out);
                out.push_str("default: ");
                push_json(out, d);
            }
            Value::String(s) if plain_json(s) => {
                if s.len() + 2 <= MAX_PATTERN {
                    next(out);
                    out.push_str("default: \"");
                    push_comment_text(out, s);
                    out.push('"');
                }
            }
            _ => {
                let text = d.to_string();
                if text.len() <= MAX_PATTERN {
                    next(out);
                    out.push_str("default: ");
                    push_comment_text(out, &text);
                }
            }
        }
    }
    if out.len() == out_start {
        return false;
    }
    out.push_str(" */");
    true
}
