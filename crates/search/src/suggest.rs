//! "Did you mean" suggestions for an address that names no tool: nearest
//! names by edit distance on the normalized spelling, then by shared terms.

use super::tokenize::tokenize;

/// Up to `max` candidates closest to `wanted`, best first. A candidate must
/// be reasonably close (edit distance at most ~40% of the longer spelling,
/// or sharing a term) to be suggested at all.
pub(crate) fn nearest<'c>(
    wanted: &str,
    candidates: impl Iterator<Item = &'c str>,
    max: usize,
) -> Vec<&'c str> {
    let w = normalize(wanted);
    let w_terms = tokenize(wanted);
    let mut scored: Vec<(u32, usize, &str)> = Vec::new();
    for (order, c) in candidates.enumerate() {
        let n = normalize(c);
        let longer = w.chars().count().max(n.chars().count()).max(1);
        let d = levenshtein(&w, &n, longer);
        let shared = tokenize(c).iter().filter(|t| w_terms.contains(t)).count();
        let close = d <= 1 || d * 10 <= longer * 4;
        if !close && shared == 0 {
            continue;
        }
        // Distance dominates; each shared term is worth two edits.
        let cost = (d as u32 * 2).saturating_sub(shared as u32 * 4) + if close { 0 } else { 1000 };
        scored.push((cost, order, c));
    }
    scored.sort_unstable();
    scored.into_iter().take(max).map(|(_, _, c)| c).collect()
}

fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric() || *c == '.')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Levenshtein distance, giving up (returning `cap`) once it exceeds `cap`.
fn levenshtein(a: &str, b: &str, cap: usize) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > cap {
        return cap;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        let mut row_min = cur[0];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
            row_min = row_min.min(cur[j + 1]);
        }
        if row_min > cap {
            return cap;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_spellings_first_and_at_most_max() {
        let names = [
            "github.list_issues",
            "github.get_issue",
            "github.list_pulls",
            "slack.post_message",
            "github.create_issue",
        ];
        let got = nearest("github.list_isues", names.iter().copied(), 3);
        assert_eq!(got[0], "github.list_issues");
        assert!(got.len() <= 3);
        assert!(!got.contains(&"slack.post_message"));
    }

    #[test]
    fn unrelated_names_are_not_suggested() {
        let got = nearest("zzz.qqq", ["github.list_issues"].into_iter(), 3);
        assert!(got.is_empty());
    }

    #[test]
    fn levenshtein_basics() {
        assert_eq!(levenshtein("kitten", "sitting", 10), 3);
        assert_eq!(levenshtein("", "abc", 10), 3);
        assert_eq!(levenshtein("abcdef", "uvwxyz", 2), 2);
    }
}
