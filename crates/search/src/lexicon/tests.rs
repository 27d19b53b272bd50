//! The lexicon file: the built-in one is valid; a word with contradictory
//! roles, or an entry nobody reads, is refused where it is written; an
//! extension adds and replaces entries.

use super::*;

fn parse(text: &str) -> Result<Lexicon, Vec<Diagnostic>> {
    load::entries(text).and_then(load::build)
}

fn problems(words: &str) -> Vec<String> {
    let text = format!("[words]\n{words}\n");
    match parse(&text) {
        Ok(_) => Vec::new(),
        Err(d) => d
            .iter()
            .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
            .collect(),
    }
}

#[test]
fn the_built_in_lexicon_is_valid() {
    let lex = parse(BUILTIN).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(lex.is_stop("the"));
    assert_eq!(lex.word("delete").query_op, Op::Write);
    assert_eq!(lex.word("delete").change, Some(Change::Remove));
    assert_eq!(lex.word("get").name_op, Op::Read);
    assert_eq!(lex.word("get").query_op, Op::Unknown, "\"get a new key\"");
    assert!(lex.word("slack").service);
}

#[test]
fn contradictory_roles_are_refused_at_the_entry() {
    for (entry, wanted) in [
        (
            r#"x = { verb = "read", query = "write" }"#,
            "`verb` is both sides",
        ),
        (
            r#"x = { question = true, verb = "read" }"#,
            "a question word reads by itself",
        ),
        (
            r#"x = { query = "write", before_object = "write" }"#,
            "not both",
        ),
        (
            r#"x = { stop = true, service = true }"#,
            "a function word is never scored",
        ),
        (
            r#"x = { same = "x" }
y = { same = "x", finds = "x" }"#,
            "not both",
        ),
        (
            r#"x = { change = "sideways", verb = "write" }"#,
            "`change` is one of",
        ),
        (
            r#"x = { first_word = true, verb = "write" }"#,
            "needs `change`",
        ),
        (r#"X = { stop = true }"#, "lowercase"),
        (r#""get rid" = { means = "nothing" }"#, "names a verb"),
        (
            r#""get rid" = { stop = true, means = "x" }
x = { verb = "write" }"#,
            "only `means` or `request`",
        ),
    ] {
        let got = problems(entry);
        assert!(
            got.iter()
                .any(|p| p.ends_with(wanted) || p.contains(wanted))
                && got.iter().all(|p| !p.starts_with("1:")),
            "{entry}: {got:?}"
        );
    }
}

#[test]
fn an_entry_nobody_reads_is_refused() {
    for (entry, wanted) in [
        ("x = {}", "has no role"),
        (r#"x = { same = "x" }"#, "a group of one word finds nothing"),
        (r#"x = { finds = "y" }"#, "heads none"),
        (r#"x = { same = "y" }"#, "no such word"),
        // The tokenizer reads `repo` as `repository`: a group of it would
        // never be looked up.
        (
            r#"repo = { expands = "repository", same = "repo" }
repos = { same = "repo" }"#,
            "the tokenizer makes other terms",
        ),
    ] {
        let got = problems(entry);
        assert!(got.iter().any(|p| p.contains(wanted)), "{entry}: {got:?}");
    }
    assert!(
        problems("x = { key = true }")
            .iter()
            .any(|p| p.contains("unknown field"))
    );
}

#[test]
fn groups_go_both_ways_and_aliases_one_way() {
    let lex = Lexicon::builtin();
    let syn = |t: &str| lex.name_synonyms(t).to_vec();
    // Members find each other; an alias finds the members' names.
    assert!(syn("delet").contains(&"remov".to_owned()));
    assert!(syn("remov").contains(&"delet".to_owned()));
    assert!(syn("delet").contains(&"purg".to_owned()));
    assert!(syn("purg").is_empty(), "aliases go one way");
    // Nouns work in descriptions too; verbs only in names (a description
    // names many operations besides its own).
    assert_eq!(lex.prose_synonyms("track"), ["song"]);
    assert!(lex.prose_synonyms("delet").is_empty());
    assert!(!lex.name_synonyms("trigger").is_empty());
    assert!(lex.prose_synonyms("trigger").is_empty());
}

#[test]
fn an_extension_adds_and_replaces_entries_and_is_checked_as_a_whole() {
    let lex = Lexicon::builtin();
    let extended = lex
        .extended(
            r#"[words]
zap = { verb = "write", change = "remove", same = "delete" }
show = { stop = true }
"#,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(extended.name_synonyms("delet").contains(&"zap".to_owned()));
    assert_eq!(extended.word("zap").change, Some(Change::Remove));
    // `show` replaced: a function word, no longer a read verb.
    assert_eq!(extended.word("show").query_op, Op::Unknown);
    assert_eq!(
        lex.word("show").query_op,
        Op::Read,
        "the built-in is unchanged"
    );
    // A problem is located in the extension's text.
    let err = lex
        .extended("[words]\n\nzap = { finds = \"nothing\" }\n")
        .expect_err("dangling");
    assert_eq!((err[0].line, err[0].column), (3, 1), "{err:?}");
    let err = lex.extended("[words]\nzap = {").expect_err("syntax");
    assert_eq!(err[0].line, 2, "{err:?}");
}

#[test]
fn the_documented_example_extension_is_valid() {
    let text = "[words]\ntally = { finds = \"sum\" }\ncfg = { expands = \"config\" }\n";
    let lex = Lexicon::builtin()
        .extended(text)
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(lex.expansion("cfg"), Some(&["config".to_owned()][..]));
}
