//! Downstream failures → the error taxonomy. Every mapping is decided by the
//! failure's type (an HTTP status, a JSON-RPC code, a transport event), never
//! by reading message text.

use std::time::{Duration, SystemTime};

use connecta_core::error::{ErrorCode, MAX_ECHO_BYTES, ToolError, clamp_text};
use rmcp::ServiceError;
use rmcp::model::ErrorCode as RpcCode;
use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};

/// What a failure says about the session it happened on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionFate {
    /// The session is fine; only this call failed.
    Keep,
    /// The session is unusable; reconnect before the next call.
    Reset,
}

pub(crate) fn from_service_error(connector: &str, e: &ServiceError) -> (ToolError, SessionFate) {
    match e {
        ServiceError::McpError(data) => {
            let msg = clamp_text(&data.message, MAX_ECHO_BYTES);
            let err = if data.code == RpcCode::INVALID_PARAMS {
                ToolError::invalid_args(format!("{connector} rejected the arguments: {msg}"))
            } else if data.code == RpcCode::METHOD_NOT_FOUND {
                ToolError::with_cause(
                    ErrorCode::ConnectorCallFailed,
                    format!("{connector} does not support the request: {msg}"),
                    false,
                )
            } else if data.code.0 == -32042 {
                ToolError::new(
                    ErrorCode::InputRequiredUnsupported,
                    format!(
                        "{connector} asked for input in the middle of the call, which connecta cannot relay"
                    ),
                )
            } else {
                ToolError::with_cause(
                    ErrorCode::ConnectorCallFailed,
                    format!("{connector} returned an error: {msg}"),
                    false,
                )
            };
            (err, SessionFate::Keep)
        }
        ServiceError::TransportSend(t) => {
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(t.error.as_ref());
            while let Some(cur) = source {
                if let Some(status) = http_status(cur) {
                    return (from_http_status(connector, status), SessionFate::Keep);
                }
                source = cur.source();
            }
            if e.auth_challenge().is_some_and(is_scope_challenge) {
                return (forbidden(connector), SessionFate::Keep);
            }
            if e.is_authorization_required() {
                return (
                    auth_required(connector, "the downstream server asked for authorization"),
                    SessionFate::Keep,
                );
            }
            (
                ToolError::with_cause(
                    ErrorCode::Unavailable,
                    format!(
                        "{connector} is unreachable: {}",
                        clamp_text(&t.error.to_string(), MAX_ECHO_BYTES)
                    ),
                    true,
                ),
                SessionFate::Reset,
            )
        }
        ServiceError::TransportClosed => (
            ToolError::with_cause(
                ErrorCode::Unavailable,
                format!("the connection to {connector} closed"),
                true,
            ),
            SessionFate::Reset,
        ),
        ServiceError::Timeout { timeout } => (
            ToolError::new(
                ErrorCode::Timeout,
                format!(
                    "{connector} did not answer within {} ms",
                    timeout.as_millis()
                ),
            ),
            SessionFate::Keep,
        ),
        ServiceError::Cancelled { .. } => (
            ToolError::new(ErrorCode::Cancelled, "the call was cancelled"),
            SessionFate::Keep,
        ),
        ServiceError::InputRequiredRoundsExceeded { .. } => (
            ToolError::new(
                ErrorCode::InputRequiredUnsupported,
                format!("{connector} kept asking for input in the middle of the call"),
            ),
            SessionFate::Keep,
        ),
        other => (
            ToolError::with_cause(
                ErrorCode::ConnectorCallFailed,
                format!(
                    "{connector} answered with something that is not a valid MCP response ({})",
                    clamp_text(&other.to_string(), 200)
                ),
                false,
            ),
            SessionFate::Reset,
        ),
    }
}

/// HTTP 403 (or rmcp's insufficient-scope refusal): the credential was
/// accepted but lacks a permission, so a new token of the same kind would
/// not help. Kept apart from a refused token by `httpStatus`.
pub(crate) fn forbidden(connector: &str) -> ToolError {
    auth_required(
        connector,
        "it answered HTTP 403 (a permission or scope is missing)",
    )
    .detail("httpStatus", 403)
}

/// rmcp's 401/403 challenge says the token lacks a scope (RFC 6750
/// `error="insufficient_scope"`, which rmcp answers for a 403).
pub(crate) fn is_scope_challenge(www_authenticate: &str) -> bool {
    www_authenticate.contains("insufficient_scope")
}

pub(crate) fn auth_required(connector: &str, why: &str) -> ToolError {
    crate::credential::auth_required(connector, None, why)
}

/// The HTTP status a transport failure carries. rmcp wraps it in a
/// `#[error(transparent)]` variant, whose `source()` skips the status itself,
/// so the wrapper is matched as well as the bare error.
fn http_status<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a HttpStatusError> {
    if let Some(status) = e.downcast_ref::<HttpStatusError>() {
        return Some(status);
    }
    match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::HttpStatus(status)) => Some(status),
        _ => None,
    }
}

fn from_http_status(connector: &str, status: &HttpStatusError) -> ToolError {
    let code = status.status;
    let err = match code {
        401 => auth_required(connector, "it answered HTTP 401"),
        403 => forbidden(connector),
        404 => ToolError::with_cause(
            ErrorCode::Unavailable,
            format!("{connector} answered HTTP 404 (is the URL right?)"),
            true,
        ),
        _ => crate::http_status::transient(connector, code).unwrap_or_else(|| {
            ToolError::with_cause(
                ErrorCode::ConnectorCallFailed,
                format!("{connector} answered HTTP {code}"),
                false,
            )
        }),
    };
    crate::http_status::with_retry_after(err, status.retry_after.as_deref())
}

/// `Retry-After` as delta-seconds or an HTTP-date, relative to `now`.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_found_bare_and_inside_the_transport_wrapper() {
        let wrapped: StreamableHttpError<reqwest::Error> =
            HttpStatusError::new(429, Some("1".into())).into();
        let found = http_status(&wrapped).expect("the wrapped status");
        assert_eq!(
            (found.status, found.retry_after.as_deref()),
            (429, Some("1"))
        );
        let bare = HttpStatusError::new(503, None);
        assert_eq!(http_status(&bare).map(|s| s.status), Some(503));
        let other: StreamableHttpError<reqwest::Error> = StreamableHttpError::UnexpectedEndOfStream;
        assert!(http_status(&other).is_none());
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        let date = httpdate::fmt_http_date(now + Duration::from_secs(7));
        assert_eq!(parse_retry_after(&date, now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("soon", now), None);
        let past = httpdate::fmt_http_date(now - Duration::from_secs(7));
        assert_eq!(parse_retry_after(&past, now), Some(Duration::ZERO));
    }

    #[test]
    fn statuses_map_to_the_taxonomy() {
        let e = from_http_status("svc-503", &HttpStatusError::new(429, Some("2".into())));
        assert_eq!(e.code, ErrorCode::RateLimited);
        assert_eq!(e.retry_after_ms, Some(2000));
        let e = from_http_status("svc", &HttpStatusError::new(401, None));
        assert_eq!(e.code, ErrorCode::AuthRequired);
        assert!(!e.retryable);
        let e = from_http_status("svc", &HttpStatusError::new(503, Some("1".into())));
        assert_eq!(e.code, ErrorCode::Unavailable);
        assert_eq!(e.retry_after_ms, Some(1000));
        let e = from_http_status("svc", &HttpStatusError::new(400, None));
        assert_eq!(e.code, ErrorCode::ConnectorCallFailed);
        assert!(!e.retryable);
    }
}
