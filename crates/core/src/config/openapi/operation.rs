//! One OpenAPI operation → one [`ApiTool`], the form an `api` tool declared
//! by hand has: the same path template, arguments routed to the path, the
//! query, headers or the JSON body, and an input schema that every call is
//! validated against before a request is made.
//!
//! The input schema is an object with one property per parameter (path,
//! query, header) and, for a JSON request body, one per member of the body
//! when the body is a plain object whose members collide with no parameter,
//! else one `body` argument that is the whole body. Schemas the operation
//! references are copied into its `$defs`.

use oas3::spec::{
    ObjectOrReference, Operation, Parameter, ParameterIn, ParameterStyle, RequestBody,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::document::{Document, SpecError, escape};
use super::schema::{Defs, resolve};
use crate::address::sanitize_identifier;
use crate::config::{ApiTool, HttpMethod};

/// The largest input schema one operation may have once its references are
/// copied in (compact JSON). A document whose schemas are this big for one
/// call is a mistake to surface, not a catalog to build.
const MAX_INPUT_SCHEMA_BYTES: usize = 1024 * 1024;

/// Headers OpenAPI says a parameter may not define (they are ignored).
const IGNORED_HEADERS: &[&str] = &["accept", "content-type", "authorization"];

/// An operation of the document and where it is.
pub(super) struct Op<'d> {
    pub path: &'d str,
    pub method: HttpMethod,
    /// The method's key in the path item (`get`, `post`, …).
    pub key: &'static str,
    pub operation: &'d Operation,
    pub path_parameters: &'d [ObjectOrReference<Parameter>],
}

impl Op<'_> {
    /// The operation's JSON pointer (`/paths/~1pets~1{id}/get`).
    pub(super) fn pointer(&self) -> String {
        format!("/paths/{}/{}", escape(self.path), self.key)
    }

    /// The tool's name: the operationId, sanitized like every shortcut
    /// (so the address and the program shortcut read the same), else the
    /// method and the path (`get_pets_id`).
    pub(super) fn tool_name(&self) -> String {
        match self
            .operation
            .operation_id
            .as_deref()
            .filter(|id| !id.trim().is_empty())
        {
            Some(id) => sanitize_identifier(id),
            None => {
                let mut name = self.key.to_owned();
                for segment in self.path.split('/').filter(|s| !s.is_empty()) {
                    name.push('_');
                    name.push_str(&segment.replace(['{', '}'], ""));
                }
                sanitize_identifier(&name)
            }
        }
    }

    /// How the operation is named in messages: its operationId, else
    /// `METHOD /path`.
    pub(super) fn label(&self) -> String {
        match self.operation.operation_id.as_deref() {
            Some(id) if !id.trim().is_empty() => format!("operation \"{id}\""),
            _ => format!("operation {} {}", self.key.to_ascii_uppercase(), self.path),
        }
    }
}

/// A tool's arguments as they are gathered: each one's schema, and where it
/// goes in the request.
struct Arguments<'d> {
    defs: Defs<'d>,
    properties: Map<String, Value>,
    required: Vec<String>,
    query: Vec<String>,
    header_args: Vec<(String, String)>,
    body: Vec<String>,
    body_arg: Option<String>,
}

impl<'d> Arguments<'d> {
    /// Add the argument `name` whose schema is at `schema_at` in the
    /// document (any value when there is none there).
    fn add(
        &mut self,
        name: &str,
        schema_at: &str,
        tree: &'d Value,
        description: Option<&str>,
        required: bool,
    ) -> Result<(), SpecError> {
        let mut schema = match tree.pointer(schema_at) {
            Some(s) => self.defs.import(s, schema_at)?,
            None => Value::Object(Map::new()),
        };
        describe(&mut schema, description);
        self.properties.insert(name.to_owned(), schema);
        if required {
            self.required.push(name.to_owned());
        }
        Ok(())
    }

    fn taken(&self, name: &str) -> bool {
        self.properties.contains_key(name)
    }
}

