//! Downstream OAuth, the state half: for each mcp connector with
//! `[connector.oauth]`, the registration, the pending consent and the tokens
//! live in the vault (encrypted, bound to the connector), so any replica can
//! hand out the link, take the callback and use the tokens.
//!
//! A flow: `authorize_connector` (or the operator UI) discovers the
//! authorization server, registers the gateway when needed, and stores a
//! pending consent (a random `state`, the PKCE verifier, the link) for ten
//! minutes; asking again hands out the same link. The person's browser comes
//! back to `/oauth/callback`, where the state is matched in constant time
//! and deleted (so it works once, on any replica), the issuer is checked,
//! and the code is exchanged. Calls then carry the access token, refreshed
//! before it expires or when the downstream refuses it.
//!
//! Architecture invariants: no token, code, verifier or client secret is in
//! any error, log line or answer (the access token is registered with the
//! redactor before use); every refusal of a callback looks the same to the
//! browser (the reason goes to the log), so connector ids cannot be probed.

use std::sync::Arc;

use async_trait::async_trait;
use connecta_connectors::oauth::{self, ClientCredentials, ServerInfo, Tokens};
use connecta_connectors::{CredentialSource, CredentialUnavailable};
use connecta_core::config::{
    ConnectorOAuth, CredentialPlacement, CredentialScheme, CredentialSlot,
};
use connecta_core::error::{ErrorCode, ToolError};
use connecta_core::secret::Secret;
use connecta_store::Store;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

use crate::clock::now_ms;
use crate::credential_admin::seal_fields;
use crate::{KeyCache, Redactor};

const CLIENT_FIELD: &str = "oauth.client";
const TOKENS_FIELD: &str = "oauth.tokens";
const PENDING_FIELD: &str = "oauth.pending";
/// How long a consent link stays good.
const PENDING_TTL_MS: i64 = 10 * 60 * 1000;
/// Tokens are refreshed this long before the server said they expire (or
/// halfway through their life, when that is sooner).
const REFRESH_EARLY_MS: i64 = 60_000;
/// How long a replica whose refresh was refused as spent waits for the
/// tokens of another replica that refreshed with the same refresh token,
/// before it asks for a new consent.
const ROTATION_WAIT: std::time::Duration = std::time::Duration::from_secs(3);
/// Where the authorization server sends the person back.
pub const CALLBACK_PATH: &str = "/oauth/callback";

/// The fields of the stored rows that hold secrets.
const SECRET_KEYS: &[&str] = &["access_token", "refresh_token", "client_secret", "verifier"];

fn register_secrets(v: &serde_json::Value, redactor: &Redactor) {
    if let serde_json::Value::Object(m) = v {
        for (k, item) in m {
            match item {
                serde_json::Value::String(text) if SECRET_KEYS.contains(&k.as_str()) => {
                    redactor.add(text);
                }
                other => register_secrets(other, redactor),
            }
        }
    }
}

/// The slot an OAuth connector's binding frames its token with.
pub fn oauth_slot() -> CredentialSlot {
    CredentialSlot {
        label: "OAuth authorization".into(),
        fields: vec!["access_token".into()],
        placement: CredentialPlacement::Header("Authorization".into()),
        scheme: CredentialScheme::Bearer,
        help: None,
    }
}

/// The registration the flow and every refresh use.
#[derive(Serialize, Deserialize)]
struct Registration {
    info: ServerInfo,
    client: ClientCredentials,
    redirect_uri: String,
    /// The config it was made under (`client_id`, `authorization_server`):
    /// when the operator changes them, the next consent starts afresh.
    #[serde(default)]
    configured: (Option<String>, Option<String>),
}

/// A consent handed out and not yet used.
#[derive(Serialize, Deserialize)]
struct Pending {
    state: String,
    verifier: String,
    url: String,
    expires_at_ms: i64,
    redirect_uri: String,
}

