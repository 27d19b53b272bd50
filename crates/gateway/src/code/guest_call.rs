//! What a program asks of its `connecta` namespace, decoded from the JSON
//! arguments of one host call, before anything is looked up or called.
//!
//! Every argument arrives from a program and is hostile input: this module
//! turns it into a [`GuestCall`] or a typed `invalid_args` refusal, and
//! never panics (the property tests in this file and the corpus beside them
//! hold it to that). What a call's `args` must look like is the call
//! path's to check, so a refusal on a real connector is still recorded.

use connecta_core::error::{ErrorCode, ToolError};
use connecta_core::search::{DescribeRequest, SearchRequest, Surface, parse_describe_args};
use serde_json::Value;

use super::envelope::validate_block;

/// The dispatcher behind the connector shortcuts (host plumbing, P2).
pub(crate) const NAMESPACE_DISPATCH: &str = "__callNamespace";

/// The functions of the `connecta` namespace.
pub(crate) const FUNCTIONS: &[&str] = &[
    "search",
    "describe",
    "call",
    "batch",
    "emit",
    NAMESPACE_DISPATCH,
];

/// One entry of `connecta.batch`: its address and arguments, or why it
/// cannot even be attempted (`batch_call_failed`, reported in its place, S7).
pub(crate) type BatchEntry = Result<(String, Option<Value>), ToolError>;

#[derive(Debug)]
pub(crate) enum GuestCall {
    /// `connecta.call(address, args)`.
    Call {
        address: String,
        args: Option<Value>,
    },
    /// A shortcut: `<connector>.<alias>(args)`.
    Shortcut {
        connector: String,
        alias: String,
        args: Option<Value>,
    },
    Batch(Vec<BatchEntry>),
    Search(Box<SearchRequest>),
    Describe(DescribeRequest),
    /// One validated content block (M1).
    Emit(Value),
}

/// Decodes `connecta.<function>(...args)`; `batch_size` is the deployment's
/// bound on one batch (L4).
pub(crate) fn decode(
    function: &str,
    mut args: Vec<Value>,
    batch_size: usize,
) -> Result<GuestCall, ToolError> {
    let mut take = |i: usize| args.get_mut(i).map(Value::take);
    match function {
        "call" => match take(0) {
            Some(Value::String(address)) => Ok(GuestCall::Call {
                address,
                args: take(1),
            }),
            _ => Err(ToolError::invalid_args(
                "connecta.call(address, args): address must be a string like \"connector.tool\"",
            )),
        },
        NAMESPACE_DISPATCH => match (take(0), take(1)) {
            (Some(Value::String(connector)), Some(Value::String(alias))) => {
                Ok(GuestCall::Shortcut {
                    connector,
                    alias,
                    args: take(2),
                })
            }
            _ => Err(ToolError::invalid_args(format!(
                "connecta.{NAMESPACE_DISPATCH}(connector, tool, args) takes two strings first"
            ))),
        },
        "batch" => {
            let Some(Value::Array(items)) = take(0) else {
                return Err(ToolError::invalid_args(
                    "connecta.batch takes an array of {address, args}",
                ));
            };
            if items.is_empty() || items.len() > batch_size {
                return Err(ToolError::invalid_args(format!(
                    "connecta.batch takes 1 to {batch_size} calls (got {}); split the work or reduce it",
                    items.len()
                )));
            }
            Ok(GuestCall::Batch(
                items.into_iter().map(batch_entry).collect(),
            ))
        }
        "search" => {
            let arg = take(0).unwrap_or(Value::Null);
            let req = connecta_core::search::parse_search_args(&arg, Surface::CodeMode)?;
            Ok(GuestCall::Search(Box::new(req)))
        }
        "describe" => Ok(GuestCall::Describe(parse_describe_args(
            &take(0).unwrap_or(Value::Null),
        )?)),
        "emit" => {
            if args.len() > 1 {
                return Err(ToolError::invalid_args(
                    "connecta.emit takes exactly one block",
                ));
            }
            let block = args.pop().unwrap_or(Value::Null);
            validate_block(&block).map_err(ToolError::invalid_args)?;
            Ok(GuestCall::Emit(block))
        }
        other => Err(ToolError::invalid_args(format!(
            "Unknown function connecta.{}",
            connecta_core::error::clamp_text(other, 64)
        ))),
    }
}

fn batch_entry(item: Value) -> BatchEntry {
    let Value::Object(mut entry) = item else {
        return Err(no_address());
    };
    match entry.remove("address") {
        Some(Value::String(address)) => Ok((address, entry.remove("args"))),
        _ => Err(no_address()),
    }
}

fn no_address() -> ToolError {
    ToolError::with_cause(
        ErrorCode::BatchCallFailed,
        "a batch entry needs an address string",
        false,
    )
}

