//! stdin/stdout for `serve --stdio`, with the JSON-RPC framing checks rmcp
//! leaves out: a line that is not JSON is answered `-32700` (rmcp drops it
//! without a word, so the client waits for nothing), a JSON value that is
//! not one JSON-RPC message is answered `-32600` with its `id` when it has a
//! usable one, and an error rmcp sends without an `id` gets `"id": null`, as
//! JSON-RPC requires.
//!
//! Three tasks: one reads stdin lines and hands rmcp the good ones, one
//! reads rmcp's output lines, and one writes both kinds of answer to stdout
//! whole, one line at a time, so they never interleave.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Room in the in-process pipes between these tasks and rmcp.
const PIPE_BYTES: usize = 64 * 1024;

/// The streams to give rmcp, and the task that owns stdout (await it after
/// the session ends, so every answer is written before the process exits).
pub(crate) struct FramedStdio {
    pub to_rmcp: DuplexStream,
    pub from_rmcp: DuplexStream,
    pub reader: JoinHandle<()>,
    pub writer: JoinHandle<()>,
}

/// Frame `input` / `output` (stdin / stdout in the binary) for rmcp. Lines
/// longer than `max_line` are answered `-32600` and skipped.
pub(crate) fn frame<R, W>(input: R, output: W, max_line: usize) -> FramedStdio
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, mut feed) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, drain) = tokio::io::duplex(PIPE_BYTES);
    let (lines, mut out) = mpsc::channel::<Vec<u8>>(64);

    let answers = lines.clone();
    let reader = tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_line(&mut input, &mut line, max_line).await {
                Ok(Line::End) | Err(_) => break,
                Ok(Line::TooLong) => {
                    let _ = answers
                        .send(error_line(
                            &Value::Null,
                            -32600,
                            &format!("a message longer than {max_line} bytes is refused"),
                        ))
                        .await;
                }
                Ok(Line::Read) => match check(&line) {
                    Verdict::Skip => {}
                    Verdict::Pass => {
                        if feed.write_all(&line).await.is_err()
                            || feed.write_all(b"\n").await.is_err()
                        {
                            break;
                        }
                    }
                    Verdict::Answer(answer) => {
                        if answers.send(answer).await.is_err() {
                            break;
                        }
                    }
                },
            }
        }
        // End of input: rmcp sees it and ends the session.
        let _ = feed.shutdown().await;
    });

    tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(drain).lines();
        while let Ok(Some(l)) = from_rmcp.next_line().await {
            if lines.send(with_null_id(l).into_bytes()).await.is_err() {
                break;
            }
        }
    });

    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut l) = out.recv().await {
            l.push(b'\n');
            if output.write_all(&l).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });

    FramedStdio {
        to_rmcp: rmcp_in,
        from_rmcp: rmcp_out,
        reader,
        writer,
    }
}

enum Line {
    Read,
    TooLong,
    End,
}

/// One line without its `\n` (and `\r`), at most `max` bytes; a longer one
/// is read to its end and dropped.
async fn read_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() && !too_long {
                Line::End
            } else if too_long {
                Line::TooLong
            } else {
                Line::Read
            });
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        input.consume(used);
        if done.is_some() {
            if too_long {
                return Ok(Line::TooLong);
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Line::Read);
        }
    }
}

enum Verdict {
    /// A JSON-RPC message: rmcp's.
    Pass,
    /// Blank: nothing to answer.
    Skip,
    /// Answered here with this line.
    Answer(Vec<u8>),
}

fn check(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Answer(error_line(
                &Value::Null,
                -32700,
                &format!("Parse error: the line is not JSON ({e})"),
            ));
        }
    };
    let Value::Object(m) = &value else {
        let why = if value.is_array() {
            "a batch (JSON array) is not accepted over stdio; send one message per line"
        } else {
            "a JSON-RPC message is a JSON object"
        };
        return Verdict::Answer(error_line(&Value::Null, -32600, why));
    };
    let id = match m.get("id") {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    };
    let is_message = m.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && (m.get("method").is_some_and(Value::is_string)
            || m.contains_key("result")
            || m.contains_key("error"));
    if is_message {
        Verdict::Pass
    } else {
        Verdict::Answer(error_line(
            &id,
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
        ))
    }
}

fn error_line(id: &Value, code: i64, message: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes()
}

/// rmcp's answer to a message it could not read has no `id`; JSON-RPC
/// wants `"id": null` there. Only such error lines are parsed.
fn with_null_id(line: String) -> String {
    if !line.starts_with(r#"{"jsonrpc":"2.0","error":"#) {
        return line;
    }
    match serde_json::from_str::<Value>(&line) {
        Ok(Value::Object(mut m)) if !m.contains_key("id") => {
            m.insert("id".into(), Value::Null);
            Value::Object(m).to_string()
        }
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn answers(input: &'static str, max_line: usize) -> (Vec<Value>, String) {
        let (mut client, server_in) = tokio::io::duplex(4096);
        let (server_out, mut client_out) = tokio::io::duplex(4096);
        let framed = frame(server_in, server_out, max_line);
        client.write_all(input.as_bytes()).await.expect("write");
        drop(client);
        // What rmcp would have been given, read off its side of the pipe.
        let mut passed = String::new();
        let mut to_rmcp = framed.to_rmcp;
        tokio::io::AsyncReadExt::read_to_string(&mut to_rmcp, &mut passed)
            .await
            .expect("read");
        drop(framed.from_rmcp);
        framed.reader.await.expect("reader");
        framed.writer.await.expect("writer");
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut client_out, &mut out)
            .await
            .expect("read");
        let answered = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("each answer is JSON"))
            .collect();
        (answered, passed)
    }

    #[tokio::test]
    async fn what_is_not_a_message_is_answered_and_messages_pass() {
        let (answered, passed) = answers(
            "not json\n\n{\"foo\":1,\"id\":7}\n[1]\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n\"x\"\n",
            1000,
        )
        .await;
        let codes: Vec<(i64, Value)> = answered
            .iter()
            .map(|a| (a["error"]["code"].as_i64().expect("code"), a["id"].clone()))
            .collect();
        assert_eq!(
            codes,
            [
                (-32700, Value::Null),
                (-32600, json!(7)),
                (-32600, Value::Null),
                (-32600, Value::Null)
            ]
        );
        assert_eq!(
            passed,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_and_the_next_one_read() {
        let long = format!(
            "{}\n{{\"jsonrpc\":\"2.0\",\"method\":\"x\"}}\n",
            "a".repeat(5000)
        );
        let long: &'static str = Box::leak(long.into_boxed_str());
        let (answered, passed) = answers(long, 100).await;
        assert_eq!(answered.len(), 1);
        assert!(
            answered[0]["error"]["message"]
                .as_str()
                .expect("message")
                .contains("longer than 100")
        );
        assert_eq!(passed, "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
    }

    #[test]
    fn an_error_without_id_gets_a_null_id() {
        let fixed: Value = serde_json::from_str(&with_null_id(
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#.into(),
        ))
        .expect("JSON");
        assert_eq!(
            fixed,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid request"}})
        );
        let ok = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert_eq!(with_null_id(ok.into()), ok);
    }
}
