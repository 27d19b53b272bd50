//! The vault key: 32 random bytes, from `CONNECTA_VAULT_KEY` (base64 or hex)
//! or from a key file. Its `id` is a short fingerprint stored beside every
//! sealed value, so a wrong key and an unfinished rotation are told apart from
//! tampering.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use rand::RngExt;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::{Zeroize, Zeroizing};

/// The environment variable that holds the key (it wins over the key file).
pub const KEY_ENV: &str = "CONNECTA_VAULT_KEY";

const KEY_LEN: usize = 32;

/// A vault key. `Debug` shows only its id; equality is constant-time; the
/// bytes are overwritten with zeros when a copy is dropped.
#[derive(Clone)]
pub struct VaultKey([u8; KEY_LEN]);

impl Drop for VaultKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for VaultKey {}

impl PartialEq for VaultKey {
    fn eq(&self, other: &VaultKey) -> bool {
        bool::from(self.0.ct_eq(&other.0))
    }
}

impl Eq for VaultKey {}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "{origin} is not a vault key: expected 32 bytes as base64 (44 characters) or hex (64 characters)"
    )]
    Malformed { origin: String },
    #[error("could not read the vault key file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("could not write the vault key file {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

impl VaultKey {
    /// A fresh random key.
    pub fn generate() -> VaultKey {
        let mut key = VaultKey([0; KEY_LEN]);
        rand::rng().fill(&mut key.0);
        key
    }

    /// Parse a key written as hex (64 characters) or base64 (standard or
    /// URL-safe alphabet, padding optional). Surrounding whitespace is ignored.
    /// `origin` names where the text came from, for the error.
    pub fn parse(text: &str, origin: &str) -> Result<VaultKey, KeyError> {
        let t = text.trim();
        let bytes = if t.len() == 2 * KEY_LEN && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(t).ok()
        } else {
            let unpadded = t.trim_end_matches('=');
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(unpadded)
                .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(unpadded))
                .ok()
        }
        .map(Zeroizing::new);
        match bytes {
            Some(b) if b.len() == KEY_LEN => {
                let mut key = VaultKey([0; KEY_LEN]);
                key.0.copy_from_slice(&b);
                Ok(key)
            }
            _ => Err(KeyError::Malformed {
                origin: origin.to_owned(),
            }),
        }
    }

    /// The key as standard base64 (what key files and `rotate-key` print).
    pub fn encode(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.0)
    }

    /// A short, non-reversible fingerprint: the first 8 bytes of
    /// SHA-256("connecta-vault-key:v1" ‖ key), hex.
    pub fn id(&self) -> String {
        let mut h = Sha256::new();
        h.update(b"connecta-vault-key:v1");
        h.update(self.0);
        hex::encode(&h.finalize()[..8])
    }

    pub(crate) fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

impl fmt::Debug for VaultKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VaultKey({})", self.id())
    }
}

/// Where a key came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    Env,
    File(PathBuf),
}

impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::Env => write!(f, "${KEY_ENV}"),
            KeySource::File(p) => write!(f, "the key file {}", p.display()),
        }
    }
}

/// Where to look for the key: the environment value (if set) wins over the
/// key file. I/O is explicit so callers (and tests) decide what the
/// environment is.
#[derive(Debug, Clone)]
pub struct KeyLocation {
    pub env: Option<String>,
    pub file: PathBuf,
}

impl KeyLocation {
    /// `CONNECTA_VAULT_KEY` from the process environment, else `file`.
    pub fn from_process_env(file: PathBuf) -> KeyLocation {
        KeyLocation {
            env: std::env::var(KEY_ENV).ok().filter(|v| !v.trim().is_empty()),
            file,
        }
    }

