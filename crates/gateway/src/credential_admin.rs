//! What an operator does with connector credentials, shared by the CLI
//! (`connecta credential …`) and the operator web UI: show each slot's
//! fields masked, set or replace values, remove them, and run a connector's
//! declared test with what is stored.
//!
//! Architecture invariant: no value leaves here except as a masked suffix;
//! a downstream's answer to a test is redacted before it is returned.

use std::sync::Arc;
use std::time::{Duration, Instant};

use connecta_connectors::{
    ApiConnector, CallOptions, Connector, CredentialBinding, CredentialSource, McpConnector,
    McpOptions,
};
use connecta_core::config::{Config, ConnectorConfig, ConnectorKind, CredentialSlot};
use connecta_core::secret::{Secret, mask};
use connecta_store::{Store, StoreError};
use connecta_vault::{KeyLocation, Vault};
use serde::Serialize;
use serde_json::Value;

use crate::{ArgValidator, KeyCache, Redactor, VaultCredentials, now_ms};

#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("there is no connector \"{id}\" (connectors: {known})")]
    UnknownConnector { id: String, known: String },
    #[error("connector \"{0}\" declares no [connector.credential] slot")]
    NoSlot(String),
    #[error("the credential of \"{id}\" has no field \"{field}\" (fields: {fields})")]
    UnknownField {
        id: String,
        field: String,
        fields: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(
        "the vault was encrypted with a different key (stored key id {stored}, the current key has id {current}); use the key it was written with"
    )]
    KeyMismatch { stored: String, current: String },
    #[error("the vault key could not be read or created: {0}")]
    Key(String),
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
}

impl AdminError {
    /// The operator asked for something that cannot be (as opposed to the
    /// gateway failing to do it).
    pub fn is_caller_fault(&self) -> bool {
        matches!(
            self,
            AdminError::UnknownConnector { .. }
                | AdminError::NoSlot(_)
                | AdminError::UnknownField { .. }
                | AdminError::Invalid(_)
        )
    }
}

/// One field of a slot as an operator may see it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldState {
    pub field: String,
    pub set: bool,
    /// The last characters of a long value (`…wxyz`); never the value.
    pub masked: Option<String>,
    /// Set but unreadable (no key, another key, damaged).
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlotState {
    pub connector: String,
    pub label: String,
    pub fields: Vec<FieldState>,
}

/// A stored row whose connector declares no slot in this config.
#[derive(Debug, Clone)]
pub struct Orphan {
    pub connector: String,
    pub field: String,
}

/// Every declared slot with its fields' states, then the stored rows no
/// slot claims.
pub async fn slot_states(
    config: &Config,
    store: &dyn Store,
    keys: &KeyLocation,
) -> Result<(Vec<SlotState>, Vec<Orphan>), StoreError> {
    let key = keys.load();
    let rows = store.vault_list().await?;
    let mut slots = Vec::new();
    for c in &config.connectors {
        let Some(slot) = &c.credential else { continue };
        let fields = slot
            .fields
            .iter()
            .map(|f| {
                let row = rows.iter().find(|r| r.connector == c.id && &r.field == f);
                let (masked, problem) = match (row, &key) {
                    (None, _) => (None, None),
                    (Some(r), Ok(Some((k, _)))) => match connecta_vault::open(k, r) {
                        Ok(v) => (Some(mask(v.expose())), None),
                        Err(e) => (None, Some(e.to_string())),
                    },
                    (Some(_), Ok(None)) => (None, Some("no vault key".to_owned())),
                    (Some(_), Err(e)) => (None, Some(e.to_string())),
                };
                FieldState {
                    field: f.clone(),
                    set: row.is_some(),
                    masked,
                    problem,
                }
            })
            .collect();
        slots.push(SlotState {
            connector: c.id.clone(),
            label: slot.label.clone(),
            fields,
        });
    }
    let orphans = rows
        .iter()
        .filter(|r| {
            !config
                .connectors
                .iter()
                .any(|c| c.id == r.connector && (c.credential.is_some() || c.oauth.is_some()))
        })
        .map(|r| Orphan {
            connector: r.connector.clone(),
            field: r.field.clone(),
        })
        .collect();
    Ok((slots, orphans))
}

