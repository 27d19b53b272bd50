//! What a program's run becomes for the model: the result envelope, the one
//! truncation envelope for oversized values (contract R2), capped logs (R5),
//! and strict validation of emitted blocks (M1).

use serde_json::{Map, Value, json};

/// The hint carried by a truncation envelope (R3: truncation is a success;
/// the fix is a program that returns less).
pub(crate) const TRUNCATION_HINT: &str =
    "filter/map/slice data inside execute_code and return only what you need";

/// Characters of a value's compact JSON.
pub(crate) fn serialized_chars(v: &Value) -> (String, usize) {
    let text = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let chars = text.chars().count();
    (text, chars)
}

/// Replace a value whose compact JSON exceeds `cap` characters by exactly one
/// envelope `{truncated, preview, totalChars, hint}` whose own serialized
/// form fits within `cap`. Values within the cap pass unchanged (R1).
/// Public for the criterion benches of the hot paths (`connecta-bench`).
pub fn truncate_result(value: Value, cap: usize) -> (Value, bool) {
    let (text, total) = serialized_chars(&value);
    if total <= cap {
        return (value, false);
    }
    let envelope = |preview: &str| {
        json!({
            "truncated": true,
            "preview": preview,
            "totalChars": total,
            "hint": TRUNCATION_HINT,
        })
    };
    // The longest preview whose envelope fits: escaping can make a preview
    // up to six times longer once serialized (`"` is `\"`, a control
    // character `\u0001`), so search between no preview and the room left
    // beside the fixed fields (a longer preview is never shorter
    // serialized).
    let fixed = serialized_chars(&envelope("")).1;
    let prefix = |n: usize| -> String { text.chars().take(n).collect() };
    let fits = |n: usize| serialized_chars(&envelope(&prefix(n))).1 <= cap;
    let (mut lo, mut hi) = (0, cap.saturating_sub(fixed));
    if fits(hi) {
        lo = hi;
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (envelope(&prefix(lo)), true)
}

/// Join captured console lines and cap them to `cap` characters with a
/// visible marker (R5).
pub(crate) fn cap_logs(lines: &[String], cap: usize) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    let joined = lines.join("\n");
    let total = joined.chars().count();
    if total <= cap {
        return Some(joined);
    }
    let marker = format!("\n…[logs truncated: {} more characters]", total - cap);
    let keep = cap.saturating_sub(marker.chars().count());
    let mut out: String = joined.chars().take(keep).collect();
    out.push_str(&marker);
    Some(out)
}

/// Validate one `connecta.emit` block (M1): exactly `{type: "text", text}`,
/// or `{type: "image"|"audio", data, mimeType}` — no other fields.
pub(crate) fn validate_block(block: &Value) -> Result<(), String> {
    let Some(obj) = block.as_object() else {
        return Err(
            "connecta.emit takes one content block object, e.g. {type: \"text\", text: \"…\"}"
                .into(),
        );
    };
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let allowed: &[&str] = match ty {
        "text" => &["type", "text"],
        "image" | "audio" => &["type", "data", "mimeType"],
        _ => {
            return Err(format!(
                "connecta.emit: type must be \"text\", \"image\" or \"audio\" (got {})",
                describe_type(obj.get("type"))
            ));
        }
    };
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(format!(
                "connecta.emit: a {ty} block has no field \"{}\"; allowed: {}",
                connecta_core::error::clamp_text(key, 64),
                allowed.join(", ")
            ));
        }
    }
    for key in &allowed[1..] {
        if !obj.get(*key).is_some_and(Value::is_string) {
            return Err(format!(
                "connecta.emit: a {ty} block needs a string \"{key}\""
            ));
        }
    }
    if ty != "text" {
        let data = obj.get("data").and_then(Value::as_str).unwrap_or("");
        if !data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        {
            return Err(format!("connecta.emit: {ty} data must be base64"));
        }
    }
    Ok(())
}

