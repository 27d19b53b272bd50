//! Vault credentials for running connectors: the [`CredentialSource`] each
//! connector with a `[connector.credential]` slot gets.
//!
//! Every call re-reads the connector's rows (one primary-key lookup), so a
//! `connecta credential set` or `rm` in another process takes effect on the
//! next call without a restart. Decryption is cached per row nonce (a new
//! value always has a new nonce). The key is read lazily (a key file created
//! by the first `credential set` after boot is picked up) and re-read when
//! the rows name another key (a `vault rotate-key` while running).
//!
//! Every value loaded is registered with the gateway's [`Redactor`] before
//! it is used, so an error that quotes it is scrubbed.
//!
//! Architecture invariant: nothing here logs or formats a value.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use connecta_connectors::{CredentialSource, CredentialUnavailable};
use connecta_core::config::CredentialSlot;
use connecta_core::secret::Secret;
use connecta_store::Store;
use connecta_vault::{KeyLocation, VaultError, VaultKey};

use crate::Redactor;

/// The vault key, shared by every connector's source.
pub struct KeyCache {
    location: KeyLocation,
    key: Mutex<Option<VaultKey>>,
}

impl KeyCache {
    pub fn new(location: KeyLocation) -> KeyCache {
        KeyCache {
            location,
            key: Mutex::new(None),
        }
    }

    pub fn location(&self) -> &KeyLocation {
        &self.location
    }

    /// The key to open rows written under `wanted` (a key id): the cached
    /// one when it matches, else whatever the key source holds now.
    pub(crate) fn key_for(&self, wanted: &str) -> Result<VaultKey, CredentialUnavailable> {
        let mut cached = self.key.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = cached.as_ref()
            && k.id() == wanted
        {
            return Ok(k.clone());
        }
        match self.location.load() {
            Ok(Some((k, _))) => {
                *cached = Some(k.clone());
                Ok(k)
            }
            Ok(None) => Err(CredentialUnavailable::NoKey(format!(
                "neither ${} nor the key file {} is there",
                connecta_vault::KEY_ENV,
                self.location.file.display()
            ))),
            Err(e) => Err(CredentialUnavailable::NoKey(e.to_string())),
        }
    }
}

/// One connector's credential, read from the vault at call time.
pub struct VaultCredentials {
    connector: String,
    slot: CredentialSlot,
    store: Arc<dyn Store>,
    keys: Arc<KeyCache>,
    redactor: Redactor,
    /// field → (nonce, value) of the last row opened.
    opened: Mutex<HashMap<String, (Vec<u8>, Secret)>>,
}

impl VaultCredentials {
    pub fn new(
        connector: &str,
        slot: CredentialSlot,
        store: Arc<dyn Store>,
        keys: Arc<KeyCache>,
        redactor: Redactor,
    ) -> VaultCredentials {
        VaultCredentials {
            connector: connector.to_owned(),
            slot,
            store,
            keys,
            redactor,
            opened: Mutex::new(HashMap::new()),
        }
    }

    pub fn slot(&self) -> &CredentialSlot {
        &self.slot
    }
}

