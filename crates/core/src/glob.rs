//! Tool-name globs for `include_tools` / `exclude_tools`: `*` matches any run
//! of characters (including none), `?` exactly one, everything else itself.

pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matcher with single-star backtracking: linear in practice and
    // never exponential, whatever a config author writes.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// Include/exclude curation: a name passes when it matches some include
/// pattern (or there are none) and matches no exclude pattern.
pub fn passes_filters(name: &str, include: &[String], exclude: &[String]) -> bool {
    (include.is_empty() || include.iter().any(|p| glob_match(p, name)))
        && !exclude.iter().any(|p| glob_match(p, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*", ""));
        assert!(glob_match("get_*", "get_note"));
        assert!(!glob_match("get_*", "list_notes"));
        assert!(glob_match("*_note?", "get_notes"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
        assert!(glob_match("exact", "exact"));
        assert!(!glob_match("exact", "exactly"));
    }

    #[test]
    fn filters() {
        let inc = vec!["get_*".to_string(), "list_*".to_string()];
        let exc = vec!["*_secret".to_string()];
        assert!(passes_filters("get_note", &inc, &exc));
        assert!(!passes_filters("get_secret", &inc, &exc));
        assert!(!passes_filters("delete_note", &inc, &exc));
        assert!(passes_filters("anything", &[], &[]));
    }
}
