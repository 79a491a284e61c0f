//! Tool call ids as Mistral takes them: exactly nine ASCII letters and digits.
//!
//! Calls made by another model (an OpenAI Responses id such as `call_9|fc_9`, Anthropic's
//! `toolu_…`) are renamed for each request as pi 1.6 renames them: an id that is nine
//! alphanumerics once its other characters are dropped keeps that form, any other is hashed
//! (1.6's `shortHash`) to nine; two ids that would collide get different names, and a call's
//! results follow its new name. A streamed call that comes without an id is named from its
//! index the same way.

use std::collections::HashMap;

/// The length Mistral requires.
pub const ID_LENGTH: usize = 9;

/// pi 1.6's `shortHash` (two 32-bit multiply-xor lanes over the UTF-16 code units, each
/// written in base 36).
pub fn short_hash(s: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for ch in s.encode_utf16() {
        let ch = u32::from(ch);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    let n1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    let n2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (n1 ^ (n1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(n2), base36(n1))
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
    String::from_utf8_lossy(&out).into_owned()
}

/// 1.6's `deriveMistralToolCallId`: the id's alphanumerics when they are nine, else a hash of
/// them (of the id itself when it has none), salted with the attempt after a collision.
pub fn derive(id: &str, attempt: u32) -> String {
    let normalized: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && normalized.len() == ID_LENGTH {
        return normalized;
    }
    let base = if normalized.is_empty() {
        id
    } else {
        &normalized
    };
    let seed = if attempt == 0 {
        base.to_string()
    } else {
        format!("{base}:{attempt}")
    };
    short_hash(&seed)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(ID_LENGTH)
        .collect()
}

/// One request's renaming (1.6's `createMistralToolCallIdNormalizer`): the same id always
/// gets the same name, and no two ids share one.
#[derive(Debug, Default)]
pub struct IdNormalizer {
    names: HashMap<String, String>,
    owners: HashMap<String, String>,
}

impl IdNormalizer {
    pub fn name(&mut self, id: &str) -> String {
        if let Some(name) = self.names.get(id) {
            return name.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive(id, attempt);
            match self.owners.get(&candidate) {
                Some(owner) if owner != id => attempt += 1,
                _ => {
                    self.names.insert(id.to_string(), candidate.clone());
                    self.owners.insert(candidate.clone(), id.to_string());
                    return candidate;
                }
            }
        }
    }
}

/// The id of a streamed call that came without one (or with `"null"`), from its index.
pub fn for_index(index: u64) -> String {
    derive(&format!("toolcall:{index}"), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_names_are_pi_1_6s() {
        // Values computed by pi 1.6's own shortHash and normalizer.
        let mut n = IdNormalizer::default();
        assert_eq!(n.name("call_9|fc_9"), "f5ud0i7t5");
        // The same alphanumerics (`call9fc9`): hashed again with an attempt salt.
        assert_eq!(n.name("call-9|fc-9"), "1e48ompds");
        assert_eq!(derive("abcdefghi", 0), "abcdefghi");
        assert_eq!(for_index(2), "toolcall2");
        let mut n = IdNormalizer::default();
        assert_eq!(n.name("a-b-c-d-e-f-g-h-i"), "abcdefghi");
        assert_eq!(n.name("a-b-c-d-e-f-g-h-i"), "abcdefghi");
        // Its alphanumerics are already taken by another id: hashed with an attempt salt.
        let other = n.name("abcdefghi");
        assert_ne!(other, "abcdefghi");
        assert_eq!(other, derive("abcdefghi", 1));
        assert!(other.len() <= ID_LENGTH && other.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}
