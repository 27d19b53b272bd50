//! The launcher protocol's ready line, as a measured server prints it.

use connecta_bench::launcher::{Ready, ReadyLineError, parse_ready_line};

#[test]
fn the_minimal_ready_line_is_accepted() {
    let ready = parse_ready_line(r#"{"type":"ready","port":8787}"#).expect("valid");
    assert_eq!(ready, Some(Ready::new(8787)));
}

#[test]
fn surrounding_whitespace_and_extra_fields_are_tolerated() {
    let ready = parse_ready_line("  {\"type\":\"ready\",\"port\":1,\"connectorCount\":10}\r\n")
        .expect("valid");
    assert_eq!(ready.map(|r| r.port), Some(1));
}

#[test]
fn a_wrapper_can_name_the_process_to_measure() {
    let ready = parse_ready_line(r#"{"type":"ready","port":9,"pid":4242,"spawnedAfterMs":3.5}"#)
        .expect("valid")
        .expect("a ready line");
    assert_eq!(ready.pid, Some(4242));
    assert_eq!(ready.spawned_after_ms, Some(3.5));
}

#[test]
fn other_output_is_not_a_ready_line() {
    for line in [
        "",
        "listening on 127.0.0.1:8787",
        "2026-01-01T00:00:00Z INFO ready",
        r#"{"type":"log","message":"ready"}"#,
        r#"{"level":"info","port":8787}"#,
        "{not json",
        "[1,2]",
    ] {
        assert_eq!(parse_ready_line(line), Ok(None), "{line:?}");
    }
}

#[test]
fn a_ready_line_without_a_usable_port_is_an_error() {
    for line in [
        r#"{"type":"ready"}"#,
        r#"{"type":"ready","port":0}"#,
        r#"{"type":"ready","port":70000}"#,
        r#"{"type":"ready","port":"8787"}"#,
        r#"{"type":"ready","port":-1}"#,
    ] {
        assert!(
            matches!(parse_ready_line(line), Err(ReadyLineError::BadPort(_))),
            "{line:?}"
        );
    }
}

#[test]
fn bad_optional_fields_are_errors_not_silently_dropped() {
    assert!(parse_ready_line(r#"{"type":"ready","port":1,"pid":0}"#).is_err());
    assert!(parse_ready_line(r#"{"type":"ready","port":1,"pid":"12"}"#).is_err());
    assert!(parse_ready_line(r#"{"type":"ready","port":1,"spawnedAfterMs":-2}"#).is_err());
}

#[test]
fn printed_lines_parse_back() {
    let ready = Ready {
        port: 4000,
        pid: Some(77),
        spawned_after_ms: Some(12.25),
    };
    assert_eq!(parse_ready_line(&ready.to_line()), Ok(Some(ready)));
    assert_eq!(Ready::new(5).to_line(), r#"{"type":"ready","port":5}"#);
}