/// Lower `op` to a tool named `name`.
pub(super) fn lower(
    doc: &Document,
    op: &Op<'_>,
    name: String,
    read_only: bool,
) -> Result<ApiTool, SpecError> {
    let mut args = Arguments {
        defs: Defs::new(&doc.tree),
        properties: Map::new(),
        required: Vec::new(),
        query: Vec::new(),
        header_args: Vec::new(),
        body: Vec::new(),
        body_arg: None,
    };
    add_parameters(doc, op, &mut args)?;
    add_body(doc, op, &mut args)?;
    finish(op, name, read_only, args)
}

fn add_parameters<'d>(
    doc: &'d Document,
    op: &Op<'_>,
    args: &mut Arguments<'d>,
) -> Result<(), SpecError> {
    let at = op.pointer();
    let placeholders = crate::config::lower::placeholders(op.path)
        .ok_or_else(|| SpecError::at(&at, "the path template's braces do not balance"))?;
    let mut path_args: Vec<String> = Vec::new();
    for (param, param_at) in parameters(doc, op)? {
        let arg = param.name.clone();
        match param.location {
            ParameterIn::Cookie => {
                if param.required == Some(true) {
                    return Err(SpecError::at(
                        &param_at,
                        format!(
                            "{} needs the cookie \"{}\", which connecta does not send; exclude the operation",
                            op.label(),
                            param.name
                        ),
                    ));
                }
                // An optional cookie is left out: it cannot be sent.
                continue;
            }
            ParameterIn::Header
                if IGNORED_HEADERS.contains(&param.name.to_ascii_lowercase().as_str()) =>
            {
                continue;
            }
            ParameterIn::Path if !placeholders.contains(&param.name) => continue,
            _ => {}
        }
        check_style(&param, &param_at, doc)?;
        if args.taken(&arg) {
            return Err(SpecError::at(
                &param_at,
                format!(
                    "{} has two parameters named \"{arg}\" (in different places); exclude the operation",
                    op.label()
                ),
            ));
        }
        let schema_at = parameter_schema_at(&param, &param_at)?;
        let required = param.location == ParameterIn::Path || param.required == Some(true);
        args.add(
            &arg,
            &schema_at,
            &doc.tree,
            param.description.as_deref(),
            required,
        )?;
        match param.location {
            ParameterIn::Path => path_args.push(arg),
            ParameterIn::Query => args.query.push(arg),
            ParameterIn::Header => args.header_args.push((arg, param.name.clone())),
            ParameterIn::Cookie => {}
        }
    }
    match placeholders.iter().find(|p| !path_args.contains(p)) {
        Some(p) => Err(SpecError::at(
            &at,
            format!(
                "the path has a {{{p}}} placeholder but {} has no `in: path` parameter \"{p}\"",
                op.label()
            ),
        )),
        None => Ok(()),
    }
}

fn add_body<'d>(doc: &'d Document, op: &Op<'_>, args: &mut Arguments<'d>) -> Result<(), SpecError> {
    let Some(body) = &op.operation.request_body else {
        return Ok(());
    };
    let (body, body_at) = resolved(
        doc,
        body,
        &format!("{}/requestBody", op.pointer()),
        "request body",
    )?;
    if body.content.is_empty() {
        // Nothing is declared to be sent.
        return Ok(());
    }
    let Some(media_at) = json_media(&body, &body_at) else {
        let kinds: Vec<&str> = body.content.iter().map(|(k, _)| k.as_str()).collect();
        return Err(SpecError::at(
            &body_at,
            format!(
                "{} takes its request body only as {}; connecta sends JSON bodies: exclude the operation",
                op.label(),
                kinds.join(", ")
            ),
        ));
    };
    let body_required = body.required == Some(true);
    let schema_at = format!("{media_at}/schema");
    let flat = match doc.tree.pointer(&schema_at) {
        Some(s) => flat_members(doc, s, &schema_at, args)?,
        None => None,
    };
    if let Some((members, members_at, member_required)) = flat {
        for member in members {
            let at = format!("{members_at}/{}", escape(&member));
            let required = body_required && member_required.contains(&member);
            args.add(&member, &at, &doc.tree, None, required)?;
            args.body.push(member);
        }
        return Ok(());
    }
    let arg = ["body", "requestBody", "request_body"]
        .into_iter()
        .find(|a| !args.taken(a))
        .ok_or_else(|| {
            SpecError::at(
                &body_at,
                format!(
                    "{} has parameters named like its body argument; exclude the operation",
                    op.label()
                ),
            )
        })?;
    args.add(
        arg,
        &schema_at,
        &doc.tree,
        body.description.as_deref(),
        body_required,
    )?;
    args.body_arg = Some(arg.to_owned());
    Ok(())
}

