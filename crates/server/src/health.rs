//! `/health` (liveness and per-connector readiness) and `/metrics`
//! (Prometheus text). Neither passes through auth or admission, so they
//! answer even when `/mcp` is saturated.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::AppState;

pub(crate) async fn health(State(state): State<AppState>) -> Response {
    let report = state.gateway.health();
    (StatusCode::OK, Json(report)).into_response()
}

pub(crate) async fn metrics(State(state): State<AppState>) -> Response {
    let report = state.gateway.health();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP connecta_up Whether the gateway is serving.\n# TYPE connecta_up gauge\nconnecta_up 1"
    );
    let _ = writeln!(
        out,
        "# HELP connecta_uptime_seconds Seconds since start.\n# TYPE connecta_uptime_seconds gauge\nconnecta_uptime_seconds {}",
        report.uptime_ms / 1000
    );
    let _ = writeln!(
        out,
        "# HELP connecta_connector_ready Whether a connector's session is ready.\n# TYPE connecta_connector_ready gauge"
    );
    for c in &report.connectors {
        let ready = c.status.state == connecta_gateway::ConnectorState::Ready;
        let _ = writeln!(
            out,
            "connecta_connector_ready{{connector=\"{}\"}} {}",
            c.id,
            u8::from(ready)
        );
    }
    let _ = writeln!(
        out,
        "# HELP connecta_connector_restarts_total Child process restarts.\n# TYPE connecta_connector_restarts_total counter"
    );
    for c in &report.connectors {
        let _ = writeln!(
            out,
            "connecta_connector_restarts_total{{connector=\"{}\"}} {}",
            c.id, c.status.restarts
        );
    }
    let _ = writeln!(
        out,
        "# HELP connecta_catalog_tools Tools in a connector's cached catalog.\n# TYPE connecta_catalog_tools gauge"
    );
    for c in &report.connectors {
        if let Some(cat) = &c.catalog {
            let _ = writeln!(
                out,
                "connecta_catalog_tools{{connector=\"{}\"}} {}",
                c.id, cat.tools
            );
        }
    }
    let a = &state.admission;
    let _ = writeln!(
        out,
        "# HELP connecta_requests_admitted_total /mcp requests admitted.\n# TYPE connecta_requests_admitted_total counter\nconnecta_requests_admitted_total {}",
        a.admitted.load(Ordering::Relaxed)
    );
    let _ = writeln!(
        out,
        "# HELP connecta_requests_rejected_total /mcp requests refused as overloaded.\n# TYPE connecta_requests_rejected_total counter\nconnecta_requests_rejected_total {}",
        a.rejected.load(Ordering::Relaxed)
    );
    let (available, queued) = a.in_flight_and_queued();
    let _ = writeln!(
        out,
        "# HELP connecta_requests_queued /mcp requests waiting for admission.\n# TYPE connecta_requests_queued gauge\nconnecta_requests_queued {queued}"
    );
    let _ = writeln!(
        out,
        "# HELP connecta_request_permits_available Free /mcp admission permits.\n# TYPE connecta_request_permits_available gauge\nconnecta_request_permits_available {available}"
    );
    let _ = writeln!(
        out,
        "# HELP connecta_activity_dropped_total Activity events dropped because the writer fell behind.\n# TYPE connecta_activity_dropped_total counter\nconnecta_activity_dropped_total {}",
        state.gateway.activity().dropped()
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}
