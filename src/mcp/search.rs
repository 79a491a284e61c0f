//! Ranking deferred tools for `tool_search`: Okapi BM25 over each tool's name, description and
//! server, with words split at punctuation, underscores and camelCase humps, so "sum" finds
//! `get_sum` and "longRunning" finds `trigger-long-running-operation`. A few dozen tools is the
//! usual size, so the index is rebuilt per search rather than kept up to date.

use std::collections::HashMap;

/// What is searched about one tool.
#[derive(Debug, Clone)]
pub struct Doc<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub server: &'a str,
}

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Lower-cased words of `s`: runs of letters and digits, split again where a lower-case letter
/// is followed by an upper-case one.
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn doc_words(d: &Doc) -> Vec<String> {
    // The name counts twice: a word in a tool's name says more than one in its prose.
    let mut w = words(d.name);
    w.extend(words(d.name));
    w.extend(words(d.description));
    w.extend(words(d.server));
    w
}

/// Indexes of the documents matching `query`, best first; at most `limit`. Documents sharing
/// no word with the query are left out.
pub fn rank(docs: &[Doc], query: &str, limit: usize) -> Vec<usize> {
    let query: Vec<String> = {
        let mut q = words(query);
        q.sort();
        q.dedup();
        q
    };
    if query.is_empty() || docs.is_empty() {
        return Vec::new();
    }
    let bags: Vec<Vec<String>> = docs.iter().map(doc_words).collect();
    let n = bags.len() as f64;
    let avg = bags.iter().map(Vec::len).sum::<usize>() as f64 / n;
    let mut df: HashMap<&str, f64> = HashMap::new();
    for q in &query {
        let count = bags.iter().filter(|b| b.contains(q)).count();
        df.insert(q, count as f64);
    }
    let mut scored: Vec<(usize, f64)> = bags
        .iter()
        .enumerate()
        .map(|(i, bag)| {
            let len = bag.len() as f64;
            let score = query
                .iter()
                .map(|q| {
                    let tf = bag.iter().filter(|w| *w == q).count() as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let d = df.get(q.as_str()).copied().unwrap_or(0.0);
                    let idf = ((n - d + 0.5) / (d + 0.5) + 1.0).ln();
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg.max(1.0)))
                })
                .sum::<f64>();
            (i, score)
        })
        .filter(|(_, s)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().take(limit).map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(name: &'a str, description: &'a str) -> Doc<'a> {
        Doc {
            name,
            description,
            server: "everything",
        }
    }

    #[test]
    fn words_split_at_punctuation_underscores_and_humps() {
        assert_eq!(
            words("mcp__everything__get-sum"),
            ["mcp", "everything", "get", "sum"]
        );
        assert_eq!(words("longRunningOp v2"), ["long", "running", "op", "v2"]);
        assert_eq!(words("  "), Vec::<String>::new());
    }

    #[test]
    fn the_tool_named_for_the_query_ranks_first() {
        let docs = [
            doc("echo", "Echoes back the input"),
            doc("get-sum", "Returns the sum of two numbers"),
            doc("get-tiny-image", "Returns a tiny image"),
            doc(
                "trigger-long-running-operation",
                "Demonstrates a long running operation with progress updates",
            ),
        ];
        assert_eq!(rank(&docs, "sum numbers", 5), [1]);
        assert_eq!(rank(&docs, "long running progress", 5)[0], 3);
        assert_eq!(rank(&docs, "image", 5), [2]);
        assert!(rank(&docs, "database", 5).is_empty());
        assert!(rank(&docs, "", 5).is_empty());
    }

    #[test]
    fn a_word_in_the_name_beats_the_same_word_in_prose() {
        let docs = [
            doc("list_files", "Lists the entries of a directory"),
            doc("read_directory", "Reads files"),
        ];
        assert_eq!(rank(&docs, "directory", 5), [1, 0]);
        assert_eq!(rank(&docs, "directory", 1), [1]);
    }
}
