//! A throwaway PostgreSQL cluster for tests (feature `testing`): `initdb` in
//! a temporary directory, `postgres` on a free loopback port with trust
//! authentication, stopped and removed on drop. It needs PostgreSQL's server
//! programs (`initdb`, `pg_ctl`) on `PATH` or under
//! `/usr/lib/postgresql/<version>/bin`; run as root, they run as the
//! `postgres` user, since PostgreSQL refuses root.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct PgCluster {
    dir: tempfile::TempDir,
    port: u16,
    bin: PathBuf,
    as_postgres: bool,
}

impl PgCluster {
    /// Starts a cluster, or panics saying what is missing.
    pub fn start() -> PgCluster {
        let bin = server_bin_dir().unwrap_or_else(|| {
            panic!("PostgreSQL server programs (initdb, pg_ctl) were not found on PATH or under /usr/lib/postgresql/*/bin")
        });
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("connecta-pg-")
            .tempdir()
            .expect("temporary directory");
        if as_postgres {
            run(
                Command::new("chown").arg("postgres:").arg(dir.path()),
                "chown",
            );
        }
        let port = free_port();
        let cluster = PgCluster {
            dir,
            port,
            bin,
            as_postgres,
        };
        let data = cluster.data();
        cluster.pg(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        );
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off",
            cluster.dir.path().display()
        );
        let log = cluster.dir.path().join("log").display().to_string();
        cluster.pg(
            "pg_ctl",
            &[
                "-D", &data, "-o", &options, "-l", &log, "-w", "-t", "60", "start",
            ],
        );
        cluster
    }

    /// A URL for database `db` (`postgres` always exists).
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Creates an empty database and returns its URL.
    pub async fn fresh_database(&self) -> String {
        use sqlx::Connection;
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let mut c = sqlx::PgConnection::connect(&self.url("postgres"))
            .await
            .expect("connect to the test cluster");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut c)
            .await
            .expect("create a test database");
        self.url(&name)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn pg(&self, program: &str, args: &[&str]) {
        let exe = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        cmd.args(args);
        run(&mut cmd, program);
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.data();
        let exe = self.bin.join("pg_ctl");
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let _ = cmd
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .output();
    }
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what} could not start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn server_bin_dir() -> Option<PathBuf> {
    let has = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            if has(&d) {
                // Follow a symlinked `initdb` to the real bin directory.
                let real = std::fs::canonicalize(d.join("initdb")).ok()?;
                return real.parent().map(Path::to_path_buf);
            }
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| has(d))
        .collect();
    versions.sort();
    versions.pop()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}
