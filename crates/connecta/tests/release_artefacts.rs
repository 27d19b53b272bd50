//! The release artefacts (`Dockerfile`, `deploy/`), checked without a
//! cluster, a container engine or a running systemd: the Kubernetes
//! manifests against the Kubernetes API's own JSON schemas (strict: no
//! unknown field; vendored in `tests/kubernetes-schema`, see SOURCE.md
//! there), the wiring between them (probes, ports, labels, Secret and
//! ConfigMap references), the config they ship run as two replicas of the
//! real binary on one real PostgreSQL, the systemd unit through
//! `systemd-analyze verify`, and the Dockerfile's agreement with all that.

#[path = "../link/ordering.rs"]
mod ordering;
mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use connecta_store::testing::PgCluster;
use serde_json::{Value, json};
use support::{Gateway, bin, repo_root, run};

fn deploy() -> PathBuf {
    repo_root().join("deploy")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One manifest file: one YAML document, as JSON.
fn manifest(path: &Path) -> Value {
    yaml_serde::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `*.yaml` directly in `dir`, by file name.
fn manifests(dir: &Path) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, manifest(&p))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The manifests `kubectl apply -f deploy/kubernetes/` applies, by kind.
fn applied(kind: &str) -> Value {
    let found: Vec<Value> = manifests(&deploy().join("kubernetes"))
        .into_iter()
        .map(|(_, m)| m)
        .filter(|m| m["kind"] == kind)
        .collect();
    assert_eq!(found.len(), 1, "one {kind} in deploy/kubernetes");
    found.into_iter().next().expect("one")
}

fn example_secret() -> Value {
    manifest(&deploy().join("kubernetes/examples/secret.yaml"))
}

/// The vendored schemas resolve their `$ref`s to this document.
const DEFINITIONS_URI: &str = "https://kubernetes.io/api/_definitions.json";

struct Definitions(Arc<Value>);

impl jsonschema::Retrieve for Definitions {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        if uri.as_str() == DEFINITIONS_URI {
            Ok((*self.0).clone())
        } else {
            Err(format!("no vendored schema for {}", uri.as_str()).into())
        }
    }
}

/// Schema errors of `doc` (empty: valid), against the schema of its
/// `apiVersion` and `kind`, named as kubernetes-validate names its files.
fn schema_errors(doc: &Value) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kubernetes-schema");
    let kind = doc["kind"].as_str().expect("kind").to_lowercase();
    let api = doc["apiVersion"].as_str().expect("apiVersion");
    let file = match api.split_once('/') {
        Some((group, version)) => {
            let group = group.split('.').next().expect("group");
            format!("{kind}-{group}-{version}.json")
        }
        None => format!("{kind}-{api}.json"),
    };
    let schema: Value =
        serde_json::from_str(&read(&dir.join(&file))).unwrap_or_else(|e| panic!("{file}: {e}"));
    let definitions: Value =
        serde_json::from_str(&read(&dir.join("_definitions.json"))).expect("definitions");
    let validator = jsonschema::options()
        .with_retriever(Definitions(Arc::new(definitions)))
        .build(&schema)
        .unwrap_or_else(|e| panic!("{file} compiles: {e}"));
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn every_kubernetes_manifest_matches_the_kubernetes_schema_of_its_kind() {
    let mut checked = BTreeSet::new();
    for dir in ["kubernetes", "kubernetes/examples"] {
        for (name, doc) in manifests(&deploy().join(dir)) {
            let errors = schema_errors(&doc);
            assert!(errors.is_empty(), "{dir}/{name}: {errors:#?}");
            checked.insert(doc["kind"].as_str().expect("kind").to_owned());
        }
    }
    assert_eq!(
        checked,
        BTreeSet::from(
            [
                "ConfigMap",
                "Deployment",
                "PodDisruptionBudget",
                "Secret",
                "Service"
            ]
            .map(String::from)
        )
    );
}

