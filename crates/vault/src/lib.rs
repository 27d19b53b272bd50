//! The credential vault. Operators put credential values in; connectors get
//! them back at call time. At rest every value is a [`VaultRow`] sealed with
//! XChaCha20-Poly1305 under the vault key, with a random 24-byte nonce and
//! associated data `connecta-vault:v1:<connector>:<field>`, so a ciphertext
//! copied to another connector or field does not open.
//!
//! Architecture invariant: plaintext exists only in memory, as a [`Secret`].
//! This crate never logs, prints or formats a value, and the store below it
//! only ever sees ciphertext.

#![forbid(unsafe_code)]

mod key;

use std::sync::Arc;

use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{KeyInit, XChaCha20Poly1305, XNonce};
use connecta_core::secret::Secret;
use connecta_store::{Store, StoreError, VaultRow};
use rand::RngExt;

pub use key::{KEY_ENV, KeyError, KeyLocation, KeySource, VaultKey, write_key_file};

const NONCE_LEN: usize = 24;

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// The value was sealed under another key (a wrong key, or a rotation
    /// whose new key this process has not loaded).
    #[error(
        "the vault was encrypted with a different key (stored key id {stored}, this key's id {current}); set the key it was written with, or remove the credential and set it again"
    )]
    WrongKey { stored: String, current: String },
    /// The key matches but the value does not open: tampered or corrupt, or
    /// moved to another connector or field.
    #[error("the stored value for {connector}.{field} does not decrypt (tampered or corrupt)")]
    Tampered { connector: String, field: String },
    #[error("the value for field \"{field}\" is empty")]
    Empty { field: String },
    #[error(
        "the value for field \"{field}\" contains control characters (a pasted newline?); they are refused"
    )]
    ControlCharacters { field: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn aad(connector: &str, field: &str) -> Vec<u8> {
    format!("connecta-vault:v1:{connector}:{field}").into_bytes()
}

fn cipher(key: &VaultKey) -> XChaCha20Poly1305 {
    XChaCha20Poly1305::new(&(*key.bytes()).into())
}

/// Refuse values that cannot be framed safely into a header (control
/// characters: CR/LF would split it) or that are empty.
pub fn check_value(field: &str, value: &str) -> Result<(), VaultError> {
    if value.is_empty() {
        return Err(VaultError::Empty {
            field: field.to_owned(),
        });
    }
    if value.chars().any(char::is_control) {
        return Err(VaultError::ControlCharacters {
            field: field.to_owned(),
        });
    }
    Ok(())
}

/// Seal one value for `connector`/`field`.
pub fn seal(
    key: &VaultKey,
    connector: &str,
    field: &str,
    value: &Secret,
    now_ms: i64,
) -> Result<VaultRow, VaultError> {
    check_value(field, value.expose())?;
    let mut nonce = [0u8; NONCE_LEN];
    rand::rng().fill(&mut nonce);
    let aad = aad(connector, field);
    let ciphertext = cipher(key)
        .encrypt(
            &XNonce::from(nonce),
            Payload {
                msg: value.expose().as_bytes(),
                aad: &aad,
            },
        )
        // Encryption fails only for plaintexts beyond 256 GiB.
        .map_err(|_| VaultError::Empty {
            field: field.to_owned(),
        })?;
    Ok(VaultRow {
        connector: connector.to_owned(),
        field: field.to_owned(),
        ciphertext,
        nonce: nonce.to_vec(),
        key_id: key.id(),
        updated_at_ms: now_ms,
    })
}

/// Open one sealed row.
pub fn open(key: &VaultKey, row: &VaultRow) -> Result<Secret, VaultError> {
    let current = key.id();
    if row.key_id != current {
        return Err(VaultError::WrongKey {
            stored: row.key_id.clone(),
            current,
        });
    }
    let tampered = || VaultError::Tampered {
        connector: row.connector.clone(),
        field: row.field.clone(),
    };
    let nonce: [u8; NONCE_LEN] = row.nonce.as_slice().try_into().map_err(|_| tampered())?;
    let aad = aad(&row.connector, &row.field);
    let plain = cipher(key)
        .decrypt(
            &XNonce::from(nonce),
            Payload {
                msg: &row.ciphertext,
                aad: &aad,
            },
        )
        .map_err(|_| tampered())?;
    String::from_utf8(plain)
        .map(Secret::new)
        .map_err(|_| tampered())
}

/// The vault over a store, with one key.
#[derive(Clone)]
pub struct Vault {
    store: Arc<dyn Store>,
    key: VaultKey,
}

impl Vault {
    pub fn new(store: Arc<dyn Store>, key: VaultKey) -> Vault {
        Vault { store, key }
    }

    pub fn key(&self) -> &VaultKey {
        &self.key
    }

    /// Seal and store the given fields of `connector` in one transaction.
    /// Other fields of the connector are left as they are.
    pub async fn set(
        &self,
        connector: &str,
        values: &[(String, Secret)],
        now_ms: i64,
    ) -> Result<(), VaultError> {
        let rows = values
            .iter()
            .map(|(field, v)| seal(&self.key, connector, field, v, now_ms))
            .collect::<Result<Vec<_>, _>>()?;
        self.store.vault_put(&rows).await?;
        Ok(())
    }

    /// Every stored field of `connector`, opened.
    pub async fn get(&self, connector: &str) -> Result<Vec<(String, Secret)>, VaultError> {
        let rows = self.store.vault_get(connector).await?;
        rows.iter()
            .map(|r| open(&self.key, r).map(|v| (r.field.clone(), v)))
            .collect()
    }

    /// Remove every field of `connector`; returns how many were stored.
    pub async fn remove(&self, connector: &str) -> Result<u64, VaultError> {
        Ok(self.store.vault_delete(connector).await?)
    }

    /// Re-encrypt every value under `new_key`, all or nothing: every row must
    /// open under the current key first, and the store swaps all rows in one
    /// transaction. Returns the number of values re-encrypted.
    pub async fn rotate(&self, new_key: &VaultKey, now_ms: i64) -> Result<usize, VaultError> {
        let rows = self.store.vault_list().await?;
        let mut sealed = Vec::with_capacity(rows.len());
        for row in &rows {
            let value = open(&self.key, row)?;
            let mut fresh = seal(new_key, &row.connector, &row.field, &value, now_ms)?;
            // Rotation is not an edit: keep when the operator last set it.
            fresh.updated_at_ms = row.updated_at_ms;
            sealed.push(fresh);
        }
        self.store.vault_replace_all(&sealed).await?;
        Ok(sealed.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connecta_store::SqliteStore;

    #[test]
    fn values_are_bound_to_key_connector_and_field() {
        let key = VaultKey::generate();
        let row = seal(&key, "github", "secret", &Secret::new("ghp_value-123"), 1).expect("seal");
        assert_eq!(open(&key, &row).expect("open").expose(), "ghp_value-123");
        assert!(
            !row.ciphertext
                .windows(b"ghp_value".len())
                .any(|w| w == b"ghp_value")
        );
        let mut moved = row.clone();
        moved.connector = "gitlab".into();
        assert!(matches!(
            open(&key, &moved),
            Err(VaultError::Tampered { .. })
        ));
        let mut moved = row.clone();
        moved.field = "user".into();
        assert!(matches!(
            open(&key, &moved),
            Err(VaultError::Tampered { .. })
        ));
        let mut flipped = row.clone();
        flipped.ciphertext[0] ^= 1;
        assert!(matches!(
            open(&key, &flipped),
            Err(VaultError::Tampered { .. })
        ));
        let other = VaultKey::generate();
        assert!(matches!(
            open(&other, &row),
            Err(VaultError::WrongKey { .. })
        ));
        // Same key id claimed, different key: still refused.
        let mut forged = row.clone();
        forged.key_id = other.id();
        assert!(open(&other, &forged).is_err());
        let again = seal(&key, "github", "secret", &Secret::new("ghp_value-123"), 1).expect("seal");
        assert_ne!(again.nonce, row.nonce, "a fresh nonce per value");
    }

    #[test]
    fn control_characters_and_empty_values_are_refused() {
        let key = VaultKey::generate();
        for bad in ["line\nbreak", "tab\there", "nul\0", ""] {
            assert!(seal(&key, "c", "secret", &Secret::new(bad), 1).is_err());
        }
    }

    #[tokio::test]
    async fn rotation_reencrypts_everything_and_the_old_key_stops_working() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path()).await.expect("store"));
        let old = VaultKey::generate();
        let vault = Vault::new(store.clone(), old.clone());
        vault
            .set("a", &[("secret".into(), Secret::new("alpha-secret"))], 10)
            .await
            .expect("set a");
        vault
            .set(
                "b",
                &[
                    ("user".into(), Secret::new("bob")),
                    ("secret".into(), Secret::new("bravo-secret")),
                ],
                11,
            )
            .await
            .expect("set b");
        let new = VaultKey::generate();
        assert_eq!(vault.rotate(&new, 99).await.expect("rotate"), 3);
        let rotated = Vault::new(store.clone(), new.clone());
        let b = rotated.get("b").await.expect("readable after rotation");
        assert_eq!(b.len(), 2);
        assert!(
            b.iter()
                .any(|(f, v)| f == "secret" && v.expose() == "bravo-secret")
        );
        assert!(matches!(
            vault.get("a").await,
            Err(VaultError::WrongKey { .. })
        ));
        assert!(
            store
                .vault_list()
                .await
                .expect("list")
                .iter()
                .all(|r| r.key_id == new.id())
        );
        // A rotation under the wrong key changes nothing.
        let stranger = Vault::new(store.clone(), old);
        assert!(stranger.rotate(&VaultKey::generate(), 100).await.is_err());
        assert_eq!(
            rotated.get("a").await.expect("still readable")[0]
                .1
                .expose(),
            "alpha-secret"
        );
    }
}
