//! Lazy namespace globals (the gateway's connector shortcuts, contract A2),
//! installed on every fresh context at a cost that grows with what the
//! program names, not with the number of aliases.
//!
//! The alias table arrives once, in the worker's `Init` frame, and stays on
//! the Rust side. Each run scans the program's text for identifier-shaped
//! words and defines, natively, the shortcut of each word that is an alias:
//! an own global, non-writable and non-configurable, whose value is a
//! frozen Proxy namespace. A word inside a string or a comment counts too
//! (an extra definition is harmless), so `eval` of a literal that names a
//! shortcut finds it. Only a shortcut reached by a name the text never
//! spells (`globalThis["git" + "hub"]`) is absent: `connecta.call` with
//! the canonical address is the way there (A1).
//!
//! Before, each run evaluated a JavaScript prelude defining every alias:
//! about 7.5 µs an alias, 11 ms a run at 1,000 connectors. A Proxy between
//! the global object and its prototype would cost nothing per alias, but
//! the engine then finds every unknown global in it, and a misspelt name
//! would read `undefined` instead of throwing `ReferenceError`.
//!
//! Must never: capture a JavaScript value in a native closure (the engine's
//! collector cannot see it), or reach the host by any path but
//! [`bridge::call_host`].

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::object::Property;
use rquickjs::proxy::{ProxyHandler, ProxyProperty, ProxyReceiver, ProxyTarget};
use rquickjs::{Ctx, Function, Object, Proxy, Value};

use super::bridge::{self, RunState};
use crate::Shortcuts;

/// The worker's alias table, built once from `Init`.
#[derive(Debug, Default)]
pub struct ShortcutTable {
    /// The binding namespace and function receiving the calls.
    global: String,
    function: String,
    /// Alias → the target its calls name.
    targets: HashMap<String, Rc<str>>,
}

impl ShortcutTable {
    pub fn new(s: Shortcuts) -> Self {
        Self {
            global: s.global,
            function: s.function,
            targets: s
                .aliases
                .into_iter()
                .map(|(alias, target)| (alias, Rc::from(target)))
                .collect(),
        }
    }

    /// The aliases `source` spells as words, each once, in order.
    fn named_in<'a>(&'a self, source: &'a str) -> Vec<(&'a str, &'a Rc<str>)> {
        if self.targets.is_empty() {
            return Vec::new();
        }
        let mut seen = HashSet::new();
        words(source)
            .filter_map(|w| self.targets.get_key_value(w))
            .filter(|(alias, _)| seen.insert(alias.as_str()))
            .map(|(alias, target)| (alias.as_str(), target))
            .collect()
    }
}

/// The identifier-shaped words of `source` (ASCII: aliases are sanitized).
fn words(source: &str) -> impl Iterator<Item = &str> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    source
        .split(move |c: char| !is_word(c))
        .filter(|w| w.starts_with(|c: char| !c.is_ascii_digit()))
}

/// Defines the shortcut of every alias `program` names on a fresh context
/// whose bindings exist.
pub fn install<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState>,
    table: &Rc<ShortcutTable>,
    program: &str,
) -> rquickjs::Result<()> {
    let named = table.named_in(program);
    if named.is_empty() {
        return Ok(());
    }
    let globals = ctx.globals();
    let refuse = Function::new(ctx.clone(), || false)?;
    for (alias, target) in named {
        // A global the context already has (never a valid alias: the
        // gateway reserves every one) is left alone.
        if globals.contains_key(alias)? {
            continue;
        }
        let ns = namespace(ctx, state, table, target, &refuse)?;
        globals.prop(alias, Property::from(ns))?;
    }
    Ok(())
}

/// One frozen namespace: any string property is a function calling the
/// host with `(target, property, args ?? {})`; symbols read `undefined`;
/// every write is refused.
fn namespace<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState>,
    table: &Rc<ShortcutTable>,
    target: &Rc<str>,
    refuse: &Function<'js>,
) -> rquickjs::Result<Proxy<'js>> {
    let handler_object = Object::new_proto(ctx.clone(), None)?;
    for trap in ["set", "defineProperty", "deleteProperty", "setPrototypeOf"] {
        handler_object.set(trap, refuse.clone())?;
    }
    let handler = ProxyHandler::from_object(handler_object)?;
    let (st, table, target) = (state.clone(), table.clone(), target.clone());
    handler.set_getter(
        move |t: ProxyTarget<'js>, key: ProxyProperty<'js>, _r: ProxyReceiver<'js>| {
            let ctx = t.0.ctx().clone();
            if !key.is_string() {
                return Ok(Value::new_undefined(ctx));
            }
            let tool: Rc<str> = Rc::from(key.to_string()?);
            let (st, table, target) = (st.clone(), table.clone(), target.clone());
            let call = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
                let args_value = match args.0.into_iter().next() {
                    Some(v) if !v.is_undefined() => v,
                    _ => Object::new(ctx.clone())?.into_value(),
                };
                let target = rquickjs::String::from_str(ctx.clone(), &target)?.into_value();
                let tool = rquickjs::String::from_str(ctx.clone(), &tool)?.into_value();
                bridge::call_host(
                    &ctx,
                    &st,
                    &table.global,
                    &table.function,
                    vec![target, tool, args_value],
                )
            })?;
            Ok(call.into_value())
        },
    )?;
    Proxy::new(ctx.clone(), Object::new_proto(ctx.clone(), None)?, handler)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(aliases: &[&str]) -> ShortcutTable {
        ShortcutTable::new(Shortcuts {
            global: "connecta".into(),
            function: "__callNamespace".into(),
            aliases: aliases
                .iter()
                .map(|a| ((*a).to_owned(), format!("{a}-id")))
                .collect(),
        })
    }

    #[test]
    fn a2_only_aliases_the_text_spells_as_words_are_named() {
        let t = table(&["github", "my_svc", "$x", "_9lives"]);
        let named: Vec<&str> = t
            .named_in("async () => [await github.list({}), my_svcs, 'my_svc', $x, x_9lives, _9lives, github]")
            .into_iter()
            .map(|(a, _)| a)
            .collect();
        assert_eq!(named, vec!["github", "my_svc", "$x", "_9lives"]);
    }

    #[test]
    fn a_word_starting_with_a_digit_is_no_identifier() {
        let t = table(&["e10"]);
        assert!(t.named_in("1e10 + 2").is_empty());
        assert_eq!(t.named_in("x.e10").len(), 1);
    }
}
