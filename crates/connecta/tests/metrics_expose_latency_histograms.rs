//! `/metrics` through the real binary: after real calls (direct, refused,
//! from a program, a failing program) the Prometheus exposition parses, its
//! histograms have cumulative buckets that end in `+Inf` = `_count`, and the
//! counts are exactly the calls made, labelled by connector, meta-tool and
//! outcome. Labels are closed sets: an invented address or meta-tool name
//! adds no series of its own.

mod support;

use std::collections::BTreeMap;

use serde_json::json;
use support::*;

/// One sample line of the text exposition.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The exposition as `# TYPE` declarations and samples; panics on any line
/// that is not valid text format 0.0.4 (as far as this gateway writes it).
fn parse(text: &str) -> (BTreeMap<String, String>, Vec<Sample>) {
    let mut types = BTreeMap::new();
    let mut samples = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(
                types.insert(name.to_owned(), kind.to_owned()).is_none(),
                "{name} declared twice"
            );
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        assert!(!line.starts_with('#'), "unexpected comment: {line}");
        let (series, value) = line.rsplit_once(' ').expect("sample has a value");
        let value = match value {
            "+Inf" => f64::INFINITY,
            v => v
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("bad value in {line}")),
        };
        let (name, labels) = match series.split_once('{') {
            None => (series.to_owned(), BTreeMap::new()),
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').expect("labels close");
                let mut labels = BTreeMap::new();
                for pair in body.split(',').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').expect("label k=v");
                    let v = v
                        .strip_prefix('"')
                        .and_then(|v| v.strip_suffix('"'))
                        .expect("quoted label value");
                    labels.insert(k.to_owned(), v.to_owned());
                }
                (name.to_owned(), labels)
            }
        };
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "metric name {name}"
        );
        samples.push(Sample {
            name,
            labels,
            value,
        });
    }
    (types, samples)
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A histogram series' buckets (upper bound → cumulative count), its count
/// and sum; checks that buckets are cumulative and `+Inf` equals the count.
fn histogram(samples: &[Sample], name: &str, want: &BTreeMap<String, String>) -> (u64, f64) {
    let mut buckets: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.name == format!("{name}_bucket"))
        .filter(|s| {
            let mut l = s.labels.clone();
            l.remove("le");
            l == *want
        })
        .map(|s| {
            let le = match s.labels["le"].as_str() {
                "+Inf" => f64::INFINITY,
                v => v.parse().expect("le"),
            };
            (le, s.value)
        })
        .collect();
    assert!(
        buckets.len() > 5,
        "{name}{want:?}: expected a series with buckets"
    );
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    for w in buckets.windows(2) {
        assert!(w[0].1 <= w[1].1, "{name}: buckets are cumulative");
    }
    let count = samples
        .iter()
        .find(|s| s.name == format!("{name}_count") && s.labels == *want)
        .expect("a _count sample")
        .value;
    let sum = samples
        .iter()
        .find(|s| s.name == format!("{name}_sum") && s.labels == *want)
        .expect("a _sum sample")
        .value;
    let last = buckets.last().expect("buckets");
    assert!(last.0.is_infinite(), "{name}: the last bucket is +Inf");
    assert_eq!(last.1, count, "{name}: +Inf bucket equals _count");
    (count as u64, sum)
}

fn series_count(samples: &[Sample], name: &str) -> usize {
    samples
        .iter()
        .filter(|s| s.name == format!("{name}_count"))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn histograms_count_the_calls_made_by_connector_tool_and_outcome() {
    let gw = Gateway::start(&demo_connector());
    gw.wait_catalogs().await;
    let client = connect(&gw.url()).await;

    // Two direct read-only calls that succeed.
    for _ in 0..2 {
        let (v, err) = call(
            &client,
            "call_tool",
            json!({"address": "demo.list_notes", "args": {}}),
        )
        .await;
        assert!(!err, "{v}");
    }
    // A write through call_tool is refused before any downstream call.
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.delete_note", "args": {"id": 1}}),
    )
    .await;
    assert!(err);
    assert_eq!(v["error"]["code"], "destructive_tool_requires_approval");
    // A downstream call the demo answers with an error.
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "demo.get_note", "args": {"id": 99999}}),
    )
    .await;
    assert!(err, "{v}");
    let missing_code = v["error"]["code"].as_str().expect("code").to_owned();
    // Invented names: an address of a connector that does not exist.
    let (v, err) = call(
        &client,
        "call_tool",
        json!({"address": "no-such-connector-xyz.tool", "args": {}}),
    )
    .await;
    assert!(err);
    assert_eq!(v["error"]["code"], "unknown_address");
    // One program that makes one downstream call, one that throws.
    let (v, err) = program(&client, "async () => (await demo.note_stats({})) && 1").await;
    assert!(!err, "{v}");
    let (v, err) = program(&client, "async () => { throw new Error('no'); }").await;
    assert!(err, "{v}");

    let text = metrics_text(&gw).await;
    let (types, samples) = parse(&text);
    for h in [
        "connecta_request_duration_seconds",
        "connecta_downstream_call_duration_seconds",
        "connecta_execute_code_duration_seconds",
    ] {
        assert_eq!(types.get(h).map(String::as_str), Some("histogram"), "{h}");
    }
    // The gauges and counters that were there before keep their names.
    assert_eq!(types["connecta_requests_admitted_total"], "counter");
    assert_eq!(types["connecta_connector_ready"], "gauge");
    let ready = samples
        .iter()
        .find(|s| s.name == "connecta_connector_ready")
        .expect("ready");
    assert_eq!(ready.labels, labels(&[("connector", "demo")]));
    assert_eq!(ready.value, 1.0);

    // Downstream calls: two direct + one from the program succeeded; the
    // refused write never reached the connector; the missing note did.
    let d = "connecta_downstream_call_duration_seconds";
    let (ok, sum) = histogram(
        &samples,
        d,
        &labels(&[("connector", "demo"), ("outcome", "ok")]),
    );
    assert_eq!(ok, 3);
    assert!(sum > 0.0);
    let (failed, _) = histogram(
        &samples,
        d,
        &labels(&[("connector", "demo"), ("outcome", &missing_code)]),
    );
    assert_eq!(failed, 1);
    assert_eq!(series_count(&samples, d), 2, "only demo's two outcomes");

    // Requests: by meta-tool and outcome; the invented address is an
    // `unknown_address` of call_tool, not a series of its own.
    let r = "connecta_request_duration_seconds";
    let call_tool = |outcome: &str| labels(&[("tool", "call_tool"), ("outcome", outcome)]);
    assert_eq!(histogram(&samples, r, &call_tool("ok")).0, 2);
    assert_eq!(
        histogram(
            &samples,
            r,
            &call_tool("destructive_tool_requires_approval")
        )
        .0,
        1
    );
    assert_eq!(histogram(&samples, r, &call_tool(&missing_code)).0, 1);
    assert_eq!(histogram(&samples, r, &call_tool("unknown_address")).0, 1);
    assert_eq!(
        histogram(
            &samples,
            r,
            &labels(&[("tool", "execute_code"), ("outcome", "ok")])
        )
        .0,
        1
    );
    assert!(
        !text.contains("no-such-connector-xyz"),
        "caller text never becomes a label"
    );

    // Programs: one ok, one exception.
    let p = "connecta_execute_code_duration_seconds";
    assert_eq!(histogram(&samples, p, &labels(&[("outcome", "ok")])).0, 1);
    assert_eq!(
        histogram(&samples, p, &labels(&[("outcome", "exception")])).0,
        1
    );
    assert_eq!(series_count(&samples, p), 2);
}