/// The check can fail: a misspelled field, a wrong type and a missing
/// required field are each refused.
#[test]
fn the_kubernetes_schema_check_refuses_typos_wrong_types_and_missing_fields() {
    let deployment = applied("Deployment");

    let mut typo = deployment.clone();
    let container = &mut typo["spec"]["template"]["spec"]["containers"][0];
    let probe = container["readinessProbe"].take();
    container["readinesProbe"] = probe;
    assert!(
        schema_errors(&typo)
            .iter()
            .any(|e| e.contains("readinesProbe")),
        "an unknown field is refused"
    );

    let mut wrong = deployment.clone();
    wrong["spec"]["replicas"] = json!("two");
    assert!(
        !schema_errors(&wrong).is_empty(),
        "replicas must be a number"
    );

    let mut missing = deployment;
    missing["spec"]["template"]["spec"]["containers"][0]
        .as_object_mut()
        .expect("container")
        .remove("name");
    assert!(
        !schema_errors(&missing).is_empty(),
        "a container needs a name"
    );
}

#[test]
fn the_deployment_runs_two_replicas_ready_on_health_with_its_settings_from_a_configmap_and_a_secret()
 {
    let deployment = applied("Deployment");
    let service = applied("Service");
    let budget = applied("PodDisruptionBudget");
    let config_map = applied("ConfigMap");
    let secret = example_secret();

    assert_eq!(deployment["spec"]["replicas"], 2);
    let pod = &deployment["spec"]["template"];
    let labels = pod["metadata"]["labels"].as_object().expect("pod labels");
    for selector in [
        &deployment["spec"]["selector"]["matchLabels"],
        &service["spec"]["selector"],
        &budget["spec"]["selector"]["matchLabels"],
    ] {
        for (k, v) in selector.as_object().expect("selector") {
            assert_eq!(labels.get(k), Some(v), "selector {k} matches the pods");
        }
    }

    let containers = pod["spec"]["containers"].as_array().expect("containers");
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    let port = &c["ports"][0];
    assert_eq!(port["containerPort"], 8787);
    for probe in ["readinessProbe", "livenessProbe"] {
        assert_eq!(c[probe]["httpGet"]["path"], "/health", "{probe}");
        assert_eq!(c[probe]["httpGet"]["port"], port["name"], "{probe}");
    }
    assert_eq!(service["spec"]["ports"][0]["targetPort"], port["name"]);

    // The config file: the ConfigMap's key, mounted where `--config` reads it.
    let volumes = pod["spec"]["volumes"].as_array().expect("volumes");
    let config_volume = volumes
        .iter()
        .find(|v| v["configMap"]["name"] == config_map["metadata"]["name"])
        .expect("a volume of the ConfigMap");
    let mount = c["volumeMounts"]
        .as_array()
        .expect("mounts")
        .iter()
        .find(|m| m["name"] == config_volume["name"])
        .expect("the ConfigMap is mounted");
    let config_path = format!(
        "{}/connecta.toml",
        mount["mountPath"].as_str().expect("mountPath")
    );
    assert!(config_map["data"]["connecta.toml"].is_string());
    assert_eq!(c["args"], json!(["serve", "--config", config_path]));

    // Every `${NAME}` of the config, and the vault key (which the binary
    // reads itself), is set from the Secret, and every key the Deployment
    // reads is in the example Secret (and nothing else is).
    let toml = config_map["data"]["connecta.toml"].as_str().expect("toml");
    let mut referenced = env_references(toml);
    referenced.insert("CONNECTA_VAULT_KEY".to_owned());
    let env = c["env"].as_array().expect("env");
    let names: BTreeSet<String> = env
        .iter()
        .map(|e| e["name"].as_str().expect("name").to_owned())
        .collect();
    assert_eq!(
        names, referenced,
        "the env is exactly what the config names"
    );
    let secret_name = &secret["metadata"]["name"];
    let mut keys = BTreeSet::new();
    for e in env {
        let from = &e["valueFrom"]["secretKeyRef"];
        assert_eq!(
            &from["name"], secret_name,
            "{} comes from the Secret",
            e["name"]
        );
        assert!(
            e.get("value").is_none(),
            "no literal value for {}",
            e["name"]
        );
        keys.insert(from["key"].as_str().expect("key").to_owned());
    }
    let example_keys: BTreeSet<String> = secret["stringData"]
        .as_object()
        .expect("stringData")
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, example_keys);

    // Unprivileged, read-only root, and the image of this version.
    assert_eq!(pod["spec"]["securityContext"]["runAsNonRoot"], true);
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(
        c["image"],
        format!("connecta:{}", env!("CARGO_PKG_VERSION")),
        "the manifests name the image of this version"
    );
}

