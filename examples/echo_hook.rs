//! The smallest conforming hook: it registers for `tool_call` and answers every request with an
//! empty reply at once. The hook benchmark (`cargo bench --bench hooks`) times it to separate
//! what the host costs per round trip from what a real policy costs.
//!
//! Build: `cargo build --release --examples` → `target/release/examples/echo_hook`.

use std::io::{self, BufReader, BufWriter, ErrorKind, Read, Write};

use serde_json::{json, Value};

fn read_frame(r: &mut impl Read) -> io::Result<Option<Value>> {
    let mut head = [0u8; 4];
    match r.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut body = vec![0u8; u32::from_be_bytes(head) as usize];
    r.read_exact(&mut body)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| io::Error::new(ErrorKind::InvalidData, e))
}

fn write_frame(w: &mut impl Write, msg: &Value) -> io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(io::Error::other)?;
    let len = u32::try_from(body.len())
        .map_err(|_| io::Error::new(ErrorKind::InvalidData, "frame too large"))?;
    w.write_all(&len.to_be_bytes())?;
    w.write_all(&body)?;
    w.flush()
}

fn main() -> io::Result<()> {
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    if read_frame(&mut input)?.is_none() {
        return Ok(());
    }
    write_frame(
        &mut output,
        &json!({"type": "register", "protocol_version": 1, "name": "echo",
                "subscriptions": [{"event": "tool_call"}]}),
    )?;
    while let Some(msg) = read_frame(&mut input)? {
        match msg.get("type").and_then(Value::as_str) {
            Some("shutdown") => break,
            Some("event") | Some("tool_execute") | Some("command") => {
                if let Some(id) = msg.get("id").filter(|v| !v.is_null()) {
                    write_frame(
                        &mut output,
                        &json!({"type": "reply", "id": id, "result": null}),
                    )?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}
