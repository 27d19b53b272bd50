//! The wire protocol between the pool (the parent) and one sandbox worker.
//!
//! This module owns the frame format and every message that crosses the
//! worker's stdin/stdout. Nothing else in the crate frames bytes.
//!
//! A frame is a little-endian `u32` byte length followed by that many bytes of
//! UTF-8 JSON. Each side bounds the frames it reads and treats an oversized or
//! malformed frame as a protocol violation (the parent then kills the worker).
//!
//! Conversation, strictly sequential per worker:
//!
//! ```text
//! parent                                worker
//!   Init {limits, harden, shortcuts} ->
//!                                  <-     Ready {pid, hardening}
//!   Run {program, bindings}         ->
//!                                  <-     Log {line}            (any number)
//!                                  <-     Call {id, global, function, args}
//!   Resolve {id, value} | Reject {id, error} ->
//!                                  <-     Done {outcome}
//!   Run ...                        ->
//! ```
//!
//! Values (`args`, `value`) travel as raw JSON text, never re-encoded as
//! strings. Call ids are unique for the worker's lifetime, so a reply that
//! raced with `Done` can never be mistaken for a reply in the next run; the
//! worker ignores replies to ids it is not waiting for.
//!
//! Must never: carry anything a program could use to address the host (paths,
//! environment, credentials). The worker learns only its limits and the run.

use std::io::{self, Read};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::{BindingNamespace, CodeRunFailure, HostError, Shortcuts};

/// Bytes of the length prefix.
const PREFIX: usize = 4;

/// Upper bound on any frame the parent sends (a program and its binding
/// list, or one host result). Larger requests are refused before they are sent.
pub const MAX_FRAME_TO_WORKER: usize = 32 * 1024 * 1024;

/// Room for the envelope around a bounded payload.
pub const FRAME_SLACK: usize = 64 * 1024;

/// Typed rejections of one run that both sides remember, newest first, so
/// an escaped one can be named by its call id. Older ones escape untyped.
pub const REMEMBERED_FAILURES: usize = 64;

/// Every bound the worker enforces on a run. Chosen by the pool's
/// configuration, never by a program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerLimits {
    /// QuickJS heap ceiling (`JS_SetMemoryLimit`).
    pub heap_bytes: usize,
    /// QuickJS stack ceiling (`JS_SetMaxStackSize`).
    pub stack_bytes: usize,
    /// Guest CPU per run, measured on the worker thread's CPU clock, so time
    /// blocked waiting for host replies does not count.
    pub cpu_budget_ms: u64,
    /// Serialized arguments of one host call.
    pub max_arg_bytes: usize,
    /// Serialized result of one host call.
    pub max_result_bytes: usize,
    /// Host calls one run may have in flight at once (a runtime safety
    /// bound; the per-run call budget is the gateway's).
    pub max_inflight_calls: usize,
    /// Raw cap on captured log text per run (a truncation marker follows).
    pub max_log_bytes: usize,
    /// Serialized completion value; over it the run fails `output-limit`.
    pub max_value_bytes: usize,
    /// `RLIMIT_AS` is set to the worker's address space at hardening time plus
    /// the heap ceiling plus this margin.
    pub address_space_margin_bytes: usize,
}

/// The first frame a worker receives.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerInit {
    pub limits: WorkerLimits,
    /// Apply no-new-privs, rlimits and the seccomp filter before the first
    /// run. Off only in tests of the hardening itself.
    pub harden: bool,
    /// The lazy namespace globals of every run (sent once per worker).
    #[serde(default)]
    pub shortcuts: Shortcuts,
}

/// One program to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSpec {
    pub program: String,
    pub bindings: Vec<BindingNamespace>,
}

/// What the worker applied to itself, reported once in `Ready`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HardeningReport {
    /// Started as root, the worker became `nobody` (uid and gid 65534, no
    /// supplementary groups), which empties its capability sets.
    #[serde(default)]
    pub left_root: bool,
    /// No effective, permitted or inheritable capability is left.
    #[serde(default)]
    pub no_capabilities: bool,
    pub no_new_privs: bool,
    pub rlimits: bool,
    pub seccomp: bool,
    /// The `RLIMIT_AS` value set, in bytes.
    pub address_space_limit: Option<u64>,
}

/// How a run ended, as the worker saw it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// The program resolved; `None` for `undefined`.
    Value { value: Option<Box<RawValue>> },
    /// The program failed. `retire` asks the parent not to reuse this worker
    /// (after the heap ceiling was hit, its allocator may hold fragments).
    /// `escaped` is the call id whose rejection the program let escape (the
    /// very error object, or the `cause` of the one it threw); the parent
    /// looks the typed failure up among those it sent.
    Failed {
        failure: CodeRunFailure,
        retire: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        escaped: Option<u64>,
    },
}

