//! The config `serve-synthetic` writes is held against connecta's own config
//! parser, so a change in the gateway's config schema breaks this test
//! instead of breaking the benchmark at run time.

use std::collections::HashMap;
use std::path::Path;

use connecta_bench::launcher::gateway_config::{Downstream, GatewayConfigSpec, render, serve_argv};
use connecta_core::config::{ConnectorKind, McpTransport, parse_config};

fn parse(text: &str) -> connecta_core::config::Config {
    let env: HashMap<String, String> = HashMap::new();
    match parse_config(text, "bench.toml", &env) {
        Ok(config) => config,
        Err(e) => panic!("connecta refuses the generated config:\n{e}\n---\n{text}"),
    }
}

#[test]
fn http_connectors_point_at_their_own_paths() {
    let text = render(&GatewayConfigSpec {
        connectors: 3,
        tools_per_connector: 7,
        downstream: Downstream::Http { port: 40123 },
        data_dir: Path::new("/tmp/bench \"data\""),
    });
    let config = parse(&text);
    assert!(config.server.listen.ip().is_loopback());
    assert_eq!(config.server.listen.port(), 0);
    assert_eq!(config.server.data_dir, "/tmp/bench \"data\"");
    assert!(config.auth.open);
    let ids: Vec<&str> = config.connectors.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["connector_0", "connector_1", "connector_2"]);
    let urls: Vec<String> = config
        .connectors
        .iter()
        .map(|c| match &c.kind {
            ConnectorKind::Mcp(mcp) => match &mcp.transport {
                McpTransport::Http { url, .. } => url.clone(),
                other => panic!("expected HTTP, got {other:?}"),
            },
            other => panic!("expected an mcp connector, got {other:?}"),
        })
        .collect();
    assert_eq!(urls[2], "http://127.0.0.1:40123/connector_2/mcp");
}

#[test]
fn stdio_connectors_start_the_bench_binary_one_connector_each() {
    let text = render(&GatewayConfigSpec {
        connectors: 2,
        tools_per_connector: 40,
        downstream: Downstream::Stdio {
            bench_exe: "/opt/bench/connecta-bench".into(),
            page_size: 25,
        },
        data_dir: Path::new("/tmp/d"),
    });
    let config = parse(&text);
    let ConnectorKind::Mcp(mcp) = &config.connectors[1].kind else {
        panic!("expected an mcp connector");
    };
    let McpTransport::Stdio { command, args, .. } = &mcp.transport else {
        panic!("expected stdio");
    };
    assert_eq!(command, "/opt/bench/connecta-bench");
    assert_eq!(
        args,
        &[
            "synthetic-downstream",
            "--stdio",
            "--connector-index",
            "1",
            "--tools",
            "40",
            "--page-size",
            "25"
        ]
    );
}

#[test]
fn the_serve_command_follows_the_gateway_contract() {
    assert_eq!(
        serve_argv("/bin/connecta", Path::new("/tmp/c.toml")),
        [
            "/bin/connecta",
            "serve",
            "--config",
            "/tmp/c.toml",
            "--listen",
            "127.0.0.1:0"
        ]
    );
}
