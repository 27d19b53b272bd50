//! Guest values → JSON text, bounded, inside the worker (contract P3, X9).
//!
//! This module owns the one walk that decides whether a guest value can cross
//! the bridge: host-call arguments and the completion value both go through
//! it. It follows `JSON.stringify` (own enumerable string keys, `toJSON`,
//! `undefined` members omitted, non-finite numbers as `null`) except that it
//! refuses what `JSON.stringify` would silently lose: cycles, BigInts,
//! functions, symbols and promises fail with the path where they were found.
//!
//! Bounds: output bytes (checked as it writes, so an over-bound value is
//! refused before it is fully built) and nesting depth ([`MAX_DEPTH`], which
//! also keeps this recursion far from the native stack's end).
//!
//! Must never: call the program's globals (`JSON`, `Object`…) — it walks with
//! engine primitives only, so a polluted `JSON.stringify` cannot change what
//! crosses. Getters and `toJSON` are the program's own code and run under the
//! same CPU budget as the rest of it.

use std::fmt::Write as _;

use rquickjs::function::This;
use rquickjs::object::Filter;
use rquickjs::{Ctx, Function, Object, Type, Value};

/// Deepest nesting a value may have. Stays below the 128-level recursion
/// limit of the JSON parser on the host side.
pub const MAX_DEPTH: usize = 100;

/// Why a value cannot cross.
#[derive(Debug)]
pub enum ToJsonError {
    /// A value JSON cannot represent (`what` names it), at `path`.
    NotJson { what: &'static str, path: Path },
    /// The value refers to one of its own ancestors.
    Cycle { path: Path },
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep { path: Path },
    /// The serialized text would exceed the bound.
    TooLarge { limit: usize },
    /// A string holding an unpaired UTF-16 surrogate.
    BadString { path: Path },
    /// A getter or `toJSON` threw; the exception is pending in the context.
    Thrown(rquickjs::Error),
}

impl From<rquickjs::Error> for ToJsonError {
    fn from(e: rquickjs::Error) -> Self {
        ToJsonError::Thrown(e)
    }
}

/// A location inside a value, collected innermost-first while unwinding.
#[derive(Debug, Default)]
pub struct Path(Vec<Segment>);

#[derive(Debug)]
enum Segment {
    Key(String),
    Index(usize),
}

impl Path {
    /// Renders the path below `root` (`result.items[3].name`).
    pub fn render(&self, root: &str) -> String {
        let mut s = String::from(root);
        for seg in self.0.iter().rev() {
            match seg {
                Segment::Index(i) => {
                    let _ = write!(s, "[{i}]");
                }
                Segment::Key(k) if is_identifier(k) => {
                    s.push('.');
                    s.push_str(k);
                }
                Segment::Key(k) => {
                    s.push('[');
                    push_json_string(&mut s, k);
                    s.push(']');
                }
            }
        }
        s
    }
}

impl ToJsonError {
    fn at(mut self, seg: Segment) -> Self {
        match &mut self {
            ToJsonError::NotJson { path, .. }
            | ToJsonError::Cycle { path }
            | ToJsonError::TooDeep { path }
            | ToJsonError::BadString { path } => path.0.push(seg),
            ToJsonError::TooLarge { .. } | ToJsonError::Thrown(_) => {}
        }
        self
    }

    /// A message for the program or the model; `None` for `Thrown`, whose
    /// message is the exception's own.
    pub fn describe(&self, root: &str) -> Option<String> {
        Some(match self {
            ToJsonError::NotJson { what, path } => {
                format!(
                    "{} is {what}, which cannot cross as JSON",
                    path.render(root)
                )
            }
            ToJsonError::Cycle { path } => format!(
                "{} refers back to an enclosing object (a cycle), which cannot cross as JSON",
                path.render(root)
            ),
            ToJsonError::TooDeep { path } => format!(
                "{} is nested more than {MAX_DEPTH} levels deep",
                path.render(root)
            ),
            ToJsonError::TooLarge { limit } => {
                format!("{root} is larger than the {limit}-byte bound")
            }
            ToJsonError::BadString { path } => format!(
                "{} is a string with an unpaired surrogate, which is not valid Unicode",
                path.render(root)
            ),
            ToJsonError::Thrown(_) => return None,
        })
    }
}

/// The key a value was reached by, passed to `toJSON` like `JSON.stringify` does.
#[derive(Clone, Copy)]
enum Key<'a> {
    Root,
    Name(&'a str),
    Index(usize),
}

impl Key<'_> {
    fn to_js_string(self) -> String {
        match self {
            Key::Root => String::new(),
            Key::Name(n) => n.to_owned(),
            Key::Index(i) => i.to_string(),
        }
    }
}