/// `${NAME}` and `${NAME:-default}` references in a config text.
fn env_references(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let end = after.find('}').expect("closed reference");
        let name = after[..end].split(":-").next().expect("name");
        out.insert(name.to_owned());
        rest = &after[end..];
    }
    out
}

/// A value for each key of the Secret, as an operator would create it.
fn secret_values(database_url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("public-url", "http://localhost:8787".into()),
        ("database-url", database_url.into()),
        (
            "vault-key",
            "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=".into(),
        ),
        ("token", "release-artefacts-test-token-0123456789".into()),
        (
            "operator-secret",
            "release-artefacts-operator-0123456789".into(),
        ),
    ]
}

/// The Deployment's environment, its Secret references filled in.
fn deployment_env(values: &[(&str, String)]) -> Vec<(String, String)> {
    let deployment = applied("Deployment");
    deployment["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .expect("env")
        .iter()
        .map(|e| {
            let key = e["valueFrom"]["secretKeyRef"]["key"].as_str().expect("key");
            let value = values
                .iter()
                .find(|(k, _)| *k == key)
                .unwrap_or_else(|| panic!("a value for secret key {key}"))
                .1
                .clone();
            (e["name"].as_str().expect("name").to_owned(), value)
        })
        .collect()
}

/// The ConfigMap's config with the container's data directory replaced by a
/// relative one (the test's own directory); nothing else is changed.
fn shipped_config() -> String {
    let toml = applied("ConfigMap")["data"]["connecta.toml"]
        .as_str()
        .expect("toml")
        .to_owned();
    let container_dir = "data_dir = \"/var/lib/connecta\"";
    assert!(
        toml.contains(container_dir),
        "the config sets {container_dir}"
    );
    toml.replace(container_dir, "data_dir = \"data\"")
}

#[test]
fn the_shipped_config_passes_connecta_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("connecta.toml");
    std::fs::write(&path, shipped_config()).expect("write");
    let mut cmd = Command::new(bin());
    cmd.args(["check", "--config"]).arg(&path);
    for (k, v) in deployment_env(&secret_values(
        "postgres://connecta@db.example:5432/connecta",
    )) {
        cmd.env(k, v);
    }
    let (status, out, err) = run(&mut cmd, Duration::from_secs(30));
    assert!(status.success(), "connecta check: {out}{err}");
    assert!(out.contains("ok"), "{out}");
}

