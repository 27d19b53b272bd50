//! The budgeted renderer: JSON Schema → one line of the TypeScript-like
//! grammar in [`super::grammar`], never longer than its byte budget.
//!
//! Every function here returns text that fits the budget it was given
//! (budgets are at least [`MIN_BUDGET`]). When the natural rendering does not
//! fit, it degrades locally and stays valid: an object keeps the members that
//! fit and closes with `/* truncated */`, a union, enum or tuple that does not
//! fit becomes `unknown` (or its base type), an array becomes `unknown[]`.
//! Each degradation sets the `truncated` flag.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::resolve::{Deref, ObjectShape, Resolver, value_field};
use super::text::{key_len, push_json, push_key};
use super::view::{View, constraints};

pub(crate) const TRUNCATED: &str = "/* truncated */";
const UNKNOWN: &str = "unknown";
/// The smallest budget a type is ever rendered into (`unknown`).
pub(crate) const MIN_BUDGET: usize = UNKNOWN.len();
/// `{ /* truncated */ }`
const MIN_OBJECT: usize = 4 + TRUNCATED.len();
/// Nesting beyond this renders as `unknown` (pathological or adversarial).
const MAX_DEPTH: usize = 24;

/// Rendered text: keywords and type names are borrowed, composites owned.
type Text = Cow<'static, str>;

/// How a rendered type binds, for parenthesizing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prec {
    Union,
    Intersection,
    Atom,
}

pub(crate) struct Renderer<'a> {
    resolver: Resolver<'a>,
    /// `$ref` strings being expanded, to cut recursion.
    stack: Vec<&'a str>,
    pub truncated: bool,
    /// A constraint comment being built (kept to reuse its allocation).
    comment: String,
}

impl<'a> Renderer<'a> {
    pub fn new(root: &'a Value) -> Renderer<'a> {
        Renderer {
            resolver: Resolver::new(root),
            stack: Vec::new(),
            truncated: false,
            comment: String::new(),
        }
    }

    pub fn resolver(&self) -> &Resolver<'a> {
        &self.resolver
    }

    /// Render `schema` into at most `budget` bytes.
    pub fn render(&mut self, schema: &'a Value, budget: usize) -> String {
        self.ty(schema, budget.max(MIN_BUDGET), 0).0.into_owned()
    }

    /// Render the members of an already-resolved object shape.
    pub fn render_object(&mut self, shape: &ObjectShape<'a>, budget: usize) -> String {
        self.object(shape, budget.max(MIN_BUDGET), 0).into_owned()
    }

    fn degrade(&mut self) -> (Text, Prec) {
        self.truncated = true;
        (Cow::Borrowed(UNKNOWN), Prec::Atom)
    }

    fn ty(&mut self, schema: &'a Value, budget: usize, depth: usize) -> (Text, Prec) {
        if depth > MAX_DEPTH {
            return self.degrade();
        }
        let reference = value_field(schema, "$ref").and_then(Value::as_str);
        if let Some(r) = reference {
            if self.stack.contains(&r) {
                // A recursive reference: the shape repeats itself from here.
                return (Cow::Borrowed(UNKNOWN), Prec::Atom);
            }
            self.stack.push(r);
        }
        let out = match self.resolver.deref(schema) {
            Deref::Unresolvable => (Cow::Borrowed(UNKNOWN), Prec::Atom),
            Deref::Schema(s) => self.resolved(s, budget, depth),
        };
        if reference.is_some() {
            self.stack.pop();
        }
        out
    }

