//! Shared test support: a scripted `BindingHost` and pool builders.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use connecta_sandbox::{
    BindingHost, BindingNamespace, CodeRunRequest, CodeRunResult, CodeRuntime, FailureKind,
    HostError, PoolOptions, QuickJsPool, TypedFailure,
};
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub const WORKER: &str = env!("CARGO_BIN_EXE_connecta-sandbox-worker");

/// Functions the test host serves under the `connecta` global.
pub const FUNCTIONS: &[&str] = &[
    "echo",
    "call",
    "sleep",
    "fail",
    "failUntyped",
    "big",
    "hang",
    "__proto__",
    "constructor",
    "callNamespace",
];

/// A scripted host. `hang` never answers and records when its future is
/// dropped (contract L2).
#[derive(Default)]
pub struct TestHost {
    pub calls: AtomicUsize,
    pub hung_dropped: Arc<AtomicBool>,
    pub hung_started: Arc<AtomicBool>,
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[async_trait]
impl BindingHost for TestHost {
    async fn call(
        &self,
        global: &str,
        function: &str,
        args: Value,
    ) -> Result<Box<RawValue>, HostError> {
        let value = self.answer(global, function, args).await?;
        Ok(to_raw_value(&value).expect("a JSON value serializes"))
    }
}

/// The typed failure `connecta.fail(code)` rejects with.
pub fn typed_failure(code: &str) -> HostError {
    HostError {
        message: format!("tool failed: {code}"),
        typed: Some(TypedFailure {
            code: code.into(),
            retryable: true,
            retry_after_ms: Some(1500),
            details: [("connector".to_owned(), json!("ci"))]
                .into_iter()
                .collect(),
            next_action: Some(json!({ "tool": "search_tools", "arguments": { "query": "ci" } })),
        }),
    }
}

impl TestHost {
    async fn answer(&self, global: &str, function: &str, args: Value) -> Result<Value, HostError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        assert_eq!(global, "connecta");
        let first = args.get(0).cloned().unwrap_or(Value::Null);
        match function {
            "echo" => Ok(first),
            "call" => {
                Ok(json!({ "address": first, "args": args.get(1).cloned().unwrap_or(json!({})) }))
            }
            "sleep" => {
                let ms = first.as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(json!(ms))
            }
            "fail" => Err(typed_failure(first.as_str().unwrap_or("boom"))),
            "failUntyped" => Err(HostError::untyped("plain failure")),
            "big" => Ok(Value::String(
                "x".repeat(first.as_u64().unwrap_or(0) as usize),
            )),
            "hang" => {
                let _flag = DropFlag(self.hung_dropped.clone());
                self.hung_started.store(true, Ordering::SeqCst);
                std::future::pending::<()>().await;
                Ok(Value::Null)
            }
            "__proto__" | "constructor" => Ok(json!({ "called": function })),
            "callNamespace" => Ok(json!({
                "target": first,
                "tool": args.get(1).cloned().unwrap_or(Value::Null),
                "args": args.get(2).cloned().unwrap_or(Value::Null),
            })),
            other => panic!("the sandbox let an undeclared function through: {other}"),
        }
    }
}

/// Options for a small test pool using this crate's worker binary.
pub fn options() -> PoolOptions {
    let mut o = PoolOptions::new(WORKER, Vec::<String>::new());
    o.workers = 1;
    o.max_concurrent = 2;
    o.wall_deadline = Duration::from_secs(20);
    o
}

pub async fn pool() -> QuickJsPool {
    pool_with(options()).await
}

pub async fn pool_with(options: PoolOptions) -> QuickJsPool {
    QuickJsPool::start(options).await.expect("pool starts")
}

pub fn bindings() -> Vec<BindingNamespace> {
    vec![BindingNamespace {
        global: "connecta".into(),
        functions: FUNCTIONS.iter().map(|s| s.to_string()).collect(),
    }]
}

pub fn request(program: &str) -> CodeRunRequest {
    CodeRunRequest {
        program: program.into(),
        bindings: bindings(),
        cancel: CancellationToken::new(),
    }
}

pub async fn run(pool: &QuickJsPool, program: &str) -> CodeRunResult {
    run_with_host(pool, program, Arc::new(TestHost::default())).await
}

pub async fn run_with_host(
    pool: &QuickJsPool,
    program: &str,
    host: Arc<TestHost>,
) -> CodeRunResult {
    pool.run(request(program), host).await
}

/// Asserts success and returns the value.
#[track_caller]
pub fn ok(result: &CodeRunResult) -> Value {
    assert!(result.error.is_none(), "expected success, got {result:?}");
    result.value.clone().unwrap_or(Value::Null)
}

/// Asserts a failure of `kind` and returns its message.
#[track_caller]
pub fn failed(result: &CodeRunResult, kind: FailureKind) -> String {
    match &result.error {
        Some(e) if e.kind == kind => e.message.clone(),
        _ => panic!("expected a {kind:?} failure, got {result:?}"),
    }
}

/// The pool still runs an ordinary program with a host call.
pub async fn assert_healthy(pool: &QuickJsPool) {
    let r = run(
        pool,
        "async () => { const v = await connecta.echo(41); return v + 1; }",
    )
    .await;
    assert_eq!(ok(&r), json!(42), "the pool must stay healthy");
}
