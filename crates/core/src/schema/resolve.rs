//! Local `$ref` resolution and `allOf` composition: the one walk that both
//! the compact renderer and the key lists use, so they can never disagree.

use serde_json::{Map, Value};

/// How many `$ref` hops are followed before a chain counts as unresolvable.
const MAX_REF_HOPS: usize = 16;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolver<'a> {
    root: &'a Value,
}

/// A schema after following its `$ref` chain.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Deref<'a> {
    Schema(&'a Value),
    /// A remote, malformed, or dangling `$ref`, or a chain that loops.
    Unresolvable,
}

/// An object shape: properties in declaration order, `allOf` branches merged.
#[derive(Debug, Default)]
pub(crate) struct ObjectShape<'a> {
    pub props: Vec<(&'a str, &'a Value)>,
    pub required: Vec<&'a str>,
    /// `additionalProperties` when it is a schema (not a boolean).
    pub additional: Option<&'a Value>,
}

impl<'a> ObjectShape<'a> {
    /// Member names, required first (each group in declaration order);
    /// required names with no property schema are members too.
    pub fn ordered(&self) -> Vec<(&'a str, Option<&'a Value>, bool)> {
        let mut out = Vec::with_capacity(self.props.len() + self.required.len());
        for &r in &self.required {
            if out.iter().any(|&(n, _, _)| n == r) {
                continue;
            }
            let schema = self.props.iter().find(|(n, _)| *n == r).map(|(_, s)| *s);
            out.push((r, schema, true));
        }
        for &(n, s) in &self.props {
            if !self.required.contains(&n) {
                out.push((n, Some(s), false));
            }
        }
        out
    }
}

impl<'a> Resolver<'a> {
    pub fn new(root: &'a Value) -> Resolver<'a> {
        Resolver { root }
    }

    /// Follow `$ref` until a schema without one (siblings of a `$ref` are
    /// ignored, as in draft-07; later drafts' merging is rare in tool schemas).
    pub fn deref(&self, mut schema: &'a Value) -> Deref<'a> {
        for _ in 0..MAX_REF_HOPS {
            let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
                return Deref::Schema(schema);
            };
            match self.pointer(r) {
                Some(next) => schema = next,
                None => return Deref::Unresolvable,
            }
        }
        Deref::Unresolvable
    }

    /// A local JSON pointer (`#`, `#/$defs/x`, `#/definitions/x`, escaped).
    fn pointer(&self, reference: &str) -> Option<&'a Value> {
        let frag = reference.strip_prefix('#')?;
        if frag.is_empty() {
            return Some(self.root);
        }
        let mut cur = self.root;
        for raw in frag.strip_prefix('/')?.split('/') {
            let seg = percent_decode(raw).replace("~1", "/").replace("~0", "~");
            cur = match cur {
                Value::Object(m) => m.get(&seg)?,
                Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    /// The object shape of a schema (after `$ref`), merging `allOf`
    /// branches, or `None` when it is not an object shape.
    pub fn object_shape(&self, schema: &'a Value) -> Option<ObjectShape<'a>> {
        self.shape_at(schema, 0)
    }

    fn shape_at(&self, schema: &'a Value, depth: usize) -> Option<ObjectShape<'a>> {
        let Deref::Schema(schema) = self.deref(schema) else {
            return None;
        };
        let map = schema.as_object()?;
        if !is_object_like(map) {
            return None;
        }
        self.merge(map, depth)
    }

    /// The object shape of a schema map: its own properties plus those of
    /// its `allOf` branches, each of which must be an object shape too.
    pub(crate) fn object_shape_of_map(
        &self,
        map: &'a Map<String, Value>,
    ) -> Option<ObjectShape<'a>> {
        self.merge(map, 0)
    }

    fn merge(&self, map: &'a Map<String, Value>, depth: usize) -> Option<ObjectShape<'a>> {
        if depth > MAX_REF_HOPS {
            return None;
        }
        let mut shape = ObjectShape::default();
        if let Some(props) = map.get("properties").and_then(Value::as_object) {
            for (k, v) in props {
                shape.props.push((k.as_str(), v));
            }
        }
        if let Some(req) = map.get("required").and_then(Value::as_array) {
            for r in req.iter().filter_map(Value::as_str) {
                if !shape.required.contains(&r) {
                    shape.required.push(r);
                }
            }
        }
        shape.additional = map.get("additionalProperties").filter(|v| v.is_object());
        if let Some(all) = map.get("allOf").and_then(Value::as_array) {
            for branch in all {
                let other = self.shape_at(branch, depth + 1)?;
                // A later branch that repeats a property narrows it; the
                // first (usually the fuller) declaration is kept.
                for (k, v) in other.props {
                    if !shape.props.iter().any(|(n, _)| *n == k) {
                        shape.props.push((k, v));
                    }
                }
                for r in other.required {
                    if !shape.required.contains(&r) {
                        shape.required.push(r);
                    }
                }
                if shape.additional.is_none() {
                    shape.additional = other.additional;
                }
            }
        }
        Some(shape)
    }
}

/// An object schema, or a schema that only constrains objects. Unions and
/// non-object types are not object shapes.
fn is_object_like(map: &Map<String, Value>) -> bool {
    if ["anyOf", "oneOf", "enum", "const"]
        .iter()
        .any(|k| map.contains_key(*k))
    {
        return false;
    }
    match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
        None => {
            map.contains_key("properties")
                || map.contains_key("required")
                || map.contains_key("allOf")
                || map
                    .get("additionalProperties")
                    .is_some_and(Value::is_object)
        }
    }
}

fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}
