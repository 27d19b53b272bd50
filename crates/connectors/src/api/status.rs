//! HTTP answers and fetch failures of an `api` connector → the error
//! taxonomy. Decided by status code and failure type, never by body text.
//!
//! | answer | code |
//! | --- | --- |
//! | 401, 403 | `auth_required` (operator recovery, the slot's label and fields) |
//! | 404 | `not_found` |
//! | 408, 504, a request timeout | `timeout` |
//! | 429 | `rate_limited`, with `Retry-After` |
//! | 5xx, connect errors | `unavailable` (retryable, with `Retry-After` when given) |
//! | other 4xx | `connector_call_failed` (not retryable) with a short excerpt |
//! | a redirect | `connector_call_failed` (redirects are never followed) |
//! | a refused address or path | `connector_call_failed` (not retryable) |
//! | a response over `max_response_bytes` | `result_too_large` |

use connecta_core::config::CredentialSlot;
use connecta_core::error::{ErrorCode, MAX_ECHO_BYTES, ToolError, clamp_text};
use http::{HeaderMap, StatusCode};

use super::fetch::FetchError;
use crate::credential::auth_required;
use crate::http_status;

/// Bytes of an error body echoed to the caller (after redaction).
const EXCERPT_BYTES: usize = 300;

/// A non-2xx answer as a typed error. `excerpt` is the (already redacted)
/// start of the body, used only for client errors that explain themselves.
pub(crate) fn from_status(
    connector: &str,
    slot: Option<&CredentialSlot>,
    status: StatusCode,
    headers: &HeaderMap,
    excerpt: &str,
) -> ToolError {
    let code = status.as_u16();
    let err = match code {
        401 | 403 => auth_required(
            connector,
            slot,
            &format!(
                "the API refused the request (HTTP {code}){}",
                if slot.is_some() {
                    "; the stored credential is missing a permission or was rejected"
                } else {
                    ""
                }
            ),
        ),
        404 => ToolError::new(
            ErrorCode::NotFound,
            format!("{connector} answered HTTP 404: no such resource"),
        )
        .detail("connector", connector),
        _ if let Some(err) = http_status::transient(connector, code) => err,
        _ => {
            let excerpt = excerpt.trim();
            let mut msg = format!("{connector} answered HTTP {code}");
            if !excerpt.is_empty() {
                msg.push_str(": ");
                msg.push_str(&clamp_text(excerpt, EXCERPT_BYTES));
            }
            ToolError::with_cause(ErrorCode::ConnectorCallFailed, msg, false)
        }
    };
    let retry_after = headers
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok());
    http_status::with_retry_after(err.detail("httpStatus", code), retry_after)
}

/// A fetch failure as a typed error.
pub(crate) fn from_fetch(connector: &str, e: &FetchError) -> ToolError {
    let msg = clamp_text(&e.to_string(), MAX_ECHO_BYTES).into_owned();
    match e {
        FetchError::Refused(_) => ToolError::with_cause(
            ErrorCode::ConnectorCallFailed,
            format!(
                "{connector}: {msg}; requests to private, loopback, link-local and metadata addresses are refused unless the connector sets allow_private_network = true"
            ),
            false,
        )
        .detail("refusal", "address"),
        FetchError::Escapes => ToolError::invalid_args(format!(
            "{connector}: the request path would leave the API's base URL; refused"
        )),
        FetchError::Redirect(_) => ToolError::with_cause(
            ErrorCode::ConnectorCallFailed,
            format!("{connector}: {msg}; if the API moved, update the connector's base_url"),
            false,
        )
        .detail("refusal", "redirect"),
        FetchError::TooLarge { limit, declared } => ToolError::new(
            ErrorCode::ResultTooLarge,
            format!(
                "{connector}: {msg}{}; ask for less (a narrower query or a smaller page) or raise the connector's max_response_bytes",
                match declared {
                    Some(d) => format!(" (it declared {d} bytes; nothing was read)"),
                    None => " (cut while streaming)".to_owned(),
                }
            ),
        )
        .detail("limitBytes", *limit as u64),
        FetchError::Connect(_) | FetchError::Other(_) => ToolError::with_cause(
            ErrorCode::Unavailable,
            format!("{connector} is unreachable: {msg}"),
            true,
        ),
        FetchError::Timeout => {
            ToolError::new(ErrorCode::Timeout, format!("{connector} did not answer in time"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connecta_core::config::{CredentialPlacement, CredentialScheme};
    use http::HeaderValue;

    fn map(status: u16, retry_after: Option<&str>) -> ToolError {
        let mut h = HeaderMap::new();
        if let Some(r) = retry_after {
            h.insert(
                http::header::RETRY_AFTER,
                HeaderValue::from_str(r).expect("hv"),
            );
        }
        let slot = CredentialSlot {
            label: "API token".into(),
            fields: vec!["secret".into()],
            placement: CredentialPlacement::Header("Authorization".into()),
            scheme: CredentialScheme::Bearer,
            help: None,
        };
        from_status(
            "svc",
            Some(&slot),
            StatusCode::from_u16(status).expect("status"),
            &h,
            "{\"message\":\"field x is bad\"}",
        )
    }

    #[test]
    fn statuses_map_to_the_taxonomy() {
        for s in [401, 403] {
            let e = map(s, None);
            assert_eq!(e.code, ErrorCode::AuthRequired);
            assert_eq!(e.details["recovery"], "operator_config");
            assert_eq!(e.details["label"], "API token");
            assert_eq!(
                e.next_action.as_ref().map(|a| a.tool.as_ref()),
                Some("authorize_connector")
            );
        }
        assert_eq!(map(404, None).code, ErrorCode::NotFound);
        let e = map(429, Some("3"));
        assert_eq!(
            (e.code, e.retry_after_ms),
            (ErrorCode::RateLimited, Some(3000))
        );
        assert!(e.retryable);
        let e = map(503, Some("1"));
        assert_eq!(
            (e.code, e.retry_after_ms),
            (ErrorCode::Unavailable, Some(1000))
        );
        assert_eq!(map(500, None).code, ErrorCode::Unavailable);
        assert_eq!(map(504, None).code, ErrorCode::Timeout);
        let e = map(422, None);
        assert_eq!(e.code, ErrorCode::ConnectorCallFailed);
        assert!(!e.retryable);
        assert!(e.message.contains("field x is bad"), "{}", e.message);
        assert_eq!(e.details["httpStatus"], 422);
    }

    #[test]
    fn fetch_failures_map_to_the_taxonomy() {
        assert_eq!(
            from_fetch("svc", &FetchError::Connect("connection refused".into())).code,
            ErrorCode::Unavailable
        );
        assert_eq!(
            from_fetch(
                "svc",
                &FetchError::TooLarge {
                    limit: 10,
                    declared: Some(99)
                }
            )
            .code,
            ErrorCode::ResultTooLarge
        );
        assert_eq!(
            from_fetch("svc", &FetchError::Redirect(302)).code,
            ErrorCode::ConnectorCallFailed
        );
        assert_eq!(
            from_fetch("svc", &FetchError::Escapes).code,
            ErrorCode::InvalidArgs
        );
        assert_eq!(
            from_fetch("svc", &FetchError::Timeout).code,
            ErrorCode::Timeout
        );
    }
}