fn describe_type(v: Option<&Value>) -> String {
    match v {
        None => "nothing".into(),
        Some(Value::String(s)) => format!("\"{}\"", connecta_core::error::clamp_text(s, 32)),
        Some(other) => other.to_string().chars().take(32).collect(),
    }
}

/// The success envelope (R6: nothing else unless asked for).
pub(crate) fn success(
    result: Value,
    logs: Option<String>,
    emitted: usize,
    diagnostics: Option<Value>,
) -> Value {
    let mut m = Map::with_capacity(4);
    m.insert("result".into(), result);
    if let Some(l) = logs {
        m.insert("logs".into(), Value::String(l));
    }
    if emitted > 0 {
        m.insert("emitted".into(), json!(emitted));
    }
    if let Some(d) = diagnostics {
        m.insert("diagnostics".into(), d);
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r2_one_envelope_that_fits_and_reports_the_true_size() {
        let big =
            json!({"rows": (0..5000).map(|i| json!({"i": i, "s": "é\"\\\n"})).collect::<Vec<_>>()});
        let (_, total) = serialized_chars(&big);
        let (env, truncated) = truncate_result(big, 24_000);
        assert!(truncated);
        let (_, size) = serialized_chars(&env);
        assert!(size <= 24_000, "{size}");
        assert_eq!(env["totalChars"], json!(total));
        assert_eq!(env["truncated"], json!(true));
        assert_eq!(env["hint"], json!(TRUNCATION_HINT));
        // Idempotent: the envelope itself passes unchanged.
        let (again, t2) = truncate_result(env.clone(), 24_000);
        assert!(!t2);
        assert_eq!(again, env);
    }

    #[test]
    fn r2_a_value_that_escapes_heavily_still_gets_the_longest_preview_that_fits() {
        for (value, per_char) in [
            (json!("\"".repeat(12_000)), 2),
            (json!("\u{1}".repeat(12_000)), 6),
            (
                json!(format!("{}{}", "x".repeat(100), "\\".repeat(30_000))),
                2,
            ),
        ] {
            let (env, truncated) = truncate_result(value, 24_000);
            assert!(truncated);
            let size = serialized_chars(&env).1;
            assert!(size <= 24_000, "{size}");
            let preview = env["preview"].as_str().expect("a preview");
            // Within one escaped character of the cap.
            assert!(
                size + per_char * 2 > 24_000,
                "{size}: {} chars",
                preview.len()
            );
        }
    }

    #[test]
    fn r1_small_values_pass_unchanged() {
        let v = json!({"a": [1, 2, 3]});
        assert_eq!(truncate_result(v.clone(), 24_000), (v, false));
    }

    #[test]
    fn r5_logs_are_capped_with_a_marker() {
        let lines: Vec<String> = (0..1000).map(|i| format!("line {i}")).collect();
        let out = cap_logs(&lines, 4_000).expect("logs");
        assert!(out.chars().count() <= 4_000);
        assert!(out.contains("logs truncated"));
        assert_eq!(cap_logs(&[], 4_000), None);
    }

    #[test]
    fn m1_blocks_are_validated_strictly() {
        assert!(validate_block(&json!({"type": "text", "text": "hi"})).is_ok());
        assert!(
            validate_block(&json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}))
                .is_ok()
        );
        assert!(validate_block(&json!("hi")).is_err());
        assert!(validate_block(&json!({"type": "text"})).is_err());
        assert!(validate_block(&json!({"type": "text", "text": "x", "annotations": {}})).is_err());
        assert!(validate_block(&json!({"type": "text", "text": "x", "_meta": {}})).is_err());
        assert!(
            validate_block(&json!({"type": "resource_link", "uri": "file:///etc/passwd"})).is_err()
        );
        assert!(
            validate_block(
                &json!({"type": "image", "data": "not base64!", "mimeType": "image/png"})
            )
            .is_err()
        );
    }
}