fn finish(
    op: &Op<'_>,
    name: String,
    read_only: bool,
    args: Arguments<'_>,
) -> Result<ApiTool, SpecError> {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(args.properties));
    if !args.required.is_empty() {
        schema.insert("required".into(), json!(args.required));
    }
    schema.insert("additionalProperties".into(), Value::Bool(false));
    let defs = args.defs.into_defs();
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    let input_schema = Value::Object(schema);
    let size = serde_json::to_string(&input_schema).map_or(0, |s| s.len());
    if size > MAX_INPUT_SCHEMA_BYTES {
        return Err(SpecError::at(
            &op.pointer(),
            format!(
                "{}'s input schema is {size} bytes with its references, over {MAX_INPUT_SCHEMA_BYTES}; exclude the operation",
                op.label()
            ),
        ));
    }
    let o = op.operation;
    let summary = o
        .summary
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let detail = o
        .description
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let description = match (summary, detail) {
        (Some(s), Some(d)) if d.starts_with(s) => d.to_owned(),
        (Some(s), Some(d)) => format!("{s}\n\n{d}"),
        (Some(s), None) => s.to_owned(),
        (None, Some(d)) => d.to_owned(),
        (None, None) => format!("{} {}", op.method.as_str(), op.path),
    };
    Ok(ApiTool {
        name,
        title: summary.map(str::to_owned),
        description,
        read_only,
        idempotent: None,
        method: op.method,
        path: op.path.to_owned(),
        query: args.query,
        body: args.body,
        body_arg: args.body_arg,
        header_args: args.header_args,
        headers: Vec::new(),
        input_schema,
        output_schema: None,
        project: None,
    })
}

/// The operation's parameters with the path item's, the operation's own
/// replacing a path item's of the same name and place; each resolved, with
/// its pointer.
fn parameters(doc: &Document, op: &Op<'_>) -> Result<Vec<(Parameter, String)>, SpecError> {
    let mut out: Vec<(Parameter, String)> = Vec::new();
    let item_at = format!("/paths/{}/parameters", escape(op.path));
    let op_at = format!("{}/parameters", op.pointer());
    for (list, base) in [
        (op.path_parameters, item_at),
        (op.operation.parameters.as_slice(), op_at),
    ] {
        for (i, p) in list.iter().enumerate() {
            let (p, at) = resolved(doc, p, &format!("{base}/{i}"), "parameter")?;
            out.retain(|(q, _)| !(q.name == p.name && q.location == p.location));
            out.push((p, at));
        }
    }
    Ok(out)
}

/// An object or the one its `$ref` points at (in this document), with its
/// pointer.
fn resolved<T: DeserializeOwned + Clone>(
    doc: &Document,
    item: &ObjectOrReference<T>,
    at: &str,
    what: &str,
) -> Result<(T, String), SpecError> {
    match item {
        ObjectOrReference::Object(t) => Ok((t.clone(), at.to_owned())),
        ObjectOrReference::Ref { ref_path, .. } => {
            let (value, target_at) = resolve(&doc.tree, ref_path, &format!("{at}/$ref"))?;
            let t = serde_json::from_value(value.clone()).map_err(|e| {
                SpecError::at(
                    &format!("{at}/$ref"),
                    format!(
                        "$ref \"{}\" does not point at a {what}: {e}",
                        crate::error::clamp_text(ref_path, 200)
                    ),
                )
            })?;
            Ok((t, target_at))
        }
    }
}

/// Where a parameter's schema is: `schema`, or the schema of its one
/// `content` entry (a JSON-encoded parameter).
fn parameter_schema_at(param: &Parameter, at: &str) -> Result<String, SpecError> {
    if param.schema.is_some() {
        return Ok(format!("{at}/schema"));
    }
    if let Some(content) = &param.content
        && let Some((media, _)) = content.iter().next()
    {
        return Ok(format!("{at}/content/{}/schema", escape(media)));
    }
    Err(SpecError::at(
        at,
        format!(
            "parameter \"{}\" has neither a schema nor content, so its arguments cannot be checked",
            param.name
        ),
    ))
}

