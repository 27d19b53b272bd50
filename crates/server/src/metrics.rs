//! `/metrics`: the Prometheus text exposition (format 0.0.4), encoded by
//! `prometheus-client` from one registry built at start.
//!
//! The registry holds two collectors read on each scrape: this crate's
//! gauges and counters (gateway and connector state from the health report,
//! `/mcp` admission counters, dropped activity events), and the gateway's
//! latency histograms. Metric names are a public interface: dashboards and
//! alerts depend on them (docs/operations.md lists them).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use connecta_gateway::Gateway;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::AppState;
use crate::admission::RequestAdmission;

/// Build the registry `/metrics` encodes.
pub(crate) fn registry(gateway: &Arc<Gateway>, admission: &Arc<RequestAdmission>) -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(StateCollector {
        gateway: gateway.clone(),
        admission: admission.clone(),
    }));
    registry.register_collector(Box::new(gateway.metrics().collector()));
    registry
}

pub(crate) async fn metrics(State(state): State<AppState>) -> Response {
    let mut out = String::with_capacity(8 * 1024);
    match prometheus_client::encoding::prometheus_text::encode(&mut out, &state.metrics) {
        Ok(()) => (
            [(
                header::CONTENT_TYPE,
                prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
            )],
            out,
        )
            .into_response(),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "metrics could not be encoded",
        )
            .into_response(),
    }
}

/// Values read at scrape time from the gateway's health report and the
/// `/mcp` admission layer.
struct StateCollector {
    gateway: Arc<Gateway>,
    admission: Arc<RequestAdmission>,
}

impl std::fmt::Debug for StateCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateCollector")
    }
}

fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: i64,
) -> Result<(), std::fmt::Error> {
    let g = ConstGauge::new(value);
    g.encode(encoder.encode_descriptor(name, help, None, g.metric_type())?)
}

fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: u64,
) -> Result<(), std::fmt::Error> {
    let c = ConstCounter::new(value);
    c.encode(encoder.encode_descriptor(name, help, None, c.metric_type())?)
}

impl Collector for StateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let report = self.gateway.health();
        gauge(
            &mut encoder,
            "connecta_up",
            "Whether the gateway is serving.",
            1,
        )?;
        gauge(
            &mut encoder,
            "connecta_uptime_seconds",
            "Seconds since start.",
            i64::try_from(report.uptime_ms / 1000).unwrap_or(i64::MAX),
        )?;
        let ready = ConstGauge::new(0i64);
        let mut family = encoder.encode_descriptor(
            "connecta_connector_ready",
            "Whether a connector's session is ready.",
            None,
            ready.metric_type(),
        )?;
        for c in &report.connectors {
            let ready = c.status.state == connecta_gateway::ConnectorState::Ready;
            ConstGauge::new(i64::from(ready))
                .encode(family.encode_family(&[("connector", c.id.as_str())])?)?;
        }
        let restarts = ConstCounter::new(0u64);
        let mut family = encoder.encode_descriptor(
            "connecta_connector_restarts",
            "Child process restarts.",
            None,
            restarts.metric_type(),
        )?;
        for c in &report.connectors {
            ConstCounter::new(c.status.restarts)
                .encode(family.encode_family(&[("connector", c.id.as_str())])?)?;
        }
        let mut family = encoder.encode_descriptor(
            "connecta_catalog_tools",
            "Tools in a connector's cached catalog.",
            None,
            ready.metric_type(),
        )?;
        for c in &report.connectors {
            if let Some(cat) = &c.catalog {
                ConstGauge::new(i64::try_from(cat.tools).unwrap_or(i64::MAX))
                    .encode(family.encode_family(&[("connector", c.id.as_str())])?)?;
            }
        }
        let a = &self.admission;
        counter(
            &mut encoder,
            "connecta_requests_admitted",
            "/mcp requests admitted.",
            a.admitted.load(Ordering::Relaxed),
        )?;
        counter(
            &mut encoder,
            "connecta_requests_rejected",
            "/mcp requests refused as overloaded.",
            a.rejected.load(Ordering::Relaxed),
        )?;
        let (available, queued) = a.in_flight_and_queued();
        gauge(
            &mut encoder,
            "connecta_requests_queued",
            "/mcp requests waiting for admission.",
            i64::try_from(queued).unwrap_or(i64::MAX),
        )?;
        gauge(
            &mut encoder,
            "connecta_request_permits_available",
            "Free /mcp admission permits.",
            i64::try_from(available).unwrap_or(i64::MAX),
        )?;
        counter(
            &mut encoder,
            "connecta_activity_dropped",
            "Activity events dropped because the writer fell behind.",
            self.gateway.activity().dropped(),
        )
    }
}