/// Where a connector's authorization stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum OAuthStatus {
    /// Tokens are stored; `expiresAtMs` is the access token's.
    #[serde(rename_all = "camelCase")]
    Authorized {
        issuer: Option<String>,
        expires_at_ms: Option<i64>,
        /// A new consent handed out (a re-authorization) and not yet given:
        /// the current tokens stay in use until it is.
        #[serde(skip_serializing_if = "Option::is_none")]
        authorization_url: Option<String>,
    },
    /// A person must open the link.
    #[serde(rename_all = "camelCase")]
    ConsentRequired {
        authorization_url: String,
        expires_at_ms: i64,
    },
    NotAuthorized,
}

/// Why a callback was refused (for the log only; the browser sees one page).
#[derive(Debug)]
pub struct CallbackRefusal(pub String);

/// One OAuth connector's credential source and flow.
pub struct OAuthCredentials {
    connector: String,
    config: ConnectorOAuth,
    /// The MCP endpoint: the RFC 8707 resource.
    resource: String,
    redirect_uri: String,
    store: Arc<dyn Store>,
    keys: Arc<KeyCache>,
    redactor: Redactor,
    /// One refresh or flow start at a time in this process.
    lock: tokio::sync::Mutex<()>,
    /// Fingerprints of the access token last handed out here and of the
    /// one the downstream refused (HTTP 401): that one is refreshed on the
    /// next load, and tokens another replica stored since are used as
    /// they are.
    given: std::sync::Mutex<Given>,
}

/// See [`OAuthCredentials::given`]: no copy of a token, only its hash.
#[derive(Default)]
struct Given {
    last: Option<u64>,
    refused: Option<u64>,
}

fn fingerprint(access_token: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    access_token.hash(&mut h);
    h.finish()
}

impl OAuthCredentials {
    pub fn new(
        connector: &str,
        config: ConnectorOAuth,
        resource: &str,
        public_url: &str,
        store: Arc<dyn Store>,
        keys: Arc<KeyCache>,
        redactor: Redactor,
    ) -> OAuthCredentials {
        OAuthCredentials {
            connector: connector.to_owned(),
            config,
            resource: resource.to_owned(),
            redirect_uri: format!("{}{CALLBACK_PATH}", public_url.trim_end_matches('/')),
            store,
            keys,
            redactor,
            lock: tokio::sync::Mutex::new(()),
            given: std::sync::Mutex::new(Given::default()),
        }
    }

    async fn read<T: DeserializeOwned>(
        &self,
        field: &str,
    ) -> Result<Option<T>, CredentialUnavailable> {
        let rows = self.store.vault_get(&self.connector).await.map_err(|e| {
            CredentialUnavailable::Unreadable(format!("the store could not be read: {e}"))
        })?;
        let Some(row) = rows.iter().find(|r| r.field == field) else {
            return Ok(None);
        };
        let key = self.keys.key_for(&row.key_id)?;
        let value = connecta_vault::open(&key, row)
            .map_err(|e| CredentialUnavailable::Unreadable(e.to_string()))?;
        let damaged = |e: serde_json::Error| {
            CredentialUnavailable::Unreadable(format!("{field} is damaged: {e}"))
        };
        let json: serde_json::Value = serde_json::from_str(value.expose()).map_err(damaged)?;
        // Whatever secret a row holds is known to the redactor from the
        // moment it is read (after a restart too), not only once renewed.
        register_secrets(&json, &self.redactor);
        serde_json::from_value(json).map(Some).map_err(damaged)
    }

    async fn write<T: Serialize>(&self, field: &str, value: &T) -> Result<(), String> {
        let text = serde_json::to_string(value).map_err(|e| e.to_string())?;
        let created = seal_fields(
            self.store.clone(),
            self.keys.location(),
            &self.connector,
            &[(field.to_owned(), Secret::new(text))],
        )
        .await
        .map_err(|e| e.to_string())?;
        if created {
            tracing::warn!(
                "created a new vault key in {} (mode 0600) to keep {}'s authorization; back it up, and give every replica the same key (CONNECTA_VAULT_KEY)",
                self.keys.location().file.display(),
                self.connector
            );
        }
        Ok(())
    }

