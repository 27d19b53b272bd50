//! The budgeted renderer: JSON Schema → one line of the TypeScript-like
//! grammar in [`super::grammar`], never longer than its byte budget.
//!
//! Every function here returns text that fits the budget it was given
//! (budgets are at least [`MIN_BUDGET`]). When the natural rendering does not
//! fit, it degrades locally and stays valid: an object keeps the members that
//! fit and closes with `/* truncated */`, a union, enum or tuple that does not
//! fit becomes `unknown` (or its base type), an array becomes `unknown[]`.
//! Each degradation sets the `truncated` flag.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::resolve::{Deref, ObjectShape, Resolver};

pub(crate) const TRUNCATED: &str = "/* truncated */";
const UNKNOWN: &str = "unknown";
/// The smallest budget a type is ever rendered into (`unknown`).
pub(crate) const MIN_BUDGET: usize = UNKNOWN.len();
/// `{ /* truncated */ }`
const MIN_OBJECT: usize = 4 + TRUNCATED.len();
/// Nesting beyond this renders as `unknown` (pathological or adversarial).
const MAX_DEPTH: usize = 24;
/// Short patterns are shown in comments; long ones are left to `describe`.
const MAX_PATTERN: usize = 40;

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
}

impl<'a> Renderer<'a> {
    pub fn new(root: &'a Value) -> Renderer<'a> {
        Renderer {
            resolver: Resolver::new(root),
            stack: Vec::new(),
            truncated: false,
        }
    }

    pub fn resolver(&self) -> &Resolver<'a> {
        &self.resolver
    }

    /// Render `schema` into at most `budget` bytes.
    pub fn render(&mut self, schema: &'a Value, budget: usize) -> String {
        self.ty(schema, budget.max(MIN_BUDGET), 0).0
    }

    /// Render the members of an already-resolved object shape.
    pub fn render_object(&mut self, shape: &ObjectShape<'a>, budget: usize) -> String {
        self.object(shape, budget.max(MIN_BUDGET), 0)
    }

    fn degrade(&mut self) -> (String, Prec) {
        self.truncated = true;
        (UNKNOWN.to_owned(), Prec::Atom)
    }

    fn ty(&mut self, schema: &'a Value, budget: usize, depth: usize) -> (String, Prec) {
        if depth > MAX_DEPTH {
            return self.degrade();
        }
        let reference = schema.get("$ref").and_then(Value::as_str);
        if let Some(r) = reference {
            if self.stack.contains(&r) {
                // A recursive reference: the shape repeats itself from here.
                return (UNKNOWN.to_owned(), Prec::Atom);
            }
            self.stack.push(r);
        }
        let out = match self.resolver.deref(schema) {
            Deref::Unresolvable => (UNKNOWN.to_owned(), Prec::Atom),
            Deref::Schema(s) => self.resolved(s, budget, depth),
        };
        if reference.is_some() {
            self.stack.pop();
        }
        out
    }

    fn resolved(&mut self, schema: &'a Value, budget: usize, depth: usize) -> (String, Prec) {
        let map = match schema {
            Value::Bool(true) => return (UNKNOWN.to_owned(), Prec::Atom),
            Value::Bool(false) => return ("never".to_owned(), Prec::Atom),
            Value::Object(m) => m,
            _ => return (UNKNOWN.to_owned(), Prec::Atom),
        };
        let comment = constraints(map);
        let nullable = map.get("nullable") == Some(&Value::Bool(true));
        let reserve = comment.as_ref().map_or(0, |c| c.len() + 1) + if nullable { 7 } else { 0 };
        let inner_budget = if budget >= reserve + MIN_BUDGET {
            budget - reserve
        } else {
            budget
        };
        let (mut text, mut prec) = self.bare(map, inner_budget, depth);
        if nullable && text.len() + 7 <= budget {
            text = format!("{} | null", paren(&text, prec, Prec::Union));
            prec = Prec::Union;
        }
        if let Some(c) = comment {
            if text.len() + 1 + c.len() <= budget {
                text.push(' ');
                text.push_str(&c);
            } else {
                // The exact constraint is dropped; `describe` has it.
                self.truncated = true;
            }
        }
        (text, prec)
    }

