//! What the gateway keeps on disk is readable by its own user alone,
//! whatever the umask: through the real binary, the data directory is 0700
//! and the SQLite database (with its `-wal` and `-shm`), the operator
//! secret and the vault key file are 0600; a database an earlier version
//! left readable is tightened by the next command that opens it.

mod api_support;
mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use api_support::*;
use nix::sys::stat::{Mode, umask};
use support::*;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test(flavor = "multi_thread")]
async fn the_data_dir_is_0700_and_its_files_0600_whatever_the_umask() {
    // The usual umask: files it creates are readable by everyone.
    umask(Mode::from_bits_truncate(0o022));
    let provider = start_provider().await;
    let gw = Gateway::start(&format!(
        "{}\n{}",
        demo_connector(),
        connector_toml("prov", &provider.base_url(), true)
    ));
    gw.wait_catalogs().await;
    // The first credential creates the vault key file.
    set_credential(&gw.config_path, "prov", GOOD_TOKEN, &[]);

    let data = gw.data_dir();
    assert_eq!(mode(&data), 0o700, "the data directory");
    for file in [
        "connecta.db",
        "connecta.db-wal",
        "connecta.db-shm",
        "operator-secret",
        "vault.key",
    ] {
        assert_eq!(mode(&data.join(file)), 0o600, "{file}");
    }

    // A database left readable (by an earlier version, or by hand) is made
    // private again by the next command that opens it.
    let db = data.join("connecta.db");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let (status, out, err) = run(
        Command::new(bin())
            .args(["token", "list", "--config"])
            .arg(&gw.config_path),
        Duration::from_secs(30),
    );
    assert!(status.success(), "{out}{err}");
    assert_eq!(mode(&db), 0o600);
}