    async fn forget_field(&self, field: &str) -> Result<u64, String> {
        self.store
            .vault_delete_field(&self.connector, field)
            .await
            .map_err(|e| e.to_string())
    }

    /// Where the authorization stands, without changing anything.
    pub async fn status(&self) -> Result<OAuthStatus, CredentialUnavailable> {
        let now = now_ms();
        let pending = self
            .read::<Pending>(PENDING_FIELD)
            .await?
            .filter(|p| p.expires_at_ms > now && p.redirect_uri == self.redirect_uri);
        if let Some(t) = self.read::<Tokens>(TOKENS_FIELD).await? {
            let issuer = self
                .read::<Registration>(CLIENT_FIELD)
                .await?
                .map(|r| r.info.issuer);
            return Ok(OAuthStatus::Authorized {
                issuer,
                expires_at_ms: t.expires_at_ms,
                authorization_url: pending.map(|p| p.url),
            });
        }
        Ok(match pending {
            Some(p) => OAuthStatus::ConsentRequired {
                authorization_url: p.url,
                expires_at_ms: p.expires_at_ms,
            },
            None => OAuthStatus::NotAuthorized,
        })
    }

    fn configured(&self) -> (Option<String>, Option<String>) {
        (
            self.config.client_id.clone(),
            self.config.authorization_server.clone(),
        )
    }

    /// The consent link to hand out: the pending one when it is still good,
    /// else a new flow (discovering and registering as needed). Already
    /// authorized is said as such, unless an operator forces a new consent.
    pub async fn authorize(
        &self,
        force: bool,
        by_operator: bool,
    ) -> Result<OAuthStatus, ToolError> {
        let _one = self.lock.lock().await;
        let id = &self.connector;
        // The agent learns whether trying again can help; the operator
        // reads the details (URLs, answers) in the log.
        let failed = |e: oauth::OAuthError| {
            tracing::warn!(connector = %id, error = %e, "a downstream authorization could not be started");
            ToolError::with_cause(
                ErrorCode::Unavailable,
                format!(
                    "the authorization of {id} could not be started: {} (the gateway log has the details)",
                    if e.is_transient() {
                        "its authorization server could not be reached"
                    } else {
                        "its authorization server cannot be used as it is configured; an operator must look"
                    }
                ),
                e.is_transient(),
            )
        };
        let unavailable = |why: String| {
            tracing::warn!(connector = %id, error = %why, "a downstream authorization could not be started");
            ToolError::with_cause(
                ErrorCode::Unavailable,
                format!(
                    "the authorization of {id} could not be started: the gateway could not keep its state"
                ),
                true,
            )
        };
        // The authorization is the connector's, used for every caller: only
        // an operator replaces a working one (an agent's `force` renews a
        // pending link, nothing more).
        match self.status().await {
            Ok(s @ OAuthStatus::Authorized { .. }) if !(force && by_operator) => return Ok(s),
            Ok(s @ OAuthStatus::ConsentRequired { .. }) if !force => return Ok(s),
            Ok(_) => {}
            Err(e) => return Err(unavailable(e.operator_detail())),
        }
        let http = self.http().map_err(failed)?;
        let stored = self
            .read::<Registration>(CLIENT_FIELD)
            .await
            .map_err(|e| unavailable(e.operator_detail()))?;
        // A forced consent keeps the registration: the tokens in use belong
        // to it, and stay in use until the new consent is given.
        let reg = match stored {
            Some(r) if r.redirect_uri == self.redirect_uri && r.configured == self.configured() => {
                r
            }
            _ => {
                let info = oauth::discover(
                    &http,
                    &self.resource,
                    self.config.authorization_server.as_deref(),
                )
                .await
                .map_err(failed)?;
                let client = match &self.config.client_id {
                    Some(client_id) => ClientCredentials::configured(
                        client_id,
                        self.config.client_secret.as_ref().map(|s| s.expose()),
                    ),
                    None => oauth::register(&http, &info, &self.redirect_uri, &self.scopes(&info))
                        .await
                        .map_err(failed)?,
                };
                if let Some(s) = &client.client_secret {
                    self.redactor.add(s);
                }
                let reg = Registration {
                    info,
                    client,
                    redirect_uri: self.redirect_uri.clone(),
                    configured: self.configured(),
                };
                self.write(CLIENT_FIELD, &reg).await.map_err(unavailable)?;
                tracing::info!(connector = %id, issuer = %reg.info.issuer, "registered with the downstream authorization server");
                reg
            }
        };
        let (verifier, challenge) = oauth::pkce();
        let state = oauth::random_token();
        let url = oauth::authorization_url(
            &reg.info,
            &reg.client,
            &self.redirect_uri,
            &self.scopes(&reg.info),
            &state,
            &challenge,
        );
        let pending = Pending {
            state,
            verifier: verifier.expose().to_owned(),
            url: url.clone(),
            expires_at_ms: now_ms() + PENDING_TTL_MS,
            redirect_uri: self.redirect_uri.clone(),
        };
        self.write(PENDING_FIELD, &pending)
            .await
            .map_err(unavailable)?;
        tracing::info!(connector = %id, "a consent link was handed out");
        Ok(OAuthStatus::ConsentRequired {
            authorization_url: url,
            expires_at_ms: pending.expires_at_ms,
        })
    }