    fn resolved(&mut self, schema: &'a Value, budget: usize, depth: usize) -> (Text, Prec) {
        let map = match schema {
            Value::Bool(true) => return (Cow::Borrowed(UNKNOWN), Prec::Atom),
            Value::Bool(false) => return (Cow::Borrowed("never"), Prec::Atom),
            Value::Object(m) => m,
            _ => return (Cow::Borrowed(UNKNOWN), Prec::Atom),
        };
        let view = View::of(map);
        // Nested schemas render while this comment is held: they start
        // their own buffer, and this one is handed back at the end.
        let mut buf = std::mem::take(&mut self.comment);
        buf.clear();
        let comment = constraints(&view, &mut buf).then_some(buf.as_str());
        let nullable = view.nullable;
        let reserve = comment.as_ref().map_or(0, |c| c.len() + 1) + if nullable { 7 } else { 0 };
        let inner_budget = if budget >= reserve + MIN_BUDGET {
            budget - reserve
        } else {
            budget
        };
        let (mut text, mut prec) = self.bare(map, &view, inner_budget, depth);
        let suffix = if nullable && text.len() + 7 <= budget {
            prec = Prec::Union;
            7
        } else {
            0
        };
        let fits = comment
            .as_ref()
            .is_some_and(|c| text.len() + suffix + 1 + c.len() <= budget);
        if suffix > 0 || fits {
            let extra = suffix + comment.as_ref().map_or(0, |c| c.len() + 1);
            let mut t = String::with_capacity(text.len() + extra);
            t.push_str(&text);
            if suffix > 0 {
                // `|` binds loosest: a union member never needs parentheses.
                t.push_str(" | null");
            }
            text = t.into();
        }
        if let Some(c) = comment {
            if fits {
                let t = text.to_mut();
                t.push(' ');
                t.push_str(c);
            } else {
                // The exact constraint is dropped; `describe` has it.
                self.truncated = true;
            }
        }
        self.comment = buf;
        (text, prec)
    }

    fn bare(
        &mut self,
        map: &'a Map<String, Value>,
        view: &View<'a>,
        budget: usize,
        depth: usize,
    ) -> (Text, Prec) {
        if let Some(c) = view.const_ {
            return self.literals(std::slice::from_ref(c), budget);
        }
        if let Some(Value::Array(values)) = view.enum_ {
            return self.literals(values, budget);
        }
        for alts in [view.any_of, view.one_of] {
            if let Some(Value::Array(alts)) = alts {
                return self.union(alts.iter().collect(), budget, depth);
            }
        }
        if let Some(Value::Array(all)) = view.all_of {
            if let Some(shape) = self.resolver.object_shape_of_map(map) {
                return (self.object(&shape, budget, depth), Prec::Atom);
            }
            return self.intersection(all, budget, depth);
        }
        match view.type_ {
            Some(Value::String(t)) => self.typed(t, map, view, budget, depth),
            Some(Value::Array(types)) => {
                let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
                let mut parts: Vec<(Text, Prec)> = Vec::with_capacity(names.len());
                let mut used = 0;
                for (i, t) in names.iter().enumerate() {
                    let sep = if i == 0 { 0 } else { 3 };
                    if budget < used + sep + MIN_BUDGET {
                        return self.degrade();
                    }
                    let part = self.typed(t, map, view, budget - used - sep, depth);
                    used += sep + part.0.len();
                    parts.push(part);
                }
                join_union(parts, budget).unwrap_or_else(|| self.degrade())
            }
            _ => {
                if view.properties || view.required || view.additional.is_some_and(Value::is_object)
                {
                    self.typed("object", map, view, budget, depth)
                } else if view.items.is_some() || view.prefix_items.is_some() {
                    self.typed("array", map, view, budget, depth)
                } else {
                    (Cow::Borrowed(UNKNOWN), Prec::Atom)
                }
            }
        }
    }

    fn typed(
        &mut self,
        t: &str,
        map: &'a Map<String, Value>,
        view: &View<'a>,
        budget: usize,
        depth: usize,
    ) -> (Text, Prec) {
        match t {
            "string" | "number" | "integer" | "boolean" | "null" => {
                if t.len() <= budget {
                    let name = match t {
                        "string" => "string",
                        "number" => "number",
                        "integer" => "integer",
                        "boolean" => "boolean",
                        _ => "null",
                    };
                    (Cow::Borrowed(name), Prec::Atom)
                } else {
                    self.degrade()
                }
            }
            "object" => {
                let shape = self.resolver.object_shape_of_map(map).unwrap_or_default();
                (self.object(&shape, budget, depth), Prec::Atom)
            }
            "array" => self.array(view, budget, depth),
            _ => (Cow::Borrowed(UNKNOWN), Prec::Atom),
        }
    }

