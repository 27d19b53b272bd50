//! Vault credentials as connectors use them: a [`CredentialSource`] the
//! gateway provides (it knows the vault), the slot from config, and the
//! framing of the values into what goes on the wire (`Bearer`, raw, or
//! `Basic` over `user:secret`).
//!
//! Architecture invariant: a credential value is only ever held as a
//! [`Secret`] or a sensitive `HeaderValue`; no error, log line or status built
//! here contains one. Every failure is an `auth_required` whose recovery is an
//! operator's, naming the slot's label and fields, never a value.

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine;
use connecta_core::config::{CredentialPlacement, CredentialScheme, CredentialSlot};
use connecta_core::error::{ErrorCode, NextAction, ToolError};
use connecta_core::secret::Secret;
use http::{HeaderName, HeaderValue};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::json;

/// Why a credential could not be loaded. No variant holds a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialUnavailable {
    /// Nothing (or not every field) is stored for the connector.
    Missing { fields: Vec<String> },
    /// The vault key is not configured or cannot be read (operator detail).
    NoKey(String),
    /// The stored values were sealed under another key.
    WrongKey,
    /// The stored values cannot be read (operator detail).
    Unreadable(String),
    /// An OAuth connector nobody has consented for yet, or whose consent
    /// ended (the refresh token was refused).
    NotAuthorized,
    /// A value could not be renewed for a reason that may pass (the OAuth
    /// server was unreachable or failed): retry later, nobody need act.
    Unreachable(String),
}

impl CredentialUnavailable {
    /// What an agent may be told: no paths, no store errors.
    pub fn describe(&self) -> String {
        match self {
            CredentialUnavailable::Missing { fields } => {
                format!("no value is set for {}", fields.join(", "))
            }
            CredentialUnavailable::NoKey(_) => {
                "the vault key is not available to the gateway".into()
            }
            CredentialUnavailable::WrongKey => {
                "the vault was encrypted with a different key than the gateway has".into()
            }
            CredentialUnavailable::Unreadable(_) => "the stored credential cannot be read".into(),
            CredentialUnavailable::NotAuthorized => {
                "the gateway is not authorized at its OAuth server (no consent yet, or it was withdrawn)".into()
            }
            CredentialUnavailable::Unreachable(why) => why.clone(),
        }
    }

    /// What an operator is told (logs, the CLI): with the detail.
    pub fn operator_detail(&self) -> String {
        match self {
            CredentialUnavailable::NoKey(d) => format!("the vault key is not available: {d}"),
            CredentialUnavailable::Unreadable(d) => {
                format!("the stored credential cannot be read: {d}")
            }
            other => other.describe(),
        }
    }
}

/// Where a connector gets its credential values, at call time.
#[async_trait]
pub trait CredentialSource: Send + Sync {
    /// Every field of the slot, in the slot's order.
    async fn load(&self) -> Result<Vec<(String, Secret)>, CredentialUnavailable>;

    /// The downstream refused what `load` gave (HTTP 401): a source that
    /// can get a new value (an OAuth refresh) should, on the next `load`.
    async fn rejected(&self) {}
}

/// A connector's credential slot and where its values come from.
#[derive(Clone)]
pub struct CredentialBinding {
    pub slot: CredentialSlot,
    pub source: Arc<dyn CredentialSource>,
    /// Recovered by a person's OAuth consent (`authorize_connector` hands
    /// out the link), not by an operator setting a value.
    pub consent: bool,
}

/// A framed credential, ready to apply last to a request.
#[derive(Clone)]
pub enum Framed {
    Header(HeaderName, HeaderValue),
    Query(String, Secret),
}

/// Framed credential plus the strings that must never come back out (the
/// raw field values and the encoded token), for redacting responses.
pub struct Applied {
    pub framed: Framed,
    pub secrets: Vec<String>,
}