    fn scopes(&self, info: &ServerInfo) -> Vec<String> {
        if self.config.scopes.is_empty() {
            info.scopes_supported.clone()
        } else {
            self.config.scopes.clone()
        }
    }

    /// Drop the tokens and any pending consent (the registration stays).
    pub async fn forget(&self) -> Result<u64, String> {
        let _one = self.lock.lock().await;
        Ok(self.forget_field(TOKENS_FIELD).await? + self.forget_field(PENDING_FIELD).await?)
    }

    /// Whether `state` is this connector's pending one (constant time).
    async fn holds_state(&self, state: &str) -> bool {
        match self.read::<Pending>(PENDING_FIELD).await {
            Ok(Some(p)) => bool::from(p.state.as_bytes().ct_eq(state.as_bytes())),
            _ => false,
        }
    }

    /// Finish a flow whose state this connector holds.
    async fn complete(
        &self,
        state: &str,
        code: Option<&str>,
        iss: Option<&str>,
        error: Option<&str>,
    ) -> Result<(), CallbackRefusal> {
        let refuse = |why: String| CallbackRefusal(format!("{}: {why}", self.connector));
        let pending = match self.read::<Pending>(PENDING_FIELD).await {
            Ok(Some(p)) if bool::from(p.state.as_bytes().ct_eq(state.as_bytes())) => p,
            _ => return Err(refuse("the state is not pending".into())),
        };
        // Taken once: a replayed or raced callback finds nothing to delete.
        if self.forget_field(PENDING_FIELD).await.map_err(refuse)? != 1 {
            return Err(refuse("the state was already used".into()));
        }
        if pending.expires_at_ms <= now_ms() {
            return Err(refuse("the consent link had expired".into()));
        }
        if let Some(e) = error {
            return Err(refuse(format!(
                "the authorization server answered error={}",
                connecta_core::error::clamp_text(e, 64).escape_debug()
            )));
        }
        let reg = match self.read::<Registration>(CLIENT_FIELD).await {
            Ok(Some(r)) => r,
            _ => return Err(refuse("the registration is gone".into())),
        };
        match iss {
            Some(i) if i.trim_end_matches('/') != reg.info.issuer.trim_end_matches('/') => {
                return Err(refuse(
                    "the callback names another issuer (RFC 9207)".into(),
                ));
            }
            None if reg.info.iss_in_response => {
                return Err(refuse(
                    "the callback has no iss, which this server promises (RFC 9207)".into(),
                ));
            }
            _ => {}
        }
        let Some(code) = code.filter(|c| !c.is_empty()) else {
            return Err(refuse("the callback has no code".into()));
        };
        let http = self.http().map_err(|e| refuse(e.to_string()))?;
        let tokens = oauth::exchange_code(
            &http,
            &reg.info,
            &reg.client,
            code,
            &Secret::new(pending.verifier),
            &pending.redirect_uri,
            now_ms(),
        )
        .await
        .map_err(|e| refuse(format!("the code exchange failed: {e}")))?;
        self.redactor.add(&tokens.access_token);
        if let Some(r) = &tokens.refresh_token {
            self.redactor.add(r);
        }
        self.write(TOKENS_FIELD, &tokens).await.map_err(refuse)?;
        self.given().refused = None;
        tracing::info!(connector = %self.connector, "authorized at the downstream authorization server");
        Ok(())
    }