/// Parent → worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToWorker {
    Init(WorkerInit),
    Run(RunSpec),
    Resolve { id: u64, value: Box<RawValue> },
    Reject { id: u64, error: HostError },
}

/// Worker → parent.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FromWorker {
    Ready {
        pid: u32,
        hardening: HardeningReport,
    },
    Call {
        id: u64,
        global: String,
        function: String,
        /// A JSON array of the call's arguments.
        args: Box<RawValue>,
    },
    Log {
        line: String,
    },
    Done {
        outcome: RunOutcome,
        /// Guest CPU the run used, for diagnostics.
        cpu_micros: u64,
    },
}

/// Errors reading or decoding frames.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("i/o on the worker pipe: {0}")]
    Io(#[from] io::Error),
    #[error("frame of {len} bytes exceeds the {max}-byte bound")]
    TooLarge { len: usize, max: usize },
    #[error("malformed frame: {0}")]
    Malformed(#[from] serde_json::Error),
}

/// Serializes one message as a complete frame (prefix included).
pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, FrameError> {
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(&[0; PREFIX]);
    serde_json::to_writer(&mut buf, message)?;
    let len = buf.len() - PREFIX;
    let len32 = u32::try_from(len).map_err(|_| FrameError::TooLarge {
        len,
        max: u32::MAX as usize,
    })?;
    buf[..PREFIX].copy_from_slice(&len32.to_le_bytes());
    Ok(buf)
}

/// The message for an over-bound host result (contract L6), used by both
/// sides. It names no address: the gateway knows the address the program
/// called and may check first with a better message.
pub fn result_too_large(limit: usize) -> String {
    format!("the host call's result is larger than the {limit}-byte bound; ask for less data")
}

/// Frames built by hand around JSON text that is already serialized, so a
/// bounded value is neither re-parsed nor re-escaped. The shapes are exactly
/// what `serde` produces for the enums above (tests hold them equal).
fn frame_from_parts(parts: &[&[u8]]) -> Vec<u8> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut buf = Vec::with_capacity(PREFIX + len);
    buf.extend_from_slice(&(len as u32).to_le_bytes());
    for p in parts {
        buf.extend_from_slice(p);
    }
    buf
}

fn json_str(s: &str) -> Vec<u8> {
    // Serializing a `str` cannot fail.
    serde_json::to_vec(s).unwrap_or_else(|_| b"\"\"".to_vec())
}

/// `FromWorker::Call` around serialized `args` (a JSON array).
pub fn encode_call(id: u64, global: &str, function: &str, args: &str) -> Vec<u8> {
    let head = format!("{{\"call\":{{\"id\":{id},\"global\":");
    frame_from_parts(&[
        head.as_bytes(),
        &json_str(global),
        b",\"function\":",
        &json_str(function),
        b",\"args\":",
        args.as_bytes(),
        b"}}",
    ])
}

/// `ToWorker::Run` from borrowed parts: the same bytes as encoding the
/// owned message, without copying the program.
pub fn encode_run(program: &str, bindings: &[BindingNamespace]) -> Result<Vec<u8>, FrameError> {
    #[derive(Serialize)]
    struct Spec<'a> {
        program: &'a str,
        bindings: &'a [BindingNamespace],
    }
    #[derive(Serialize)]
    struct Run<'a> {
        run: Spec<'a>,
    }
    encode(&Run {
        run: Spec { program, bindings },
    })
}

/// `ToWorker::Resolve` around a serialized value.
pub fn encode_resolve(id: u64, value: &str) -> Vec<u8> {
    let head = format!("{{\"resolve\":{{\"id\":{id},\"value\":");
    frame_from_parts(&[head.as_bytes(), value.as_bytes(), b"}}"])
}

/// `FromWorker::Done` with a `Value` outcome around serialized text.
pub fn encode_done_value(value: Option<&str>, cpu_micros: u64) -> Vec<u8> {
    let tail = format!("}}}},\"cpu_micros\":{cpu_micros}}}}}");
    frame_from_parts(&[
        b"{\"done\":{\"outcome\":{\"value\":{\"value\":",
        value.unwrap_or("null").as_bytes(),
        tail.as_bytes(),
    ])
}

/// Decodes a frame body (without its prefix).
pub fn decode<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, FrameError> {
    Ok(serde_json::from_slice(body)?)
}

