//! Program normalization (contract P1): turns model output into the two
//! script sources the engine tries, in order.
//!
//! The contract form is an async arrow function expression, evaluated once and
//! awaited. As a courtesy we also accept a markdown-fenced program and a bare
//! statement body. Both wrappers keep line numbers intact so a syntax error
//! points at the line the model wrote.
//!
//! Must never: rewrite the program's text beyond stripping one fence and
//! wrapping it. In particular no TypeScript stripping (P5).

/// The candidate scripts for one program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidates {
    /// The program as an expression: `(<program>\n)`. Evaluates to the async
    /// function (called and awaited) or, leniently, to any value.
    pub expression: String,
    /// The program as the body of an async arrow function.
    pub body: String,
    /// Whether the program looks like an expression (so a syntax error of the
    /// expression form is the one worth reporting).
    pub looks_like_expression: bool,
}

/// Removes one surrounding markdown code fence (```` ```js ```` … ```` ``` ````).
pub fn strip_fence(source: &str) -> &str {
    let trimmed = source.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return source;
    };
    // The info string (`js`, `javascript`, …) runs to the end of the first line.
    let Some(newline) = rest.find('\n') else {
        return source;
    };
    let info = rest[..newline].trim();
    if !info
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return source;
    }
    let inner = &rest[newline + 1..];
    let inner = inner.trim_end();
    inner.strip_suffix("```").unwrap_or(inner).trim_end()
}

/// Builds both candidate scripts for a program.
pub fn candidates(program: &str) -> Candidates {
    let source = strip_fence(program);
    let head = source.trim_start();
    let looks_like_expression = head.starts_with("async") || head.starts_with('(');
    Candidates {
        // The newline before `)` keeps a trailing `//` comment from eating it.
        expression: format!("({source}\n)"),
        body: format!("(async () => {{{source}\n}})"),
        looks_like_expression,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p1_fenced_programs_lose_their_fence() {
        let src = "```javascript\nasync () => 1\n```\n";
        assert_eq!(strip_fence(src), "async () => 1");
        assert_eq!(strip_fence("```\nreturn 2\n```"), "return 2");
        // Not a fence: left alone.
        assert_eq!(strip_fence("async () => '```'"), "async () => '```'");
    }

    #[test]
    fn p1_candidates_keep_line_numbers() {
        let c = candidates("async () => {\n  return 1;\n}");
        assert!(c.looks_like_expression);
        assert_eq!(c.expression.lines().count(), 4);
        assert!(c.expression.starts_with("(async () => {\n"));
        let b = candidates("const x = 1;\nreturn x;");
        assert!(!b.looks_like_expression);
        assert!(b.body.starts_with("(async () => {const x = 1;\n"));
    }
}