    fn array(&mut self, view: &View<'a>, budget: usize, depth: usize) -> (Text, Prec) {
        let tuple = view
            .prefix_items
            .or_else(|| view.items.filter(|v| v.is_array()))
            .and_then(Value::as_array);
        if let Some(items) = tuple {
            let mut out = String::from("[");
            for (i, item) in items.iter().enumerate() {
                let sep = if i == 0 { 0 } else { 2 };
                if budget < out.len() + sep + MIN_BUDGET + 1 {
                    self.truncated = true;
                    return (Cow::Borrowed("unknown[]"), Prec::Atom);
                }
                let (t, _) = self.ty(item, budget - out.len() - sep - 1, depth + 1);
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&t);
            }
            out.push(']');
            return (out.into(), Prec::Atom);
        }
        let Some(items) = view.items else {
            return fit_or_unknown(self, "unknown[]", budget);
        };
        if budget < MIN_BUDGET + 2 {
            return self.degrade();
        }
        // Room for the brackets and, if the element is a union, parentheses.
        let (t, p) = self.ty(items, budget - 4, depth + 1);
        let mut text = String::with_capacity(t.len() + 4);
        push_paren(&mut text, &t, p, Prec::Atom);
        text.push_str("[]");
        if text.len() <= budget {
            (text.into(), Prec::Atom)
        } else {
            self.truncated = true;
            fit_or_unknown(self, "unknown[]", budget)
        }
    }

    fn union(&mut self, alts: Vec<&'a Value>, budget: usize, depth: usize) -> (Text, Prec) {
        let mut parts: Vec<(Text, Prec)> = Vec::with_capacity(alts.len());
        let mut used = 0;
        for (i, alt) in alts.into_iter().enumerate() {
            let sep = if i == 0 { 0 } else { 3 };
            if budget < used + sep + MIN_BUDGET {
                return self.degrade();
            }
            let part = self.ty(alt, budget - used - sep, depth + 1);
            used += sep + part.0.len();
            parts.push(part);
        }
        join_union(parts, budget).unwrap_or_else(|| self.degrade())
    }

    fn intersection(&mut self, all: &'a [Value], budget: usize, depth: usize) -> (Text, Prec) {
        let mut out = String::new();
        for (i, part) in all.iter().enumerate() {
            let sep = if i == 0 { 0 } else { 3 };
            if budget < out.len() + sep + MIN_BUDGET + 2 {
                return self.degrade();
            }
            let (t, p) = self.ty(part, budget - out.len() - sep - 2, depth + 1);
            if i > 0 {
                out.push_str(" & ");
            }
            push_paren(&mut out, &t, p, Prec::Intersection);
        }
        if out.is_empty() {
            return (Cow::Borrowed(UNKNOWN), Prec::Atom);
        }
        if out.len() > budget {
            return self.degrade();
        }
        (
            out.into(),
            if all.len() > 1 {
                Prec::Intersection
            } else {
                Prec::Atom
            },
        )
    }

    /// Enum and const values as literals; a list that does not fit becomes
    /// its base type.
    fn literals(&mut self, values: &[Value], budget: usize) -> (Text, Prec) {
        let mut out = String::with_capacity(32);
        for (i, v) in values.iter().enumerate() {
            if !matches!(
                v,
                Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null
            ) {
                return self.degrade();
            }
            if i > 0 {
                out.push_str(" | ");
            }
            push_json(&mut out, v);
            if out.len() > budget {
                self.truncated = true;
                let base = base_type(values);
                return fit_or_unknown(self, base, budget);
            }
        }
        if out.is_empty() {
            return (Cow::Borrowed("never"), Prec::Atom);
        }
        let prec = if values.len() > 1 {
            Prec::Union
        } else {
            Prec::Atom
        };
        (out.into(), prec)
    }

    fn object(&mut self, shape: &ObjectShape<'a>, budget: usize, depth: usize) -> Text {
        let members = shape.ordered();
        if members.is_empty() && shape.additional.is_none() {
            return Cow::Borrowed("{}");
        }
        if budget < MIN_OBJECT {
            self.truncated = true;
            return Cow::Borrowed(UNKNOWN);
        }
        let total = members.len() + usize::from(shape.additional.is_some());
        let mut out = String::with_capacity(budget.min(256));
        out.push_str("{ ");
        let mut written = 0;
        let mut cut = false;
        for idx in 0..total {
            // `name?: ` (the key as the grammar spells it) or the index
            // signature; only its length is needed before the type fits.
            let (member, schema) = if idx < members.len() {
                let (name, schema, required) = members[idx];
                (Some((name, required)), schema)
            } else {
                (None, shape.additional)
            };
            let prefix_len = match member {
                Some((name, required)) => key_len(name) + usize::from(!required) + 2,
                None => INDEX_SIGNATURE.len(),
            };
            let sep = if written == 0 { 0 } else { 2 };
            let last = idx + 1 == total;
            // Leave room to close with "; /* truncated */ }" unless last.
            let reserve = if last { 2 } else { 2 + 2 + TRUNCATED.len() };
            let avail = budget.saturating_sub(out.len() + sep + reserve + prefix_len);
            if avail < MIN_BUDGET {
                cut = true;
                break;
            }
            let (t, _) = match schema {
                Some(s) => self.ty(s, avail, depth + 1),
                None => (Cow::Borrowed(UNKNOWN), Prec::Atom),
            };
            if sep > 0 {
                out.push_str("; ");
            }
            match member {
                Some((name, required)) => {
                    push_key(&mut out, name);
                    out.push_str(if required { ": " } else { "?: " });
                }
                None => out.push_str(INDEX_SIGNATURE),
            }
            out.push_str(&t);
            written += 1;
        }
        if cut {
            self.truncated = true;
            if written > 0 {
                out.push_str("; ");
            }
            out.push_str(TRUNCATED);
        }
        out.push_str(" }");
        out.into()
    }
}