    /// The HTTP client for this connector's authorization server: it goes
    /// no closer to the gateway than the connector's configuration allows.
    fn http(&self) -> Result<oauth::OAuthHttp, oauth::OAuthError> {
        oauth::OAuthHttp::for_connector(
            &self.resource,
            self.config.authorization_server.as_deref(),
            self.config.allow_private_network,
        )
    }

    /// New tokens from the refresh token, stored; `NotAuthorized` when the
    /// server refuses the refresh token (consent is needed again).
    async fn refresh(&self, old: &Tokens) -> Result<Tokens, CredentialUnavailable> {
        let Some(refresh_token) = &old.refresh_token else {
            let _ = self.forget_field(TOKENS_FIELD).await;
            return Err(CredentialUnavailable::NotAuthorized);
        };
        let reg = self
            .read::<Registration>(CLIENT_FIELD)
            .await?
            .ok_or(CredentialUnavailable::NotAuthorized)?;
        let http = self
            .http()
            .map_err(|e| CredentialUnavailable::Unreadable(e.to_string()))?;
        match oauth::refresh(&http, &reg.info, &reg.client, refresh_token, now_ms()).await {
            Ok(t) => {
                self.redactor.add(&t.access_token);
                if let Some(r) = &t.refresh_token {
                    self.redactor.add(r);
                }
                self.write(TOKENS_FIELD, &t)
                    .await
                    .map_err(CredentialUnavailable::Unreadable)?;
                tracing::info!(connector = %self.connector, "refreshed the downstream access token");
                Ok(t)
            }
            Err(e) if e.is_invalid_grant() || e.is_unknown_client() => {
                // Another replica may have spent (and rotated) the same
                // refresh token a moment ago, its answer still on the way:
                // the tokens it stores are the good ones. (A client the
                // server does not know is no such race.)
                let wait = e.is_invalid_grant();
                if let Some(now) = self.rotated_elsewhere(old, wait).await {
                    return Ok(now);
                }
                tracing::warn!(connector = %self.connector, error = %e, "the downstream refused the refresh; a new consent is needed");
                let _ = self.forget_field(TOKENS_FIELD).await;
                if e.is_unknown_client() {
                    // The next consent registers the gateway again.
                    let _ = self.forget_field(CLIENT_FIELD).await;
                }
                Err(CredentialUnavailable::NotAuthorized)
            }
            Err(e) => {
                tracing::warn!(connector = %self.connector, error = %e, "the downstream access token could not be refreshed");
                Err(CredentialUnavailable::Unreachable(
                    "its authorization server could not refresh the token".into(),
                ))
            }
        }
    }