    fn bare(&mut self, map: &'a Map<String, Value>, budget: usize, depth: usize) -> (String, Prec) {
        if let Some(c) = map.get("const") {
            return self.literals(std::slice::from_ref(c), budget);
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return self.literals(values, budget);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alts)) = map.get(key) {
                return self.union(alts.iter().collect(), budget, depth);
            }
        }
        if let Some(Value::Array(all)) = map.get("allOf") {
            if let Some(shape) = self.resolver.object_shape_of_map(map) {
                return (self.object(&shape, budget, depth), Prec::Atom);
            }
            return self.intersection(all, budget, depth);
        }
        match map.get("type") {
            Some(Value::String(t)) => self.typed(t, map, budget, depth),
            Some(Value::Array(types)) => {
                let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
                let mut parts: Vec<(String, Prec)> = Vec::with_capacity(names.len());
                let mut used = 0;
                for (i, t) in names.iter().enumerate() {
                    let sep = if i == 0 { 0 } else { 3 };
                    if budget < used + sep + MIN_BUDGET {
                        return self.degrade();
                    }
                    let part = self.typed(t, map, budget - used - sep, depth);
                    used += sep + part.0.len();
                    parts.push(part);
                }
                join_union(parts, budget).unwrap_or_else(|| self.degrade())
            }
            _ => {
                if map.contains_key("properties")
                    || map.contains_key("required")
                    || map
                        .get("additionalProperties")
                        .is_some_and(Value::is_object)
                {
                    self.typed("object", map, budget, depth)
                } else if map.contains_key("items") || map.contains_key("prefixItems") {
                    self.typed("array", map, budget, depth)
                } else {
                    (UNKNOWN.to_owned(), Prec::Atom)
                }
            }
        }
    }

    fn typed(
        &mut self,
        t: &str,
        map: &'a Map<String, Value>,
        budget: usize,
        depth: usize,
    ) -> (String, Prec) {
        match t {
            "string" | "number" | "integer" | "boolean" | "null" => {
                if t.len() <= budget {
                    (t.to_owned(), Prec::Atom)
                } else {
                    self.degrade()
                }
            }
            "object" => {
                let shape = self.resolver.object_shape_of_map(map).unwrap_or_default();
                (self.object(&shape, budget, depth), Prec::Atom)
            }
            "array" => self.array(map, budget, depth),
            _ => (UNKNOWN.to_owned(), Prec::Atom),
        }
    }

    fn array(
        &mut self,
        map: &'a Map<String, Value>,
        budget: usize,
        depth: usize,
    ) -> (String, Prec) {
        let tuple = map
            .get("prefixItems")
            .or_else(|| map.get("items").filter(|v| v.is_array()))
            .and_then(Value::as_array);
        if let Some(items) = tuple {
            let mut out = String::from("[");
            for (i, item) in items.iter().enumerate() {
                let sep = if i == 0 { 0 } else { 2 };
                if budget < out.len() + sep + MIN_BUDGET + 1 {
                    self.truncated = true;
                    return ("unknown[]".to_owned(), Prec::Atom);
                }
                let (t, _) = self.ty(item, budget - out.len() - sep - 1, depth + 1);
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&t);
            }
            out.push(']');
            return (out, Prec::Atom);
        }
        let Some(items) = map.get("items") else {
            return fit_or_unknown(self, "unknown[]", budget);
        };
        if budget < MIN_BUDGET + 2 {
            return self.degrade();
        }
        // Room for the brackets and, if the element is a union, parentheses.
        let (t, p) = self.ty(items, budget - 4, depth + 1);
        let text = format!("{}[]", paren(&t, p, Prec::Atom));
        if text.len() <= budget {
            (text, Prec::Atom)
        } else {
            self.truncated = true;
            fit_or_unknown(self, "unknown[]", budget)
        }
    }

    fn union(&mut self, alts: Vec<&'a Value>, budget: usize, depth: usize) -> (String, Prec) {
        let mut parts: Vec<(String, Prec)> = Vec::with_capacity(alts.len());
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

    fn intersection(&mut self, all: &'a [Value], budget: usize, depth: usize) -> (String, Prec) {
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
            out.push_str(&paren(&t, p, Prec::Intersection));
        }
        if out.is_empty() {
            return (UNKNOWN.to_owned(), Prec::Atom);
        }
        if out.len() > budget {
            return self.degrade();
        }
        (
            out,
            if all.len() > 1 {
                Prec::Intersection
            } else {
                Prec::Atom
            },
        )
    }

    /// Enum and const values as literals; a list that does not fit becomes
    /// its base type.
    fn literals(&mut self, values: &[Value], budget: usize) -> (String, Prec) {
        let mut out = String::new();
        for (i, v) in values.iter().enumerate() {
            let lit = match v {
                Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => v.to_string(),
                _ => return self.degrade(),
            };
            if i > 0 {
                out.push_str(" | ");
            }
            out.push_str(&lit);
            if out.len() > budget {
                self.truncated = true;
                let base = base_type(values);
                return fit_or_unknown(self, base, budget);
            }
        }
        if out.is_empty() {
            return ("never".to_owned(), Prec::Atom);
        }
        let prec = if values.len() > 1 {
            Prec::Union
        } else {
            Prec::Atom
        };
        (out, prec)
    }

    fn object(&mut self, shape: &ObjectShape<'a>, budget: usize, depth: usize) -> String {
        let members = shape.ordered();
        if members.is_empty() && shape.additional.is_none() {
            return "{}".to_owned();
        }
        if budget < MIN_OBJECT {
            self.truncated = true;
            return UNKNOWN.to_owned();
        }
        let total = members.len() + usize::from(shape.additional.is_some());
        let mut out = String::from("{ ");
        let mut written = 0;
        let mut cut = false;
        for idx in 0..total {
            let (prefix, schema) = if idx < members.len() {
                let (name, schema, required) = members[idx];
                let mut p = key(name);
                if !required {
                    p.push('?');
                }
                p.push_str(": ");
                (p, schema)
            } else {
                ("[key: string]: ".to_owned(), shape.additional)
            };
            let sep = if written == 0 { 0 } else { 2 };
            let last = idx + 1 == total;
            // Leave room to close with "; /* truncated */ }" unless last.
            let reserve = if last { 2 } else { 2 + 2 + TRUNCATED.len() };
            let avail = budget.saturating_sub(out.len() + sep + reserve + prefix.len());
            if avail < MIN_BUDGET {
                cut = true;
                break;
            }
            let (t, _) = match schema {
                Some(s) => self.ty(s, avail, depth + 1),
                None => (UNKNOWN.to_owned(), Prec::Atom),
            };
            if sep > 0 {
                out.push_str("; ");
            }
            out.push_str(&prefix);
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
        out
    }
}

