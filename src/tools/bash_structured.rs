//! The bash tool's `structuredContent` (`{output, truncated, full_output_path?, exit_code,
//! wall_time_seconds}`), as pi 1.6 returns it for programs (hooks' nested calls, RPC
//! clients): the whole output up to 1 MiB, its head and tail beyond that, however little of
//! it the model was shown.

use std::io::{Read, Seek, SeekFrom};
use std::time::Duration;

use serde_json::{json, Value};

use super::bash::OutputSnapshot;

/// Most of the output `structuredContent.output` carries, in bytes.
const MAX_BYTES: u64 = 1024 * 1024;

/// The structured result of a command that exited with `exit_code` after `wall`.
pub fn structured(snap: &OutputSnapshot, exit_code: i32, wall: Duration) -> Value {
    let (output, truncated) = full_output(snap);
    let mut v = json!({"output": output, "truncated": truncated});
    if truncated {
        if let Some(p) = &snap.full_output_path {
            v["full_output_path"] = Value::from(p.display().to_string());
        }
    }
    v["exit_code"] = Value::from(exit_code);
    // Tenths of a second, an integral value written without a fraction as JavaScript does.
    let tenths = (wall.as_millis() as f64 / 100.0).round();
    v["wall_time_seconds"] = if tenths % 10.0 == 0.0 {
        Value::from((tenths / 10.0) as i64)
    } else {
        Value::from(tenths / 10.0)
    };
    v
}

/// The output kept beside the model's view: the spill file when there is one, else what the
/// snapshot holds. Whether it was cut.
fn full_output(snap: &OutputSnapshot) -> (String, bool) {
    let Some(path) = &snap.full_output_path else {
        return (snap.content.clone(), snap.truncation.truncated);
    };
    match read_bounded(path) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read bash output file");
            (snap.content.clone(), true)
        }
    }
}

fn read_bounded(path: &std::path::Path) -> std::io::Result<(String, bool)> {
    let mut f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    if size <= MAX_BYTES {
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        return Ok((String::from_utf8_lossy(&bytes).into_owned(), false));
    }
    let head_len = MAX_BYTES / 2;
    let tail_len = MAX_BYTES - head_len;
    let mut head = vec![0; head_len as usize];
    f.read_exact(&mut head)?;
    let mut tail = vec![0; tail_len as usize];
    f.seek(SeekFrom::Start(size - tail_len))?;
    f.read_exact(&mut tail)?;
    // Cut at character boundaries: an incomplete last character of the head goes, and so do
    // continuation bytes opening the tail.
    let head_text = match std::str::from_utf8(&head) {
        Ok(s) => s.to_string(),
        Err(e) if e.error_len().is_none() => {
            String::from_utf8_lossy(&head[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(&head).into_owned(),
    };
    let start = tail.iter().take_while(|b| (*b & 0xc0) == 0x80).count();
    let tail_text = String::from_utf8_lossy(&tail[start..]);
    let omitted = size - head_len - tail_len;
    Ok((
        format!("{head_text}\n\n[... {omitted} bytes omitted ...]\n\n{tail_text}"),
        true,
    ))
}