/// Two replicas from the shipped config and the Deployment's environment,
/// on one real PostgreSQL: each is ready on `/health` (what the probes ask)
/// and serves `/mcp` with the Secret's token under the Service's name.
#[tokio::test]
async fn two_replicas_of_the_shipped_config_share_one_postgres_and_answer_health_and_mcp() {
    let cluster = tokio::task::spawn_blocking(PgCluster::start)
        .await
        .expect("cluster");
    let url = cluster.fresh_database().await;
    let values = secret_values(&url);
    let env = deployment_env(&values);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let token = values
        .iter()
        .find(|(k, _)| *k == "token")
        .expect("token")
        .1
        .clone();

    let config = shipped_config();
    let replicas = [
        Gateway::start_with_env(&config, &env),
        Gateway::start_with_env(&config, &env),
    ];
    let http = reqwest::Client::new();
    for gw in &replicas {
        let health = http
            .get(format!("{}/health", gw.base()))
            .send()
            .await
            .expect("health");
        assert_eq!(health.status(), 200);
        let body: Value = health.json().await.expect("json");
        assert_eq!(body["store"], "postgres", "{body}");

        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "release-artefacts", "version": "1"}}
        });
        let post = |host: &'static str, token: Option<&str>| {
            let mut req = http
                .post(gw.url())
                .header("host", host)
                .header("accept", "application/json, text/event-stream")
                .json(&initialize);
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            req.send()
        };
        let in_cluster = post("connecta:8787", Some(&token)).await.expect("post");
        assert_eq!(
            in_cluster.status(),
            200,
            "the Service's name is an allowed host: {}",
            in_cluster.text().await.unwrap_or_default()
        );
        let anonymous = post("connecta:8787", None).await.expect("post");
        assert_eq!(anonymous.status(), 401, "the endpoint is not open");
        let foreign = post("elsewhere.example", Some(&token)).await.expect("post");
        assert_eq!(foreign.status(), 403, "other Host names are refused");
    }
}

/// `systemd-analyze verify` on the unit, its `ExecStart` pointed at the
/// binary built here (verify requires the program to exist). Warnings are
/// failures: verify exits 0 on an unknown key or a bad value and only says so.
fn systemd_verify(unit_text: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let unit = dir.path().join("connecta.service");
    std::fs::write(&unit, unit_text).expect("write unit");
    let (status, out, err) = run(
        Command::new("systemd-analyze").arg("verify").arg(&unit),
        Duration::from_secs(60),
    );
    let said = format!("{out}{err}");
    if !status.success() && said.is_empty() {
        panic!("systemd-analyze failed without a word: {status}");
    }
    said.lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn systemd_unit_for_this_build() -> String {
    let text = read(&deploy().join("systemd/connecta.service"));
    let installed = "ExecStart=/usr/local/bin/connecta ";
    assert!(text.contains(installed), "the unit runs {installed}…");
    text.replace(installed, &format!("ExecStart={} ", bin().display()))
}

#[test]
fn the_systemd_unit_verifies_cleanly_and_stops_the_gateway_alone_first() {
    let unit = systemd_unit_for_this_build();
    let said = systemd_verify(&unit);
    assert!(said.is_empty(), "systemd-analyze verify: {said}");
    // SIGTERM to the gateway alone, which stops its own children; the stop
    // timeout leaves room for the drain (server.shutdown_grace_ms, 10 s).
    assert!(unit.contains("\nKillMode=mixed\n"));
    assert!(unit.contains("\nTimeoutStopSec=30\n"));
    // The same check refuses a typo, so the clean result above means something.
    let said = systemd_verify(&unit.replace("KillMode=", "KilMode="));
    assert!(said.contains("KilMode"), "{said}");
}

#[test]
fn the_dockerfile_agrees_with_the_workspace_and_the_manifests() {
    let dockerfile = read(&repo_root().join("Dockerfile"));
    let workspace = read(&repo_root().join("Cargo.toml"));
    let rust_version = workspace
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("workspace rust-version")
        .trim_matches('"');
    assert!(
        dockerfile.contains(&format!("ARG RUST_VERSION={rust_version}\n")),
        "the image builds with the workspace's Rust {rust_version}"
    );
    let froms: Vec<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert_eq!(froms.len(), 2, "a build stage and a runtime stage");
    assert!(froms[1].contains("distroless") && froms[1].ends_with(":nonroot"));
    let user = dockerfile
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("USER");
    assert!(
        !user.starts_with('0') && !user.starts_with("root"),
        "{user}"
    );
    let deployment = applied("Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(
        pod["securityContext"]["runAsUser"].to_string(),
        user.split(':').next().expect("uid"),
        "the pod runs as the image's user"
    );
    assert!(
        dockerfile.contains(&format!("--chown={user} /out/data /var/lib/connecta\n")),
        "the data directory belongs to the runtime user"
    );
    assert!(dockerfile.contains("EXPOSE 8787\n"));
    assert!(dockerfile.contains("cargo build --release --locked -p connecta"));
    // jemalloc (the binary's allocator) is built with make, which the slim
    // Rust image lacks; it is installed before the build.
    let build_stage = &dockerfile[..dockerfile.find("cargo build").expect("build")];
    assert!(
        build_stage.contains("apt-get install -y --no-install-recommends make"),
        "the build stage installs make"
    );
    // What the build copies is all the workspace needs.
    let ignore = read(&repo_root().join(".dockerignore"));
    for kept in ["!Cargo.toml", "!Cargo.lock", "!crates/"] {
        assert!(ignore.lines().any(|l| l == kept), "{kept}");
    }
}

/// The glibc of this host, as `getconf` names it (`glibc 2.36`).
fn host_glibc() -> Option<(u32, u32)> {
    let out = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let (major, minor) = text.trim().strip_prefix("glibc ")?.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// `build.rs` packs the binary's relative relocations where the host can
/// run such a binary (glibc 2.36 or later): every process then reads a few
/// KB of them at start instead of about a MB. Checked on the binary the
/// tests run, so a probe that stops passing on a capable host fails here.
#[test]
fn the_binary_packs_its_relative_relocations_where_glibc_reads_them() {
    let packed = env!("CONNECTA_PACKED_RELOCATIONS") == "true";
    let capable = cfg!(all(target_os = "linux", target_env = "gnu"))
        && host_glibc().is_some_and(|v| v >= (2, 36));
    assert_eq!(
        packed,
        capable,
        "build.rs packed: {packed}; host glibc {:?}",
        host_glibc()
    );
    if !packed {
        return;
    }
    let (status, sections, err) = run(
        Command::new("readelf")
            .args(["--section-headers", "--wide"])
            .arg(bin()),
        Duration::from_secs(30),
    );
    assert!(status.success(), "readelf: {err}");
    // `[ 9] .rela.dyn RELA <address> <offset> <size> …`, size in hex.
    let size_of = |name: &str| {
        sections.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(']').nth(1)?.split_whitespace().collect();
            (fields.first() == Some(&name)).then(|| u64::from_str_radix(fields[4], 16).ok())?
        })
    };
    assert!(size_of(".relr.dyn").is_some_and(|n| n > 0), "{sections}");
    let relative = size_of(".rela.dyn").expect(".rela.dyn");
    assert!(relative < 64 << 10, ".rela.dyn is {relative} bytes");
}