fn fit_or_unknown(r: &mut Renderer<'_>, text: &'static str, budget: usize) -> (Text, Prec) {
    if text.len() <= budget {
        (Cow::Borrowed(text), Prec::Atom)
    } else {
        r.degrade()
    }
}

fn join_union(mut parts: Vec<(Text, Prec)>, budget: usize) -> Option<(Text, Prec)> {
    let n = parts.len();
    let out: Text = match n {
        0 => Cow::Borrowed(""),
        1 => parts.pop().map_or(Cow::Borrowed(""), |(t, _)| t),
        _ => {
            let mut out = String::with_capacity(parts.iter().map(|(t, _)| t.len() + 3).sum());
            for (i, (t, _)) in parts.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                // A union member never needs parentheses: `|` binds loosest.
                out.push_str(t);
            }
            out.into()
        }
    };
    if out.is_empty() {
        return Some((Cow::Borrowed("never"), Prec::Atom));
    }
    (out.len() <= budget).then_some((out, if n > 1 { Prec::Union } else { Prec::Atom }))
}

/// `text`, parenthesized when its binding is looser than `context` needs.
fn push_paren(out: &mut String, text: &str, prec: Prec, context: Prec) {
    let needs = match context {
        Prec::Atom => prec != Prec::Atom,
        Prec::Intersection => prec == Prec::Union,
        Prec::Union => false,
    };
    if needs {
        out.push('(');
        out.push_str(text);
        out.push(')');
    } else {
        out.push_str(text);
    }
}

fn base_type(values: &[Value]) -> &'static str {
    let mut kinds = values.iter().map(|v| match v {
        Value::String(_) => "string",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        _ => UNKNOWN,
    });
    let first = kinds.next().unwrap_or(UNKNOWN);
    if kinds.all(|k| k == first) {
        first
    } else {
        UNKNOWN
    }
}

const INDEX_SIGNATURE: &str = "[key: string]: ";
