//! Tokenizer shared by indexing and querying: splits camelCase, acronyms,
//! snake_case and kebab-case, lowercases, and folds narrow inflections.

/// Split text into normalized terms.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        for part in split_case(word) {
            let lower = part.to_lowercase();
            out.push(stem(&lower));
        }
    }
    out
}

/// `getHTTPResponse2` → `get`, `HTTP`, `Response`, `2`.
fn split_case(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (idx, c) = chars[i];
        let (_, prev) = chars[i - 1];
        let next = chars.get(i + 1).map(|&(_, n)| n);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_alphabetic() && c.is_ascii_digit())
            || (prev.is_ascii_digit() && c.is_alphabetic())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
        if boundary {
            parts.push(&word[start..idx]);
            start = idx;
        }
    }
    parts.push(&word[start..]);
    parts
}

/// Narrow inflection folding: plural -s/-es, -ies → -y, -ed. Never a
/// substring match: `issue` and `issues` meet, `is` and `issue` do not.
pub(crate) fn stem(word: &str) -> String {
    let n = word.chars().count();
    if n > 4
        && let Some(base) = word.strip_suffix("ies")
    {
        return format!("{base}y");
    }
    if n > 4 {
        for suffix in ["sses", "shes", "ches", "xes"] {
            if word.ends_with(suffix) {
                return word[..word.len() - 2].to_owned();
            }
        }
    }
    if n > 3
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        return word[..word.len() - 1].to_owned();
    }
    if n > 4
        && let Some(base) = word.strip_suffix("ed")
    {
        if base.ends_with('e') || base.ends_with("at") {
            return base.to_owned();
        }
        return base.to_owned();
    }
    word.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_cases() {
        assert_eq!(tokenize("getHTTPResponse"), vec!["get", "http", "response"]);
        assert_eq!(tokenize("list_open-issues"), vec!["list", "open", "issue"]);
        assert_eq!(tokenize("query2d"), vec!["query", "2", "d"]);
    }

    #[test]
    fn folds_inflections_narrowly() {
        assert_eq!(stem("issues"), "issue");
        assert_eq!(stem("entries"), "entry");
        assert_eq!(stem("is"), "is");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("branches"), "branch");
    }
}