/// `build.rs` has the linker lay out first in `.text` the functions a
/// gateway and a sandbox worker run (`link/hot-functions.txt`), so the
/// pages of code a process keeps mapped are few and together; it does so
/// wherever the linker takes a symbol ordering file. Checked on the binary
/// the tests run: where lld linked it, the probe must have passed, and the
/// listed functions this binary has must sit together at the start of
/// `.text` (spread out, they would reach across all of it). The list must
/// have been made for this compiler and this Cargo.lock: most of its names
/// carry a hash of both, so with another it silently lays out less.
#[test]
fn the_binary_lays_out_the_functions_it_runs_first_where_the_linker_can() {
    let made_for = env!("CONNECTA_HOT_FUNCTIONS_MADE_FOR");
    let built_for = env!("CONNECTA_HOT_FUNCTIONS_BUILT_FOR");
    assert_eq!(
        made_for, built_for,
        "crates/connecta/link/hot-functions.txt was made for another compiler or \
         Cargo.lock: run scripts/hot-functions"
    );
    let ordered = env!("CONNECTA_HOT_FUNCTIONS_FIRST") == "true";
    let (status, comment, err) = run(
        Command::new("readelf").args(["-p", ".comment"]).arg(bin()),
        Duration::from_secs(30),
    );
    assert!(status.success(), "readelf: {err}");
    if comment.contains("Linker: LLD") {
        assert!(
            ordered,
            "linked by lld, but build.rs did not order: {comment}"
        );
    }
    if !ordered {
        return;
    }
    let list = read(&repo_root().join("crates/connecta/link/hot-functions.txt"));
    let listed: BTreeSet<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let (status, symbols, err) = run(
        Command::new("nm").args(["--defined-only", "-S"]).arg(bin()),
        Duration::from_secs(60),
    );
    assert!(status.success(), "nm: {err}");
    // `<address> [<size>] <type> <name>`; functions only.
    let functions: Vec<(u64, u64, &str)> = symbols
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (address, size, kind, name) = match fields[..] {
                [a, s, k, n] => (a, Some(s), k, n),
                [a, k, n] => (a, None, k, n),
                _ => return None,
            };
            let address = u64::from_str_radix(address, 16).ok()?;
            let size = size.map_or(Some(0), |s| u64::from_str_radix(s, 16).ok())?;
            matches!(kind, "t" | "T" | "w" | "W").then_some((address, size, name))
        })
        .collect();
    let start = functions.iter().map(|f| f.0).min().expect("functions");
    let end = functions
        .iter()
        .map(|f| f.0 + f.1)
        .max()
        .expect("functions");
    let present: Vec<(u64, u64)> = functions
        .iter()
        .filter(|(_, _, name)| listed.contains(name))
        .map(|(address, size, _)| (address - start, *size))
        .collect();
    assert!(
        present.len() >= 200,
        "only {} listed functions are in this binary",
        present.len()
    );
    let together: u64 = present.iter().map(|f| f.1).sum();
    let mut offsets: Vec<u64> = present.iter().map(|f| f.0).collect();
    offsets.sort_unstable();
    let ninetieth = offsets[offsets.len() * 9 / 10];
    // Laid out first, 9 in 10 end within their own total size (a little
    // more: alignment, and sections that hold several functions).
    assert!(
        ninetieth <= together + together / 4,
        "9 in 10 listed functions lie within {ninetieth} bytes of .text's start; \
         together they take {together} bytes (.text: {} bytes)",
        end - start
    );
}

