//! Property tests for the RPC line reader. It faces whatever a client writes to pi's stdin, so
//! for *any* byte stream, delivered in *any* chunking, it must give back exactly what a plain
//! split on LF gives (trailing CR stripped, over-long lines reported by length), never hold more
//! than the limit of one line, and treat every other byte — CR, U+2028, U+2029 — as payload.

use proptest::prelude::*;

use crate::test_support::Chunked;
use tokio::io::BufReader;

use super::framing::{Line, LineReader};

/// Reads every line; also returns the most the reader ever held of one line.
fn read_all(data: Vec<u8>, chunks: Vec<usize>, buf_cap: usize, max: usize) -> (Vec<Line>, usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    rt.block_on(async move {
        let src = Chunked::new(data, chunks);
        let mut r = LineReader::with_max_line(BufReader::with_capacity(buf_cap.max(1), src), max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().await.expect("an in-memory read cannot fail") {
            out.push(l);
        }
        (out, r.peak_buffered())
    })
}

/// The reference: split on LF, keep an unterminated tail, strip one CR, apply the limit.
fn model(data: &[u8], max: usize) -> Vec<Line> {
    let mut parts: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
        .into_iter()
        .map(|p| {
            if p.len() > max {
                Line::TooLong { len: p.len() }
            } else {
                Line::Record(p.strip_suffix(b"\r").unwrap_or(p).to_vec())
            }
        })
        .collect()
}

/// Bytes rich in the characters framing can get wrong: LF, CR, and the UTF-8 of U+2028/U+2029.
fn tricky_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()),
        Just("\u{2028}".as_bytes().to_vec()),
        Just("\u{2029}".as_bytes().to_vec()),
        Just("é".as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..6),
        "[ -~]{0,10}".prop_map(|s| s.into_bytes()),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

fn chunking() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..9, 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_stream_splits_like_a_plain_lf_split_in_any_chunking(
        data in tricky_bytes(),
        chunks in chunking(),
        buf_cap in 1usize..16,
        max in 1usize..40,
    ) {
        let (got, held) = read_all(data.clone(), chunks, buf_cap, max);
        prop_assert_eq!(got, model(&data, max));
        prop_assert!(held <= max, "held {held} bytes with a limit of {max}");
    }

    #[test]
    fn json_records_come_back_whole_whatever_they_contain(
        texts in prop::collection::vec("[ -~\u{2028}\u{2029}\r\né\\PC]{0,16}", 0..6),
        crlf in prop::collection::vec(any::<bool>(), 6),
        chunks in chunking(),
    ) {
        let records: Vec<Vec<u8>> = texts
            .iter()
            .map(|t| serde_json::to_vec(&serde_json::json!({"type": "prompt", "message": t})))
            .collect::<Result<_, _>>()
            .expect("serialisable");
        let mut data = Vec::new();
        for (r, cr) in records.iter().zip(&crlf) {
            data.extend_from_slice(r);
            data.extend_from_slice(if *cr { b"\r\n" } else { b"\n" });
        }
        let (got, _) = read_all(data, chunks, 7, 1 << 16);
        let want: Vec<Line> = records.into_iter().map(Line::Record).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn an_over_long_line_never_costs_more_than_the_limit_and_the_next_line_survives(
        long_len in 41usize..400,
        chunks in chunking(),
        buf_cap in 1usize..64,
    ) {
        let mut data = vec![b'x'; long_len];
        data.extend_from_slice(b"\n{\"type\":\"get_state\"}\n");
        let (got, held) = read_all(data, chunks, buf_cap, 40);
        prop_assert_eq!(
            got,
            vec![Line::TooLong { len: long_len }, Line::Record(b"{\"type\":\"get_state\"}".to_vec())]
        );
        prop_assert!(held <= 40);
    }
}
