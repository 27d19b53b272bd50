//! The HTTP answers every HTTP downstream means the same way, MCP server or
//! API: a timeout, rate limiting, a server error, and a `Retry-After`
//! window on whatever is retryable. What differs (a 401's recovery, a 404,
//! other client errors) stays with each connector kind.

use std::time::SystemTime;

use connecta_core::error::{ErrorCode, ToolError};

use crate::parse_retry_after;

/// 408/504 → `timeout`; 429 → `rate_limited`; 5xx → `unavailable`
/// (retryable); `None` for every other status.
pub(crate) fn transient(connector: &str, code: u16) -> Option<ToolError> {
    Some(match code {
        408 | 504 => ToolError::new(
            ErrorCode::Timeout,
            format!("{connector} answered HTTP {code}"),
        ),
        429 => ToolError::new(
            ErrorCode::RateLimited,
            format!("{connector} is rate limiting requests (HTTP 429)"),
        ),
        500..=599 => ToolError::with_cause(
            ErrorCode::Unavailable,
            format!("{connector} answered HTTP {code}"),
            true,
        ),
        _ => return None,
    })
}

/// `err` with the window of a `Retry-After` header value, when `err` is
/// retryable and the value parses (delta-seconds or an HTTP-date).
pub(crate) fn with_retry_after(mut err: ToolError, header: Option<&str>) -> ToolError {
    let window = header.and_then(|v| parse_retry_after(v, SystemTime::now()));
    if let Some(window) = window
        && err.retryable
    {
        err.retry_after_ms = Some(window.as_millis().min(u64::MAX as u128) as u64);
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_statuses_share_one_meaning() {
        assert_eq!(
            transient("c", 408).map(|e| e.code),
            Some(ErrorCode::Timeout)
        );
        assert_eq!(
            transient("c", 504).map(|e| e.code),
            Some(ErrorCode::Timeout)
        );
        assert_eq!(
            transient("c", 429).map(|e| e.code),
            Some(ErrorCode::RateLimited)
        );
        let unavailable = transient("c", 503).expect("5xx");
        assert_eq!(unavailable.code, ErrorCode::Unavailable);
        assert!(unavailable.retryable);
        for other in [200, 301, 400, 401, 403, 404, 409] {
            assert!(transient("c", other).is_none(), "{other}");
        }
    }

    #[test]
    fn a_window_is_kept_only_on_a_retryable_error() {
        let e = with_retry_after(transient("c", 503).expect("5xx"), Some("2"));
        assert_eq!(e.retry_after_ms, Some(2_000));
        let refused = ToolError::with_cause(ErrorCode::ConnectorCallFailed, "no", false);
        assert_eq!(with_retry_after(refused, Some("2")).retry_after_ms, None);
        let e = with_retry_after(transient("c", 503).expect("5xx"), Some("soon"));
        assert_eq!(e.retry_after_ms, None);
    }
}