/// A checkout whose path has a comma still gets its functions laid out:
/// the arguments build.rs passes keep the list's path whole. The same path
/// through `-Wl,` is cut at the comma and the link fails, which shows the
/// check can tell the two apart on this linker. Where rustc's default
/// linker here takes no ordering file at all, there is nothing to check.
#[test]
fn the_ordering_arguments_keep_a_list_path_with_a_comma_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = dir.path().join("probe.rs");
    std::fs::write(&source, "fn main() {}\n").expect("write probe");
    let list_in = |folder: &str| {
        let folder = dir.path().join(folder);
        std::fs::create_dir(&folder).expect("mkdir");
        let list = folder.join("hot-functions.txt");
        std::fs::write(&list, "main\n").expect("write list");
        list
    };
    let link = |args: &[String]| {
        let mut command = Command::new("rustc");
        command
            .arg("--crate-name=probe")
            .arg("-o")
            .arg(dir.path().join("probe"))
            .arg(&source);
        for arg in args {
            command.arg(format!("-Clink-arg={arg}"));
        }
        run(&mut command, Duration::from_secs(120))
    };
    let (status, _, err) = link(&ordering::ordering_args(&list_in("plain")));
    if !status.success() {
        eprintln!("rustc's default linker here takes no symbol ordering file: {err}");
        return;
    }
    let list = list_in("a checkout,with a comma");
    let (status, _, err) = link(&ordering::ordering_args(&list));
    assert!(
        status.success(),
        "linking with the build's arguments: {err}"
    );
    let (status, _, _) = link(&[format!("-Wl,--symbol-ordering-file={}", list.display())]);
    assert!(
        !status.success(),
        "a path cut at its comma linked too: this check cannot tell"
    );
}