/// Serializes `value`; `Ok(None)` when it is `undefined` (no value).
pub fn to_json<'js>(
    ctx: &Ctx<'js>,
    value: Value<'js>,
    limit: usize,
) -> Result<Option<String>, ToJsonError> {
    let mut enc = Encoder::new(ctx, limit);
    if enc.value(value, Key::Root, 0)? {
        Ok(Some(enc.out))
    } else {
        Ok(None)
    }
}

/// Serializes a call's arguments as one JSON array (`undefined` → `null`).
pub fn args_to_json<'js>(
    ctx: &Ctx<'js>,
    args: Vec<Value<'js>>,
    limit: usize,
) -> Result<String, ToJsonError> {
    let mut enc = Encoder::new(ctx, limit);
    enc.out.push('[');
    for (i, arg) in args.into_iter().enumerate() {
        if i > 0 {
            enc.out.push(',');
        }
        if !enc
            .value(arg, Key::Index(i), 1)
            .map_err(|e| e.at(Segment::Index(i)))?
        {
            enc.out.push_str("null");
        }
        enc.check()?;
    }
    enc.out.push(']');
    enc.check()?;
    Ok(enc.out)
}

struct Encoder<'js> {
    out: String,
    limit: usize,
    /// Objects currently being written, outermost first (cycle detection).
    ancestors: Vec<Object<'js>>,
    _ctx: Ctx<'js>,
}

impl<'js> Encoder<'js> {
    fn new(ctx: &Ctx<'js>, limit: usize) -> Self {
        Self {
            out: String::new(),
            limit,
            ancestors: Vec::new(),
            _ctx: ctx.clone(),
        }
    }

    fn check(&self) -> Result<(), ToJsonError> {
        if self.out.len() > self.limit {
            Err(ToJsonError::TooLarge { limit: self.limit })
        } else {
            Ok(())
        }
    }

    /// Writes one value; `Ok(false)` means it was `undefined` and nothing was written.
    fn value(
        &mut self,
        value: Value<'js>,
        key: Key<'_>,
        depth: usize,
    ) -> Result<bool, ToJsonError> {
        let value = self.apply_to_json(value, key)?;
        match value.type_of() {
            Type::Undefined | Type::Uninitialized => return Ok(false),
            Type::Null => self.out.push_str("null"),
            Type::Bool => self.out.push_str(if value.as_bool() == Some(true) {
                "true"
            } else {
                "false"
            }),
            Type::Int => {
                let _ = write!(self.out, "{}", value.as_int().unwrap_or(0));
            }
            Type::Float => push_number(&mut self.out, value.as_float().unwrap_or(f64::NAN)),
            Type::String => {
                let s = value
                    .as_string()
                    .map(|s| s.to_string())
                    .transpose()
                    .map_err(|_| ToJsonError::BadString {
                        path: Path::default(),
                    })?
                    .unwrap_or_default();
                push_json_string(&mut self.out, &s);
            }
            Type::Symbol => return Err(not_json("a symbol")),
            Type::BigInt => return Err(not_json("a BigInt")),
            Type::Function | Type::Constructor => return Err(not_json("a function")),
            Type::Promise => return Err(not_json("a Promise (a missing `await`?)")),
            Type::Module | Type::Unknown => return Err(not_json("an engine-internal value")),
            Type::Array | Type::Exception | Type::Proxy | Type::Object => {
                let Some(obj) = value.into_object() else {
                    return Err(not_json("an engine-internal value"));
                };
                if obj.is_function() {
                    return Err(not_json("a function"));
                }
                if depth >= MAX_DEPTH {
                    return Err(ToJsonError::TooDeep {
                        path: Path::default(),
                    });
                }
                if self.ancestors.iter().any(|a| a == &obj) {
                    return Err(ToJsonError::Cycle {
                        path: Path::default(),
                    });
                }
                self.ancestors.push(obj.clone());
                let written = if obj.is_array() {
                    self.array(&obj, depth)
                } else {
                    self.object(&obj, depth)
                };
                self.ancestors.pop();
                written?;
            }
        }
        self.check()?;
        Ok(true)
    }