#[cfg(test)]
mod tests {
    //! Property tests of the decoding: whatever JSON a program passes, the
    //! answer is a well-formed call or a typed refusal, and the checked-in
    //! corpus of bad inputs (`tests/corpus/guest_args_bad.json`) is refused
    //! with the code it names.

    use super::*;
    use proptest::prelude::*;
    use serde::Deserialize;

    const BATCH: usize = 10;

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z_.]{0,12}".prop_map(Value::String),
            any::<String>().prop_map(Value::String),
            prop_oneof![
                Just("demo.get_note"),
                Just("text"),
                Just("image"),
                Just("query"),
                Just("addresses")
            ]
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("address".to_owned()),
                        Just("args".to_owned()),
                        Just("type".to_owned()),
                        Just("text".to_owned()),
                        Just("data".to_owned()),
                        Just("mimeType".to_owned()),
                        Just("query".to_owned()),
                        Just("limit".to_owned()),
                        Just("addresses".to_owned()),
                        "[a-zA-Z]{0,8}",
                    ],
                    inner,
                    0..6
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn function() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(FUNCTIONS).prop_map(str::to_owned),
            any::<String>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn any_arguments_decode_to_a_well_formed_call_or_a_typed_refusal(
            function in function(),
            args in prop::collection::vec(json(), 0..4),
        ) {
            match decode(&function, args.clone(), BATCH) {
                Ok(GuestCall::Call { address, args: a }) => {
                    prop_assert_eq!(function.as_str(), "call");
                    prop_assert_eq!(Some(&Value::String(address)), args.first());
                    prop_assert_eq!(a.as_ref(), args.get(1));
                }
                Ok(GuestCall::Shortcut { .. }) => {
                    prop_assert_eq!(function.as_str(), NAMESPACE_DISPATCH);
                }
                Ok(GuestCall::Batch(entries)) => {
                    prop_assert!((1..=BATCH).contains(&entries.len()));
                    for e in entries.iter().filter_map(|e| e.as_ref().err()) {
                        prop_assert_eq!(e.code, ErrorCode::BatchCallFailed);
                    }
                }
                Ok(GuestCall::Search(req)) => {
                    prop_assert!((1..=100).contains(&req.limit));
                }
                Ok(GuestCall::Describe(req)) => {
                    prop_assert!(req.addresses.len() <= 100);
                }
                Ok(GuestCall::Emit(block)) => {
                    prop_assert!(validate_block(&block).is_ok());
                    prop_assert_eq!(args.len(), 1);
                }
                Err(e) => {
                    prop_assert_eq!(e.code, ErrorCode::InvalidArgs, "{}", e);
                    prop_assert!(!e.retryable);
                    prop_assert!(!e.message.is_empty() && e.message.len() <= 2048);
                }
            }
        }

        #[test]
        fn a_well_formed_batch_keeps_every_entry_in_order(
            addresses in prop::collection::vec("[a-z]{1,6}\\.[a-z_]{1,8}", 1..=BATCH),
        ) {
            let items: Vec<Value> = addresses
                .iter()
                .map(|a| serde_json::json!({"address": a, "args": {"n": a.len()}}))
                .collect();
            let Ok(GuestCall::Batch(entries)) = decode("batch", vec![Value::Array(items)], BATCH) else {
                return Err(TestCaseError::fail("a well-formed batch was refused"));
            };
            for (entry, address) in entries.iter().zip(&addresses) {
                let (a, args) = entry.as_ref().expect("a well-formed entry");
                prop_assert_eq!(a, address);
                prop_assert_eq!(args.as_ref(), Some(&serde_json::json!({"n": address.len()})));
            }
        }
    }

    #[derive(Deserialize)]
    struct Case {
        function: String,
        args: Vec<Value>,
        /// The code of the refusal (or of the refused batch entry).
        code: String,
        /// Words the message must contain.
        says: String,
    }

    #[test]
    fn the_corpus_of_bad_guest_arguments_is_refused_with_its_code() {
        let corpus: Vec<Case> =
            serde_json::from_str(include_str!("../../tests/corpus/guest_args_bad.json"))
                .expect("the corpus is JSON");
        assert!(corpus.len() >= 20, "the corpus shrank");
        for case in corpus {
            let error = match decode(&case.function, case.args.clone(), BATCH) {
                Err(e) => e,
                Ok(GuestCall::Batch(entries)) => entries
                    .into_iter()
                    .find_map(Result::err)
                    .unwrap_or_else(|| panic!("accepted: {} {:?}", case.function, case.args)),
                Ok(other) => panic!("accepted: {} {:?} as {other:?}", case.function, case.args),
            };
            assert_eq!(
                error.code.as_str(),
                case.code,
                "{} {:?}: {error}",
                case.function,
                case.args
            );
            assert!(
                error.message.contains(&case.says),
                "{} {:?}: {error}",
                case.function,
                case.args
            );
        }
    }
}