/// The connector `id` and its slot, or why not.
pub fn slot_of<'c>(
    config: &'c Config,
    id: &str,
) -> Result<(&'c ConnectorConfig, &'c CredentialSlot), AdminError> {
    let Some(c) = config.connectors.iter().find(|c| c.id == id) else {
        return Err(AdminError::UnknownConnector {
            id: id.to_owned(),
            known: config
                .connectors
                .iter()
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    match &c.credential {
        Some(slot) => Ok((c, slot)),
        None => Err(AdminError::NoSlot(id.to_owned())),
    }
}

/// What [`set`] did besides storing the values.
pub struct SetOutcome {
    /// The vault key file was created by this call: the operator must back
    /// it up.
    pub created_key: bool,
}

/// Set or replace some or all fields of `id`'s slot. Every value is checked
/// before anything is written.
pub async fn set(
    config: &Config,
    store: Arc<dyn Store>,
    keys: &KeyLocation,
    id: &str,
    values: &[(String, Secret)],
) -> Result<SetOutcome, AdminError> {
    let (_, slot) = slot_of(config, id)?;
    if values.is_empty() {
        return Err(AdminError::Invalid(format!(
            "no value given (fields: {})",
            slot.fields.join(", ")
        )));
    }
    for (f, v) in values {
        if !slot.fields.contains(f) {
            return Err(AdminError::UnknownField {
                id: id.to_owned(),
                field: connecta_core::error::clamp_text(f, 64).into_owned(),
                fields: slot.fields.join(", "),
            });
        }
        connecta_vault::check_value(f, v.expose())
            .map_err(|e| AdminError::Invalid(e.to_string()))?;
    }
    let created_key = seal_fields(store, keys, id, values).await?;
    Ok(SetOutcome { created_key })
}

/// Seal `values` into `connector`'s vault rows (upserted), creating the key
/// file when there is no key and the store is the embedded SQLite one
/// (`true` then). With PostgreSQL no key is ever generated: each replica
/// (and each machine running a management command) would make its own,
/// and the values one of them sealed would not open on the others. One
/// vault, one key: values sealed under another key are never mixed in.
pub async fn seal_fields(
    store: Arc<dyn Store>,
    keys: &KeyLocation,
    connector: &str,
    values: &[(String, Secret)],
) -> Result<bool, AdminError> {
    let key_error = |e: connecta_vault::KeyError| AdminError::Key(e.to_string());
    let (key, _, created_key) = if store.backend() == "sqlite" {
        keys.load_or_create().map_err(key_error)?
    } else {
        let (key, source) = keys.load().map_err(key_error)?.ok_or_else(|| {
            AdminError::Key(format!(
                "there is none (neither ${} nor {}), and with a shared database none is generated: give every replica the same key in ${} (e.g. `openssl rand -base64 32`)",
                connecta_vault::KEY_ENV,
                keys.file.display(),
                connecta_vault::KEY_ENV
            ))
        })?;
        (key, source, false)
    };
    if let Some(other) = store
        .vault_list()
        .await?
        .into_iter()
        .find(|r| r.key_id != key.id())
    {
        return Err(AdminError::KeyMismatch {
            stored: other.key_id,
            current: key.id(),
        });
    }
    Vault::new(store, key)
        .set(connector, values, now_ms())
        .await
        .map_err(|e| AdminError::Key(e.to_string()))?;
    Ok(created_key)
}

/// The answer of a credential test: `Ok` says what the downstream did,
/// `Err` why it failed. Both are secret-free.
pub type TestOutcome = Result<String, String>;

/// Run `id`'s declared test with the stored credential: an `api`
/// connector's `[connector.test]` request, or an `mcp` connector's tool
/// listing, on a connection of its own (the running one is not disturbed).
pub async fn test(
    config: &Config,
    store: Arc<dyn Store>,
    keys: &KeyLocation,
    id: &str,
) -> Result<TestOutcome, AdminError> {
    let (c, slot) = slot_of(config, id)?;
    // What the downstream says is returned: any secret it quotes back (the
    // vault's values, config header values) is redacted first.
    let redactor = Redactor::process();
    crate::register_config_secrets(c, &redactor);
    let source = Arc::new(VaultCredentials::new(
        id,
        slot.clone(),
        store,
        Arc::new(KeyCache::new(keys.clone())),
        redactor.clone(),
    ));
    if let Err(why) = source.load().await {
        return Ok(Err(why.operator_detail()));
    }
    let binding = CredentialBinding {
        slot: slot.clone(),
        source,
        consent: false,
    };
    let started = Instant::now();
    let outcome = match &c.kind {
        ConnectorKind::Api(api) => {
            let Some(t) = &api.test else {
                return Err(AdminError::Invalid(format!(
                    "connector \"{id}\" has no [connector.test] request to run; add one (tool and args)"
                )));
            };
            let Some(tool) = api.tools.iter().find(|x| x.name == t.tool) else {
                return Err(AdminError::Invalid(
                    "the [connector.test] tool is not declared".into(),
                ));
            };
            if let Err(e) = ArgValidator::compile(&tool.input_schema).check(&t.args) {
                return Ok(Err(format!("the [connector.test] args: {}", e.message)));
            }
            let connector =
                ApiConnector::new(id, api, Some(binding)).map_err(AdminError::Invalid)?;
            let args = match &t.args {
                Value::Object(m) => m.clone(),
                _ => Default::default(),
            };
            connector
                .call(
                    &t.tool,
                    args,
                    CallOptions {
                        timeout: c.timeout,
                        cancel: Default::default(),
                    },
                )
                .await
                .map(|r| {
                    let bytes = r
                        .content
                        .first()
                        .and_then(|b| b.get("text"))
                        .and_then(Value::as_str)
                        .map_or(0, str::len);
                    format!("{} answered {bytes} bytes", t.tool)
                })
        }
        ConnectorKind::Mcp(m) => {
            let connector = McpConnector::with_credential(
                id,
                m.transport.clone(),
                McpOptions::default(),
                Some(binding),
            );
            let r = connector
                .list_tools(c.timeout.max(Duration::from_secs(5)))
                .await
                .map(|tools| format!("listed {} tools", tools.len()));
            connector.shutdown().await;
            r
        }
    };
    let ms = started.elapsed().as_millis();
    Ok(match outcome {
        Ok(what) => Ok(format!("{what} in {ms} ms")),
        Err(e) => Err(format!("{}: {}", e.code, redactor.redact(&e.message))),
    })
}