    fn apply_to_json(
        &mut self,
        value: Value<'js>,
        key: Key<'_>,
    ) -> Result<Value<'js>, ToJsonError> {
        let Some(obj) = value.as_object() else {
            return Ok(value);
        };
        let to_json: Value<'js> = obj.get("toJSON")?;
        match to_json.into_function() {
            Some(f) => Ok(call_to_json(&f, obj.clone(), key)?),
            None => Ok(value),
        }
    }

    fn array(&mut self, arr: &Object<'js>, depth: usize) -> Result<(), ToJsonError> {
        let len: Value<'js> = arr.get("length")?;
        let len = len.as_number().unwrap_or(0.0);
        let len = if len.is_finite() && len > 0.0 {
            len as usize
        } else {
            0
        };
        self.out.push('[');
        for i in 0..len {
            if i > 0 {
                self.out.push(',');
            }
            let item: Value<'js> = arr.get(i as u32)?;
            if !self
                .value(item, Key::Index(i), depth + 1)
                .map_err(|e| e.at(Segment::Index(i)))?
            {
                self.out.push_str("null");
            }
            // Sparse giants (`new Array(1e9)`) stop at the byte bound.
            self.check()?;
        }
        self.out.push(']');
        Ok(())
    }

    fn object(&mut self, obj: &Object<'js>, depth: usize) -> Result<(), ToJsonError> {
        self.out.push('{');
        let mut first = true;
        if obj.is_error() {
            // An Error's name and message are not enumerable; carry them anyway
            // so `return {error: e}` does not come back as `{}`.
            for field in ["name", "message"] {
                let v: Value<'js> = obj.get(field)?;
                if let Some(s) = v.as_string() {
                    let s = s.to_string().unwrap_or_default();
                    if !first {
                        self.out.push(',');
                    }
                    first = false;
                    push_json_string(&mut self.out, field);
                    self.out.push(':');
                    push_json_string(&mut self.out, &s);
                }
            }
        }
        let keys: Vec<String> = obj
            .own_keys::<String>(Filter::new().string().enum_only())
            .collect::<rquickjs::Result<_>>()?;
        for key in keys {
            let v: Value<'js> = obj.get(key.as_str())?;
            let mark = self.out.len();
            if !first {
                self.out.push(',');
            }
            push_json_string(&mut self.out, &key);
            self.out.push(':');
            match self.value(v, Key::Name(&key), depth + 1) {
                Ok(true) => first = false,
                // `undefined` members are omitted, as in JSON.stringify.
                Ok(false) => self.out.truncate(mark),
                Err(e) => return Err(e.at(Segment::Key(key))),
            }
        }
        self.out.push('}');
        Ok(())
    }
}

fn call_to_json<'js>(
    f: &Function<'js>,
    this: Object<'js>,
    key: Key<'_>,
) -> rquickjs::Result<Value<'js>> {
    f.call((This(this), key.to_js_string()))
}

fn not_json(what: &'static str) -> ToJsonError {
    ToJsonError::NotJson {
        what,
        path: Path::default(),
    }
}

/// Writes a number the way JSON can carry it (non-finite → `null`, `-0` → `0`).
fn push_number(out: &mut String, f: f64) {
    if !f.is_finite() {
        out.push_str("null");
    } else if f == 0.0 {
        out.push('0');
    } else if f.fract() == 0.0 && f.abs() < 9.0e15 {
        let _ = write!(out, "{}", f as i64);
    } else if f.abs() >= 1e21 || f.abs() < 1e-6 {
        let _ = write!(out, "{f:e}");
    } else {
        let _ = write!(out, "{f}");
    }
}

/// Appends `s` as a JSON string literal.
pub fn push_json_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                let _ = write!(out, "\\u{b:04x}");
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_json() {
        let mut s = String::new();
        push_json_string(&mut s, "a\"b\\c\n\u{1}é");
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\u0001é\"");
        let back: String = serde_json::from_str(&s).expect("valid JSON");
        assert_eq!(back, "a\"b\\c\n\u{1}é");
    }

    #[test]
    fn numbers_are_valid_json() {
        for (f, want) in [
            (1.5, "1.5"),
            (3.0, "3"),
            (-0.0, "0"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
            (1e300, "1e300"),
            (1e-7, "1e-7"),
        ] {
            let mut s = String::new();
            push_number(&mut s, f);
            assert_eq!(s, want);
            let _: serde_json::Value = serde_json::from_str(&s).expect("valid JSON");
        }
    }

    #[test]
    fn paths_render_innermost_last() {
        let p = Path(vec![
            Segment::Key("a b".into()),
            Segment::Index(3),
            Segment::Key("items".into()),
        ]);
        assert_eq!(p.render("result"), "result.items[3][\"a b\"]");
    }
}
