//! `/health`: liveness and per-connector readiness. It passes through
//! neither auth nor admission, so it answers even when `/mcp` is saturated
//! (as does `/metrics`, in `metrics.rs`).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::AppState;

pub(crate) async fn health(State(state): State<AppState>) -> Response {
    let report = state.gateway.health();
    (StatusCode::OK, Json(report)).into_response()
}