fn fit_or_unknown(r: &mut Renderer<'_>, text: &str, budget: usize) -> (String, Prec) {
    if text.len() <= budget {
        (text.to_owned(), Prec::Atom)
    } else {
        r.degrade()
    }
}

fn join_union(parts: Vec<(String, Prec)>, budget: usize) -> Option<(String, Prec)> {
    let n = parts.len();
    let mut out = String::new();
    for (i, (t, _)) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        // A union member never needs parentheses: `|` binds loosest.
        out.push_str(&t);
    }
    if out.is_empty() {
        return Some(("never".to_owned(), Prec::Atom));
    }
    (out.len() <= budget).then_some((out, if n > 1 { Prec::Union } else { Prec::Atom }))
}

fn paren(text: &str, prec: Prec, context: Prec) -> String {
    let needs = match context {
        Prec::Atom => prec != Prec::Atom,
        Prec::Intersection => prec == Prec::Union,
        Prec::Union => false,
    };
    if needs {
        format!("({text})")
    } else {
        text.to_owned()
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

/// A property key as the grammar spells it: bare when it is an identifier.
fn key(name: &str) -> String {
    let mut chars = name.chars();
    let ident = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if ident {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

/// Exact constraints worth keeping in a compact shape, as one comment.
fn constraints(map: &Map<String, Value>) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(f) = map.get("format").and_then(Value::as_str) {
        parts.push(f.to_owned());
    }
    let num = |k: &str| map.get(k).filter(|v| v.is_number());
    for (k, op) in [
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
    ] {
        if let Some(v) = num(k) {
            parts.push(format!("{op} {v}"));
        }
    }
    for (lo, hi, what) in [
        ("minLength", "maxLength", "length"),
        ("minItems", "maxItems", "items"),
    ] {
        match (num(lo), num(hi)) {
            (Some(a), Some(b)) => parts.push(format!("{what} {a}..{b}")),
            (Some(a), None) => parts.push(format!("{what} >= {a}")),
            (None, Some(b)) => parts.push(format!("{what} <= {b}")),
            (None, None) => {}
        }
    }
    if let Some(p) = map.get("pattern").and_then(Value::as_str)
        && p.len() <= MAX_PATTERN
    {
        parts.push(format!("pattern {p}"));
    }
    if let Some(d) = map.get("default") {
        let text = d.to_string();
        if text.len() <= MAX_PATTERN {
            parts.push(format!("default: {text}"));
        }
    }
    if parts.is_empty() {
        return None;
    }
    let mut out = String::from("/* ");
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        // A comment must not close early.
        let _ = write!(out, "{}", p.replace("*/", "*\\/"));
    }
    out.push_str(" */");
    Some(out)
}
