//! The `truncation` object tools put in their result details, shaped like pi's
//! `TruncationResult` so UIs and session files written by either implementation agree.

use serde_json::{json, Value};

use super::truncate::{Limits, TruncatedBy, Truncation};

/// JavaScript's `Number.MAX_SAFE_INTEGER`: pi's "no line limit" for grep and find.
pub const MAX_SAFE_INTEGER: usize = 9_007_199_254_740_991;

pub fn truncation_json(t: &Truncation, limits: Limits) -> Value {
    json!({
        "content": t.content,
        "truncated": t.truncated,
        "truncatedBy": match t.truncated_by {
            Some(TruncatedBy::Lines) => Value::from("lines"),
            Some(TruncatedBy::Bytes) => Value::from("bytes"),
            None => Value::Null,
        },
        "totalLines": t.total_lines,
        "totalBytes": t.total_bytes,
        "outputLines": t.output_lines,
        "outputBytes": t.output_bytes,
        "lastLinePartial": t.last_line_partial,
        "firstLineExceedsLimit": t.first_line_exceeds_limit,
        "maxLines": limits.max_lines.min(MAX_SAFE_INTEGER),
        "maxBytes": limits.max_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::truncate::truncate_head;

    #[test]
    fn uses_pi_field_names() {
        let limits = Limits {
            max_lines: usize::MAX,
            max_bytes: 4,
        };
        let v = truncation_json(&truncate_head("ab\ncd\nef", limits), limits);
        assert_eq!(v["truncatedBy"], "bytes");
        assert_eq!(v["totalLines"], 3);
        assert_eq!(v["maxLines"], 9_007_199_254_740_991u64);
    }
}