    /// The key, or `None` when neither the variable nor the file exists.
    pub fn load(&self) -> Result<Option<(VaultKey, KeySource)>, KeyError> {
        if let Some(v) = &self.env {
            return VaultKey::parse(v, &format!("${KEY_ENV}")).map(|k| Some((k, KeySource::Env)));
        }
        match std::fs::read_to_string(&self.file) {
            Ok(text) => VaultKey::parse(&text, &self.file.display().to_string())
                .map(|k| Some((k, KeySource::File(self.file.clone())))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(KeyError::Read {
                path: self.file.display().to_string(),
                source,
            }),
        }
    }

    /// The key, creating the key file (mode 0600) with a fresh key when there
    /// is no key at all (`true` then). Whoever stores the first value calls
    /// this (see the gateway's `seal_fields` for when that is allowed). Two
    /// callers racing to create it end up with the same key: the file is
    /// never replaced, and the one that loses reads the winner's.
    pub fn load_or_create(&self) -> Result<(VaultKey, KeySource, bool), KeyError> {
        if let Some((k, s)) = self.load()? {
            return Ok((k, s, false));
        }
        let key = VaultKey::generate();
        match place_key_file(&self.file, &key, Placement::OnlyIfAbsent) {
            Ok(()) => Ok((key, KeySource::File(self.file.clone()), true)),
            Err(KeyError::Write { source, .. })
                if source.kind() == std::io::ErrorKind::AlreadyExists =>
            {
                let (k, s) = self.load()?.ok_or_else(|| KeyError::Read {
                    path: self.file.display().to_string(),
                    source,
                })?;
                Ok((k, s, false))
            }
            Err(e) => Err(e),
        }
    }
}

/// Write `key` to `path` atomically with mode 0600 (a temporary file in the
/// same directory, then a rename over whatever is there), creating the
/// directory (mode 0700) if needed.
pub fn write_key_file(path: &Path, key: &VaultKey) -> Result<(), KeyError> {
    place_key_file(path, key, Placement::Replace)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Placement {
    Replace,
    /// A hard link instead of a rename: it fails when `path` exists.
    OnlyIfAbsent,
}

fn place_key_file(path: &Path, key: &VaultKey, placement: Placement) -> Result<(), KeyError> {
    let err = |source| KeyError::Write {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        connecta_store::create_private_dir(dir).map_err(err)?;
    }
    let tmp = path.with_extension(format!(
        "tmp-{}-{}",
        std::process::id(),
        rand::rng().random::<u64>()
    ));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let result = (|| {
        let mut f = opts.open(&tmp)?;
        f.write_all(Zeroizing::new(key.encode()).as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        match placement {
            Placement::Replace => std::fs::rename(&tmp, path),
            Placement::OnlyIfAbsent => {
                let linked = std::fs::hard_link(&tmp, path);
                let _ = std::fs::remove_file(&tmp);
                linked
            }
        }
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_from_hex_and_base64_and_round_trip() {
        let k = VaultKey::generate();
        assert_eq!(VaultKey::parse(&k.encode(), "t").expect("b64"), k);
        assert_eq!(
            VaultKey::parse(&format!("  {}\n", hex::encode(k.bytes())), "t").expect("hex"),
            k
        );
        let url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(k.bytes());
        assert_eq!(VaultKey::parse(&url, "t").expect("url-safe"), k);
        assert!(VaultKey::parse("too-short", "t").is_err());
        assert!(VaultKey::parse(&"ab".repeat(31), "t").is_err());
        assert_ne!(VaultKey::generate().id(), k.id());
        assert_eq!(k.id().len(), 16);
        assert!(!format!("{k:?}").contains(&k.encode()));
    }

    /// Two requests (a UI credential and a first OAuth consent, say) that
    /// both find no key must not each write one: the second would replace
    /// the key the first already sealed values under.
    #[test]
    fn callers_racing_to_create_the_key_get_one_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let loc = KeyLocation {
            env: None,
            file: dir.path().join("data/vault.key"),
        };
        let barrier = std::sync::Barrier::new(8);
        let results: Vec<(VaultKey, bool)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        let (k, _, created) = loc.load_or_create().expect("a key");
                        (k, created)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect()
        });
        let on_disk = loc.load().expect("readable").expect("a key").0;
        assert!(results.iter().all(|(k, _)| *k == on_disk));
        assert_eq!(results.iter().filter(|(_, created)| *created).count(), 1);
        let left: Vec<_> = std::fs::read_dir(dir.path().join("data"))
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left, ["vault.key"], "no temporary file is left behind");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode(&dir.path().join("data")), 0o700);
            assert_eq!(mode(&loc.file), 0o600);
        }
    }

    #[test]
    fn vault_keys_are_wiped_on_drop() {
        fn wiped_on_drop<T: zeroize::ZeroizeOnDrop>() {}
        wiped_on_drop::<VaultKey>();
    }

    #[test]
    fn env_wins_and_the_file_is_created_0600_only_on_request() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("sub/vault.key");
        let loc = KeyLocation {
            env: None,
            file: file.clone(),
        };
        assert!(loc.load().expect("no key").is_none());
        assert!(!file.exists(), "load never creates");
        let (k, src, created) = loc.load_or_create().expect("created");
        assert!(created);
        assert_eq!(src, KeySource::File(file.clone()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let (again, _, created) = loc.load_or_create().expect("loaded");
        assert!(!created);
        assert_eq!(again, k);
        let other = VaultKey::generate();
        let env = KeyLocation {
            env: Some(other.encode()),
            file,
        };
        assert_eq!(env.load().expect("env").expect("some").0, other);
        let bad = KeyLocation {
            env: Some("nope".into()),
            file: dir.path().join("x"),
        };
        assert!(bad.load().is_err());
    }
}