#[async_trait]
impl CredentialSource for VaultCredentials {
    async fn load(&self) -> Result<Vec<(String, Secret)>, CredentialUnavailable> {
        let rows = self.store.vault_get(&self.connector).await.map_err(|e| {
            CredentialUnavailable::Unreadable(format!("the store could not be read: {e}"))
        })?;
        let missing: Vec<String> = self
            .slot
            .fields
            .iter()
            .filter(|f| !rows.iter().any(|r| &r.field == *f))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(CredentialUnavailable::Missing { fields: missing });
        }
        let mut out = Vec::with_capacity(self.slot.fields.len());
        let mut opened_now = false;
        for field in &self.slot.fields {
            let Some(row) = rows.iter().find(|r| &r.field == field) else {
                continue;
            };
            let cached = self
                .opened
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(field)
                .filter(|(nonce, _)| *nonce == row.nonce)
                .map(|(_, v)| v.clone());
            let value = match cached {
                Some(v) => v,
                None => {
                    let key = self.keys.key_for(&row.key_id)?;
                    let value = connecta_vault::open(&key, row).map_err(|e| match e {
                        VaultError::WrongKey { .. } => CredentialUnavailable::WrongKey,
                        other => CredentialUnavailable::Unreadable(other.to_string()),
                    })?;
                    self.redactor.add(value.expose());
                    opened_now = true;
                    self.opened
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(field.clone(), (row.nonce.clone(), value.clone()));
                    value
                }
            };
            out.push((field.clone(), value));
        }
        if opened_now {
            // The forms the values go out in (a `Basic` token, a query's
            // encoding) are what an echoing downstream hands back.
            if let Ok(applied) = connecta_connectors::credential::frame(&self.slot, &out) {
                for s in &applied.secrets {
                    self.redactor.add(s);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connecta_core::config::{CredentialPlacement, CredentialScheme};
    use connecta_store::SqliteStore;
    use connecta_vault::Vault;

    fn slot() -> CredentialSlot {
        CredentialSlot {
            label: "Token".into(),
            fields: vec!["secret".into()],
            placement: CredentialPlacement::Header("Authorization".into()),
            scheme: CredentialScheme::Bearer,
            help: None,
        }
    }

    #[tokio::test]
    async fn values_are_read_per_call_registered_for_redaction_and_follow_rotation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path()).await.expect("store"));
        let key_file = dir.path().join("vault.key");
        let keys = Arc::new(KeyCache::new(KeyLocation {
            env: None,
            file: key_file.clone(),
        }));
        let redactor = Redactor::default();
        let source = VaultCredentials::new("svc", slot(), store.clone(), keys, redactor.clone());
        assert_eq!(
            source.load().await.expect_err("nothing set"),
            CredentialUnavailable::Missing {
                fields: vec!["secret".into()]
            }
        );
        // The key file appears after boot (the first `credential set`).
        let key = VaultKey::generate();
        connecta_vault::write_key_file(&key_file, &key).expect("key");
        let vault = Vault::new(store.clone(), key.clone());
        vault
            .set("svc", &[("secret".into(), Secret::new("first-value-1"))], 1)
            .await
            .expect("set");
        assert_eq!(
            source.load().await.expect("set")[0].1.expose(),
            "first-value-1"
        );
        assert_eq!(redactor.redact("x first-value-1 y"), "x [redacted] y");
        vault
            .set(
                "svc",
                &[("secret".into(), Secret::new("second-value-2"))],
                2,
            )
            .await
            .expect("replace");
        assert_eq!(
            source.load().await.expect("replaced")[0].1.expose(),
            "second-value-2"
        );
        // Rotation in another process: the new key file is picked up.
        let new_key = VaultKey::generate();
        vault.rotate(&new_key, 3).await.expect("rotate");
        connecta_vault::write_key_file(&key_file, &new_key).expect("new key");
        assert_eq!(
            source.load().await.expect("rotated")[0].1.expose(),
            "second-value-2"
        );
        // A key that does not match: reported, never guessed around.
        let wrong_file = dir.path().join("wrong.key");
        connecta_vault::write_key_file(&wrong_file, &VaultKey::generate()).expect("wrong key");
        let stranger = VaultCredentials::new(
            "svc",
            slot(),
            store.clone(),
            Arc::new(KeyCache::new(KeyLocation {
                env: None,
                file: wrong_file,
            })),
            Redactor::default(),
        );
        let err = stranger.load().await.expect_err("wrong key");
        assert_eq!(err, CredentialUnavailable::WrongKey);
        store.vault_delete("svc").await.expect("rm");
        assert!(matches!(
            source.load().await,
            Err(CredentialUnavailable::Missing { .. })
        ));
    }
}