/// The serializations connecta sends: path values as `simple`, query values
/// as `form` with `explode` (arrays as repeated keys), headers as `simple`.
fn check_style(param: &Parameter, at: &str, doc: &Document) -> Result<(), SpecError> {
    let style_ok = matches!(
        (param.location, param.style),
        (_, None)
            | (
                ParameterIn::Path | ParameterIn::Header,
                Some(ParameterStyle::Simple)
            )
            | (ParameterIn::Query, Some(ParameterStyle::Form))
    );
    // `explode: false` changes only how arrays and objects are written.
    let structured = || {
        doc.tree
            .pointer(&format!("{at}/schema/type"))
            .is_some_and(|t| {
                let is = |v: &Value| v == "array" || v == "object";
                is(t) || t.as_array().is_some_and(|a| a.iter().any(is))
            })
    };
    let explode_ok =
        !(param.location == ParameterIn::Query && param.explode == Some(false) && structured());
    if style_ok && explode_ok {
        return Ok(());
    }
    Err(SpecError::at(
        at,
        format!(
            "parameter \"{}\" uses a serialization connecta does not send (path and header values are sent `simple`, query values `form` with arrays as repeated keys); exclude the operation",
            param.name
        ),
    ))
}

/// The JSON media type of a request body (`application/json`, `…+json`,
/// or a wildcard), with its pointer.
fn json_media(body: &RequestBody, at: &str) -> Option<String> {
    let is_json = crate::result::is_json_media_type;
    let is_wild = |k: &str| matches!(k.trim(), "*/*" | "application/*");
    let key = body
        .content
        .iter()
        .map(|(k, _)| k.as_str())
        .find(|k| is_json(k))
        .or_else(|| {
            body.content
                .iter()
                .map(|(k, _)| k.as_str())
                .find(|k| is_wild(k))
        })?;
    Some(format!("{at}/content/{}", escape(key)))
}

/// A flattened body: the members' names, the pointer of the `properties`
/// they are in, and the body schema's `required`.
type Members = (Vec<String>, String, Vec<String>);

/// A body schema whose members can be arguments of their own: a plain
/// object (after `$ref`s) with named properties and nothing else that
/// shapes it, none named like a parameter. Read-only members (sent by the
/// server, never by a client) are left out.
fn flat_members(
    doc: &Document,
    schema: &Value,
    at: &str,
    args: &Arguments<'_>,
) -> Result<Option<Members>, SpecError> {
    let (schema, at) = match schema.get("$ref") {
        Some(Value::String(r)) if schema.as_object().is_some_and(|o| o.len() == 1) => {
            resolve(&doc.tree, r, &format!("{at}/$ref"))?
        }
        _ => (schema, at.to_owned()),
    };
    let Some(obj) = schema.as_object() else {
        return Ok(None);
    };
    let object_typed = match obj.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
    };
    let shaped = [
        "$ref",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "patternProperties",
        "dependentSchemas",
        "dependentRequired",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "discriminator",
    ]
    .iter()
    .any(|k| obj.contains_key(*k));
    let closed = matches!(
        obj.get("additionalProperties"),
        None | Some(Value::Bool(false))
    );
    let Some(Value::Object(props)) = obj.get("properties") else {
        return Ok(None);
    };
    let sent = |s: &Value| s.get("readOnly") != Some(&Value::Bool(true));
    if !object_typed
        || shaped
        || !closed
        || !props.values().any(sent)
        || props.iter().any(|(k, s)| sent(s) && args.taken(k))
    {
        return Ok(None);
    }
    let required: Vec<String> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let members = props
        .iter()
        .filter(|(_, s)| sent(s))
        .map(|(k, _)| k.clone())
        .collect();
    Ok(Some((members, format!("{at}/properties"), required)))
}

/// Give a schema the description of the parameter or body it stands for,
/// unless it has its own.
fn describe(schema: &mut Value, description: Option<&str>) {
    let Some(d) = description.map(str::trim).filter(|d| !d.is_empty()) else {
        return;
    };
    if let Value::Object(o) = schema
        && !o.contains_key("description")
    {
        o.insert("description".into(), Value::String(d.to_owned()));
    }
}