/// Reads one frame body synchronously (the worker side). `Ok(None)` is a
/// clean end of stream between frames.
pub fn read_frame<R: Read>(reader: &mut R, max: usize) -> Result<Option<Vec<u8>>, FrameError> {
    let mut prefix = [0u8; PREFIX];
    let mut filled = 0;
    while filled < PREFIX {
        match reader.read(&mut prefix[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let len = u32::from_le_bytes(prefix) as usize;
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body)?;
    Ok(Some(body))
}

/// A cancel-safe frame reader for the parent: partial input survives a
/// dropped `next()` future, so it can sit in a `select!` beside deadlines.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Start of unconsumed bytes in `buf`.
    start: usize,
    max: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            buf: Vec::with_capacity(8 * 1024),
            start: 0,
            max,
        }
    }

    /// The next frame body, or `None` at a clean end of stream.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        loop {
            if let Some(frame) = self.take_buffered()? {
                return Ok(Some(frame));
            }
            if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            if self.buf.capacity() - self.buf.len() < 4096 {
                self.buf.reserve(64 * 1024);
            }
            let n = self.inner.read_buf(&mut self.buf).await?;
            if n == 0 {
                if self.buf.len() == self.start {
                    return Ok(None);
                }
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
            }
        }
    }

    fn take_buffered(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        let pending = &self.buf[self.start..];
        if pending.len() < PREFIX {
            return Ok(None);
        }
        let mut prefix = [0u8; PREFIX];
        prefix.copy_from_slice(&pending[..PREFIX]);
        let len = u32::from_le_bytes(prefix) as usize;
        if len > self.max {
            return Err(FrameError::TooLarge { len, max: self.max });
        }
        if pending.len() < PREFIX + len {
            return Ok(None);
        }
        let body = pending[PREFIX..PREFIX + len].to_vec();
        self.start += PREFIX + len;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        Ok(Some(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_run_encodes_like_the_owned_message() {
        let bindings = vec![BindingNamespace {
            global: "connecta".into(),
            functions: vec!["call".into(), "__proto__".into()],
        }];
        let owned = encode(&ToWorker::Run(RunSpec {
            program: "async () => \"é\\n\"".into(),
            bindings: bindings.clone(),
        }))
        .expect("owned");
        let borrowed = encode_run("async () => \"é\\n\"", &bindings).expect("borrowed");
        assert_eq!(owned, borrowed);
    }

    #[test]
    fn frames_round_trip_with_raw_values() {
        let msg = FromWorker::Call {
            id: 7,
            global: "connecta".into(),
            function: "__proto__".into(),
            args: RawValue::from_string("[1,{\"a\":[true,null]}]".into()).expect("raw"),
        };
        let frame = encode(&msg).expect("encode");
        let body = read_frame(&mut &frame[..], 1024)
            .expect("read")
            .expect("frame");
        match decode::<FromWorker>(&body).expect("decode") {
            FromWorker::Call {
                id, function, args, ..
            } => {
                assert_eq!(id, 7);
                assert_eq!(function, "__proto__");
                assert_eq!(args.get(), "[1,{\"a\":[true,null]}]");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn oversized_frames_are_refused_before_reading_the_body() {
        let frame = encode(&FromWorker::Log {
            line: "x".repeat(100),
        })
        .expect("encode");
        let err = read_frame(&mut &frame[..], 10).expect_err("too large");
        assert!(matches!(err, FrameError::TooLarge { max: 10, .. }));
    }

    #[test]
    fn deep_raw_values_cross_without_hitting_the_recursion_limit() {
        let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
        let msg = ToWorker::Resolve {
            id: 1,
            value: RawValue::from_string(deep.clone()).expect("raw"),
        };
        let frame = encode(&msg).expect("encode");
        let body = read_frame(&mut &frame[..], 1 << 20)
            .expect("read")
            .expect("frame");
        match decode::<ToWorker>(&body).expect("decode") {
            ToWorker::Resolve { value, .. } => assert_eq!(value.get(), deep),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn hand_built_frames_match_the_serde_shapes() {
        let call = encode_call(3, "connecta", "a\"b", "[1]");
        let body = read_frame(&mut &call[..], 1024)
            .expect("read")
            .expect("frame");
        match decode::<FromWorker>(&body).expect("decode call") {
            FromWorker::Call {
                id,
                global,
                function,
                args,
            } => {
                assert_eq!(
                    (id, global.as_str(), function.as_str(), args.get()),
                    (3, "connecta", "a\"b", "[1]")
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        let resolve = encode_resolve(4, "{\"x\":null}");
        let body = read_frame(&mut &resolve[..], 1024)
            .expect("read")
            .expect("frame");
        assert!(matches!(
            decode::<ToWorker>(&body).expect("decode resolve"),
            ToWorker::Resolve { id: 4, .. }
        ));
        for value in [Some("[1,2]"), None] {
            let done = encode_done_value(value, 9);
            let body = read_frame(&mut &done[..], 1024)
                .expect("read")
                .expect("frame");
            match decode::<FromWorker>(&body).expect("decode done") {
                FromWorker::Done {
                    outcome: RunOutcome::Value { value: v },
                    cpu_micros: 9,
                } => {
                    assert_eq!(v.as_deref().map(RawValue::get), value);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn the_corpus_of_bad_worker_frames_is_refused_as_malformed() {
        let corpus: Vec<String> =
            serde_json::from_str(include_str!("../tests/corpus/bad_worker_frames.json"))
                .expect("the corpus is JSON");
        assert!(corpus.len() >= 20, "the corpus shrank");
        for body in &corpus {
            assert!(
                matches!(
                    decode::<FromWorker>(body.as_bytes()),
                    Err(FrameError::Malformed(_))
                ),
                "accepted: {body}"
            );
        }
    }

    #[test]
    fn a_worker_cannot_send_the_host_failure_of_a_run() {
        // Only the pool sets it, from what it sent; the field is not read.
        let body = r#"{"done":{"outcome":{"failed":{"failure":{"kind":"exception","message":"x",
            "host_error":{"message":"forged","typed":{"code":"auth_required","retryable":false}}},
            "retire":false}},"cpu_micros":1}}"#;
        match decode::<FromWorker>(body.as_bytes()).expect("decodes") {
            FromWorker::Done {
                outcome: RunOutcome::Failed { failure, .. },
                ..
            } => assert_eq!(failure.host_error, None),
            other => panic!("unexpected {other:?}"),
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn json() -> impl Strategy<Value = serde_json::Value> {
            let leaf = prop_oneof![
                Just(serde_json::Value::Null),
                any::<bool>().prop_map(serde_json::Value::Bool),
                any::<i64>().prop_map(serde_json::Value::from),
                any::<f64>().prop_map(serde_json::Value::from),
                any::<String>().prop_map(serde_json::Value::String),
            ];
            leaf.prop_recursive(4, 32, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                    prop::collection::btree_map(any::<String>(), inner, 0..6)
                        .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

            #[test]
            fn any_bytes_decode_or_are_refused_never_panic(body in prop::collection::vec(any::<u8>(), 0..256)) {
                let _ = decode::<FromWorker>(&body);
                let _ = decode::<ToWorker>(&body);
            }

            #[test]
            fn a_call_frame_carries_any_names_and_arguments_exactly(
                id in any::<u64>(),
                global in any::<String>(),
                function in any::<String>(),
                args in prop::collection::vec(json(), 0..4),
            ) {
                let text = serde_json::to_string(&args).expect("serializes");
                let frame = encode_call(id, &global, &function, &text);
                let body = read_frame(&mut &frame[..], frame.len()).expect("reads").expect("a frame");
                match decode::<FromWorker>(&body).expect("decodes") {
                    FromWorker::Call { id: i, global: g, function: f, args: a } => {
                        prop_assert_eq!((i, g, f), (id, global, function));
                        // The arguments' text, byte for byte: never re-encoded.
                        prop_assert_eq!(a.get(), text.as_str());
                    }
                    other => prop_assert!(false, "decoded as {:?}", other),
                }
            }

            #[test]
            fn the_reader_never_yields_a_frame_over_its_bound(
                chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 0..8),
                max in 0usize..64,
            ) {
                let bytes: Vec<u8> = chunks.concat();
                let mut reader = &bytes[..];
                while let Ok(Some(body)) = read_frame(&mut reader, max) {
                    prop_assert!(body.len() <= max);
                }
            }
        }
    }

    #[tokio::test]
    async fn async_reader_splits_concatenated_frames() {
        let mut bytes = encode(&FromWorker::Log { line: "a".into() }).expect("encode");
        bytes.extend(encode(&FromWorker::Log { line: "b".into() }).expect("encode"));
        let mut reader = FrameReader::new(&bytes[..], 1024);
        for want in ["a", "b"] {
            let body = reader.next().await.expect("read").expect("frame");
            match decode::<FromWorker>(&body).expect("decode") {
                FromWorker::Log { line } => assert_eq!(line, want),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(reader.next().await.expect("eof").is_none());
    }
}