impl CredentialBinding {
    /// Load and frame the credential, or the `auth_required` error that
    /// tells the agent an operator must act.
    pub async fn apply(&self, connector: &str) -> Result<Applied, ToolError> {
        let values = self.source.load().await.map_err(|why| {
            if let CredentialUnavailable::Unreachable(detail) = &why {
                return ToolError::with_cause(
                    ErrorCode::Unavailable,
                    format!("{connector} cannot be called right now: {detail}"),
                    true,
                );
            }
            if self.consent {
                consent_required(connector, &why.describe())
            } else {
                auth_required(connector, Some(&self.slot), &why.describe())
            }
        })?;
        frame(&self.slot, &values).map_err(|why| auth_required(connector, Some(&self.slot), &why))
    }

    /// The header this credential occupies, if it is a header.
    pub fn header_name(&self) -> Option<&str> {
        match &self.slot.placement {
            CredentialPlacement::Header(h) => Some(h),
            CredentialPlacement::Query(_) => None,
        }
    }
}

fn field<'a>(values: &'a [(String, Secret)], name: &str) -> Result<&'a str, String> {
    values
        .iter()
        .find(|(f, _)| f == name)
        .map(|(_, v)| v.expose())
        .ok_or_else(|| format!("no value is set for {name}"))
}

/// Frame the slot's values. Control characters are refused before framing
/// (a CR/LF would split a header); `Basic` refuses a `:` in the user.
pub fn frame(slot: &CredentialSlot, values: &[(String, Secret)]) -> Result<Applied, String> {
    let mut secrets = Vec::new();
    for f in &slot.fields {
        let v = field(values, f)?;
        if v.is_empty() {
            return Err(format!("the value of {f} is empty"));
        }
        if v.chars().any(char::is_control) {
            return Err(format!("the value of {f} contains control characters"));
        }
        secrets.push(v.to_owned());
    }
    let token = match slot.scheme {
        CredentialScheme::Bearer => format!("Bearer {}", field(values, &slot.fields[0])?),
        CredentialScheme::Raw => field(values, &slot.fields[0])?.to_owned(),
        CredentialScheme::Basic => {
            let user = field(values, &slot.fields[0])?;
            if user.contains(':') {
                return Err(format!(
                    "the value of {} contains ':' which Basic authentication cannot carry",
                    slot.fields[0]
                ));
            }
            let secret = field(values, &slot.fields[1])?;
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{secret}"));
            secrets.push(encoded.clone());
            format!("Basic {encoded}")
        }
    };
    let framed = match &slot.placement {
        CredentialPlacement::Header(name) => {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("\"{name}\" is not a valid header name"))?;
            let mut value = HeaderValue::from_str(&token)
                .map_err(|_| "the value has characters a header cannot carry".to_owned())?;
            value.set_sensitive(true);
            Framed::Header(name, value)
        }
        CredentialPlacement::Query(name) => {
            // An API that echoes its request URL echoes the encoded form.
            let encoded = form_encode(&token);
            if encoded != token {
                secrets.push(encoded);
            }
            Framed::Query(name.clone(), Secret::new(token))
        }
    };
    Ok(Applied { framed, secrets })
}

/// `application/x-www-form-urlencoded`, as the query string is built.
fn form_encode(s: &str) -> String {
    const FORM: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'*')
        .remove(b'-')
        .remove(b'.')
        .remove(b'_');
    utf8_percent_encode(s, FORM).to_string().replace("%20", "+")
}

/// `auth_required` with the operator recovery: the slot's label and fields
/// when there is a slot, and `authorize_connector` as the next action.
pub fn auth_required(connector: &str, slot: Option<&CredentialSlot>, why: &str) -> ToolError {
    let mut e = ToolError::new(
        ErrorCode::AuthRequired,
        format!("{connector} needs credentials: {why}"),
    )
    .detail("connector", connector)
    .detail("operation", "call")
    .detail("recovery", "operator_config")
    .detail(
        "retry",
        "stop and report this to the user; an operator must set the connector's credentials",
    )
    .next(NextAction::new(
        "authorize_connector",
        json!({ "connector": connector }),
    ));
    if let Some(slot) = slot {
        e = e
            .detail("label", slot.label.clone())
            .detail("fields", slot.fields.clone());
    }
    e
}

