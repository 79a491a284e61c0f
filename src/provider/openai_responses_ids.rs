//! Tool call ids of other models made fit for the Responses API, as pi 1.6 rewrites them
//! (`normalizeToolCallId` in `openai-responses-shared.js`, `shortHash` in `utils/hash.js`).
//!
//! A Responses tool call is stored as `call_id|item_id`; the API wants both parts of
//! `[A-Za-z0-9_-]`, at most 64 characters, and item ids starting `fc_`. Calls this model made
//! itself are sent as they are; only replayed calls of another model or API are rewritten, with
//! 1.6's hash so a session both programs continue sends the same ids.

/// 1.6's `normalizeIdPart`: other characters become `_`, at most 64, no trailing `_`.
fn normalize_part(part: &str) -> String {
    let sanitized: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    sanitized.trim_end_matches('_').to_string()
}

/// 1.6's `shortHash` (two 32-bit multiply-xor lanes over UTF-16 code units, in base 36).
pub fn short_hash(s: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for ch in s.encode_utf16() {
        let ch = u32::from(ch);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The id a replayed tool call of another model is sent with. `keeps_items`: the provider is
/// one whose `call|item` ids are Responses ids; `foreign`: the call came from another
/// provider or API (its item id is then only a hash).
pub fn normalize_tool_call_id(id: &str, keeps_items: bool, foreign: bool) -> String {
    if !keeps_items {
        return normalize_part(id);
    }
    let Some((call, rest)) = id.split_once('|') else {
        return normalize_part(id);
    };
    let item = rest.split('|').next().unwrap_or(rest);
    let call = normalize_part(call);
    let mut item = if foreign {
        let mut h = format!("fc_{}", short_hash(item));
        h.truncate(64);
        h
    } else {
        normalize_part(item)
    };
    if !item.starts_with("fc_") {
        item = normalize_part(&format!("fc_{item}"));
    }
    format!("{call}|{item}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hash_matches_pi_1_6() {
        // Values from node: `shortHash(s)` in pi-ai 1.6.0's utils/hash.js.
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("abc"), "y0biex7f9bbh");
        assert_eq!(short_hash("fc_2"), "x08lfqt1kfj7");
        assert_eq!(short_hash("ü😀"), "2rfb6joz9u98");
    }

    #[test]
    fn ids_are_cleaned_and_items_prefixed() {
        assert_eq!(normalize_tool_call_id("toolu_01A", true, true), "toolu_01A");
        assert_eq!(
            normalize_tool_call_id("functions.read:0", false, true),
            "functions_read_0"
        );
        assert_eq!(
            normalize_tool_call_id("call_1|fc_2", true, false),
            "call_1|fc_2"
        );
        assert_eq!(
            normalize_tool_call_id("call_1|x.y", true, false),
            "call_1|fc_x_y"
        );
        let foreign = normalize_tool_call_id("call_1|fc_2", true, true);
        assert_eq!(foreign, format!("call_1|fc_{}", short_hash("fc_2")));
    }
}