    /// Tokens another replica stored in place of `old`, at once or (when
    /// `wait`) within [`ROTATION_WAIT`]: it refreshed with the same refresh
    /// token, and the authorization server refused this replica's try as
    /// spent.
    async fn rotated_elsewhere(&self, old: &Tokens, wait: bool) -> Option<Tokens> {
        let deadline = tokio::time::Instant::now()
            + if wait {
                ROTATION_WAIT
            } else {
                Default::default()
            };
        loop {
            match self.read::<Tokens>(TOKENS_FIELD).await {
                Ok(Some(now)) if now.access_token != old.access_token => return Some(now),
                Ok(Some(_)) if tokio::time::Instant::now() < deadline => {}
                // Gone (forgotten by a refusal elsewhere), unreadable, or
                // nothing new in time.
                _ => return None,
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    fn given(&self) -> std::sync::MutexGuard<'_, Given> {
        self.given.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn usable(&self, t: &Tokens, now: i64) -> bool {
        self.given().refused != Some(fingerprint(&t.access_token))
            && t.expires_at_ms.is_none_or(|e| {
                let margin = REFRESH_EARLY_MS.min((e - t.obtained_at_ms).max(0) / 2);
                e - margin > now
            })
    }
}

#[async_trait]
impl CredentialSource for OAuthCredentials {
    async fn load(&self) -> Result<Vec<(String, Secret)>, CredentialUnavailable> {
        let tokens = self
            .read::<Tokens>(TOKENS_FIELD)
            .await?
            .ok_or(CredentialUnavailable::NotAuthorized)?;
        let tokens = if self.usable(&tokens, now_ms()) {
            tokens
        } else {
            let _one = self.lock.lock().await;
            // Someone (here or on another replica) may have refreshed while
            // this call waited.
            let current = self
                .read::<Tokens>(TOKENS_FIELD)
                .await?
                .ok_or(CredentialUnavailable::NotAuthorized)?;
            if self.usable(&current, now_ms()) {
                current
            } else {
                self.refresh(&current).await?
            }
        };
        self.redactor.add(&tokens.access_token);
        self.given().last = Some(fingerprint(&tokens.access_token));
        Ok(vec![(
            "access_token".to_owned(),
            Secret::new(tokens.access_token),
        )])
    }

    async fn rejected(&self) {
        let mut given = self.given();
        given.refused = given.last;
    }
}

/// Finish whichever connector's flow `state` belongs to. The browser's
/// answer is the same for every refusal; the reason is for the log.
pub async fn complete_callback(
    sources: &[(String, Arc<OAuthCredentials>)],
    state: &str,
    code: Option<&str>,
    iss: Option<&str>,
    error: Option<&str>,
) -> Result<String, CallbackRefusal> {
    if state.is_empty() || state.len() > 256 {
        return Err(CallbackRefusal("no usable state".into()));
    }
    for (id, source) in sources {
        if source.holds_state(state).await {
            source.complete(state, code, iss, error).await?;
            return Ok(id.clone());
        }
    }
    Err(CallbackRefusal("no connector holds this state".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyLocation;
    use connecta_store::SqliteStore;

    fn tokens(access: &str) -> Tokens {
        Tokens {
            access_token: access.into(),
            refresh_token: Some(format!("refresh-{access}")),
            expires_at_ms: None,
            scope: None,
            obtained_at_ms: now_ms(),
        }
    }

    async fn load(source: &OAuthCredentials) -> Result<String, CredentialUnavailable> {
        Ok(source.load().await?[0].1.expose().to_owned())
    }

    /// A 401 marks the access token that was refused, not the connector:
    /// tokens another replica stored meanwhile are used as they are, and
    /// only the refused one is refreshed (here there is no registration,
    /// so a refresh ends in `NotAuthorized`).
    #[tokio::test]
    async fn a_refusal_marks_the_refused_token_not_the_connector() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path()).await.expect("store"));
        let keys = Arc::new(KeyCache::new(KeyLocation {
            env: None,
            file: dir.path().join("vault.key"),
        }));
        let source = OAuthCredentials::new(
            "notes",
            ConnectorOAuth::default(),
            "http://127.0.0.1:9/mcp",
            "http://127.0.0.1:8787",
            store,
            keys,
            Redactor::default(),
        );
        source
            .write(TOKENS_FIELD, &tokens("first"))
            .await
            .expect("write");
        assert_eq!(load(&source).await.expect("first"), "first");

        // Another replica stored new tokens; then the downstream refused
        // the first (a 401 that was in flight).
        source
            .write(TOKENS_FIELD, &tokens("second"))
            .await
            .expect("write");
        source.rejected().await;
        assert_eq!(load(&source).await.expect("second"), "second");

        // The second refused in its turn: it is refreshed, not used.
        source.rejected().await;
        assert_eq!(
            load(&source).await,
            Err(CredentialUnavailable::NotAuthorized)
        );
    }
}