/// The `auth_required` of an OAuth connector: a person must consent, through
/// the link `authorize_connector` returns.
pub fn consent_required(connector: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::AuthRequired,
        format!("{connector} needs authorization: {why}"),
    )
    .detail("connector", connector)
    .detail("operation", "call")
    .detail("recovery", "user_consent")
    .detail(
        "retry",
        "call authorize_connector: it returns a link the user must open to let the gateway in; retry once they have",
    )
    .next(NextAction::new(
        "authorize_connector",
        json!({ "connector": connector }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(scheme: CredentialScheme, fields: &[&str]) -> CredentialSlot {
        CredentialSlot {
            label: "Token".into(),
            fields: fields.iter().map(|f| (*f).to_owned()).collect(),
            placement: CredentialPlacement::Header("Authorization".into()),
            scheme,
            help: None,
        }
    }

    fn vals(v: &[(&str, &str)]) -> Vec<(String, Secret)> {
        v.iter()
            .map(|(f, s)| ((*f).to_owned(), Secret::new(*s)))
            .collect()
    }

    fn header(a: &Applied) -> String {
        match &a.framed {
            Framed::Header(_, v) => v.to_str().expect("ascii").to_owned(),
            Framed::Query(..) => panic!("header expected"),
        }
    }

    #[test]
    fn framing_bearer_raw_and_basic() {
        let a = frame(
            &slot(CredentialScheme::Bearer, &["secret"]),
            &vals(&[("secret", "tok-123")]),
        )
        .expect("bearer");
        assert_eq!(header(&a), "Bearer tok-123");
        let a = frame(
            &slot(CredentialScheme::Raw, &["secret"]),
            &vals(&[("secret", "tok-123")]),
        )
        .expect("raw");
        assert_eq!(header(&a), "tok-123");
        let a = frame(
            &slot(CredentialScheme::Basic, &["user", "secret"]),
            &vals(&[("user", "ann"), ("secret", "pw")]),
        )
        .expect("basic");
        assert_eq!(header(&a), "Basic YW5uOnB3");
        assert!(a.secrets.contains(&"YW5uOnB3".to_owned()));
        if let Framed::Header(_, v) = &a.framed {
            assert!(v.is_sensitive());
        }
    }

    #[test]
    fn a_query_credential_is_redacted_in_its_encoded_form_too() {
        let mut s = slot(CredentialScheme::Raw, &["secret"]);
        s.placement = CredentialPlacement::Query("api_key".into());
        let a = frame(&s, &vals(&[("secret", "ab+c/d= e")])).expect("query");
        assert!(
            matches!(&a.framed, Framed::Query(n, v) if n == "api_key" && v.expose() == "ab+c/d= e")
        );
        assert!(
            a.secrets.contains(&"ab%2Bc%2Fd%3D+e".to_owned()),
            "{:?}",
            a.secrets.len()
        );
    }

    #[test]
    fn control_characters_missing_fields_and_colons_are_refused_without_values() {
        let s = slot(CredentialScheme::Bearer, &["secret"]);
        let e = frame(&s, &vals(&[("secret", "abc\r\nX-Evil: 1")]))
            .err()
            .expect("refused");
        assert!(!e.contains("abc"), "{e}");
        assert!(frame(&s, &vals(&[])).is_err());
        let b = slot(CredentialScheme::Basic, &["user", "secret"]);
        let e = frame(&b, &vals(&[("user", "a:b"), ("secret", "zz-secret")]))
            .err()
            .expect("colon");
        assert!(!e.contains("zz-secret"));
    }

    #[test]
    fn auth_required_names_the_slot_and_the_next_action() {
        let s = slot(CredentialScheme::Bearer, &["secret"]);
        let e = auth_required("gh", Some(&s), "no value is set for secret");
        assert_eq!(e.code, ErrorCode::AuthRequired);
        assert!(!e.retryable);
        assert_eq!(e.details["recovery"], "operator_config");
        assert_eq!(e.details["label"], "Token");
        assert_eq!(e.details["fields"], json!(["secret"]));
        let next = e.next_action.expect("next");
        assert_eq!(next.tool, "authorize_connector");
        assert_eq!(next.arguments, json!({"connector": "gh"}));
    }
}
