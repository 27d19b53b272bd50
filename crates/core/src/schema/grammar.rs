//! The grammar of compact shapes, and a validator for it. Tests use it to
//! prove that every rendering — truncated ones included — is well formed.
//!
//! ```text
//! type      := union
//! union     := inter ( "|" inter )*
//! inter     := postfix ( "&" postfix )*
//! postfix   := primary ( "[]" )* comment*
//! primary   := keyword | string | number | object | tuple | "(" type ")"
//! keyword   := string | number | integer | boolean | null | unknown | never
//!            | true | false
//! object    := "{" ( member ( ";" member )* ";"? )? "}"
//! member    := comment | key "?"? ":" type | "[" "key" ":" "string" "]" ":" type
//! key       := identifier | string
//! tuple     := "[" ( type ( "," type )* )? "]"
//! comment   := "/*" text without "*/" "*/"
//! ```
//! Whitespace between tokens is free; strings and numbers are JSON literals.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrammarError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for GrammarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for GrammarError {}

/// Check that `text` is exactly one `type` of the grammar.
pub fn validate(text: &str) -> Result<(), GrammarError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ty()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("trailing text"));
    }
    Ok(())
}

/// The top-level member names of an object shape, in order, or `None` when
/// the text is not a single object type. Used to check key lists against
/// the rendered text.
pub fn object_members(text: &str) -> Option<Vec<(String, bool)>> {
    validate(text).ok()?;
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ws();
    let mut members = Vec::new();
    p.object(Some(&mut members)).ok()?;
    p.ws();
    (p.i == p.s.len()).then_some(members)
}

const MAX_DEPTH: usize = 256;

struct Parser<'s> {
    s: &'s [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, message: &str) -> GrammarError {
        GrammarError {
            offset: self.i,
            message: message.to_owned(),
        }
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(tok.as_bytes()) {
            self.i += tok.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &str) -> Result<(), GrammarError> {
        if self.eat(tok) {
            Ok(())
        } else {
            Err(self.err(&format!("expected `{tok}`")))
        }
    }

    fn ty(&mut self) -> Result<(), GrammarError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        self.inter()?;
        while self.eat("|") {
            self.inter()?;
        }
        self.depth -= 1;
        Ok(())
    }

    fn inter(&mut self) -> Result<(), GrammarError> {
        self.postfix()?;
        while self.eat("&") {
            self.postfix()?;
        }
        Ok(())
    }

    fn postfix(&mut self) -> Result<(), GrammarError> {
        self.primary()?;
        loop {
            if self.eat("[]") {
                continue;
            }
            if self.at_comment() {
                self.comment()?;
                continue;
            }
            return Ok(());
        }
    }

    fn at_comment(&mut self) -> bool {
        self.ws();
        self.s[self.i..].starts_with(b"/*")
    }

    fn comment(&mut self) -> Result<(), GrammarError> {
        self.expect("/*")?;
        let rest = &self.s[self.i..];
        match rest.windows(2).position(|w| w == b"*/") {
            Some(end) => {
                self.i += end + 2;
                Ok(())
            }
            None => Err(self.err("unterminated comment")),
        }
    }

    fn primary(&mut self) -> Result<(), GrammarError> {
        match self.peek() {
            Some(b'{') => self.object(None),
            Some(b'[') => self.tuple(),
            Some(b'(') => {
                self.expect("(")?;
                self.ty()?;
                self.expect(")")
            }
            Some(b'"') => self.string().map(|_| ()),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_alphabetic() => {
                let word = self.ident();
                match word.as_str() {
                    "string" | "number" | "integer" | "boolean" | "null" | "unknown" | "never"
                    | "true" | "false" => Ok(()),
                    _ => Err(self.err(&format!("unknown type `{word}`"))),
                }
            }
            _ => Err(self.err("expected a type")),
        }
    }

    fn ident(&mut self) -> String {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || matches!(self.s[self.i], b'_' | b'$'))
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn string(&mut self) -> Result<String, GrammarError> {
        self.ws();
        let start = self.i;
        self.i += 1;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    let lit = std::str::from_utf8(&self.s[start..self.i])
                        .map_err(|_| self.err("invalid UTF-8 in string"))?;
                    return serde_json::from_str::<String>(lit)
                        .map_err(|_| self.err("invalid string literal"));
                }
                _ => self.i += 1,
            }
        }
        Err(self.err("unterminated string"))
    }

    fn number(&mut self) -> Result<(), GrammarError> {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && matches!(
                self.s[self.i],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
            )
        {
            self.i += 1;
        }
        let lit = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        serde_json::from_str::<serde_json::Number>(lit)
            .map(|_| ())
            .map_err(|_| self.err("invalid number literal"))
    }

    fn tuple(&mut self) -> Result<(), GrammarError> {
        self.expect("[")?;
        if self.eat("]") {
            return Ok(());
        }
        loop {
            self.ty()?;
            if self.eat("]") {
                return Ok(());
            }
            self.expect(",")?;
        }
    }

    fn object(
        &mut self,
        mut members: Option<&mut Vec<(String, bool)>>,
    ) -> Result<(), GrammarError> {
        self.expect("{")?;
        loop {
            if self.eat("}") {
                return Ok(());
            }
            if self.at_comment() {
                self.comment()?;
            } else if self.eat("[") {
                if self.ident() != "key" {
                    return Err(self.err("expected `key` in an index signature"));
                }
                self.expect(":")?;
                if self.ident() != "string" {
                    return Err(self.err("expected `string` in an index signature"));
                }
                self.expect("]")?;
                self.expect(":")?;
                self.ty()?;
            } else {
                let name = match self.peek() {
                    Some(b'"') => self.string()?,
                    Some(c) if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => self.ident(),
                    _ => return Err(self.err("expected a member")),
                };
                let optional = self.eat("?");
                self.expect(":")?;
                self.ty()?;
                if let Some(m) = members.as_deref_mut() {
                    m.push((name, !optional));
                }
            }
            if self.eat(";") {
                continue;
            }
            if self.at_comment() {
                continue;
            }
            self.expect("}")?;
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_grammar() {
        for ok in [
            "string",
            "{}",
            "{ id: string; limit?: integer /* >= 1 */ }",
            "{ /* truncated */ }",
            "{ a: string; /* truncated */ }",
            "(string | number)[]",
            "\"open\" | \"closed\" | null",
            "{ [key: string]: unknown }",
            "{ \"odd key\": [string, integer] }",
            "{ a: string } & { b: number }",
            "-1.5e3 | 2",
            "unknown[][]",
        ] {
            assert_eq!(validate(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn rejects_broken_text() {
        for bad in [
            "",
            "{ a: string",
            "{ a string }",
            "foo",
            "string |",
            "{ a: string /* open }",
            "\"unterminated",
            "[string,",
            "{ a: string } }",
            "{ [k: string]: x }",
        ] {
            assert!(validate(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn members_of_an_object() {
        let m = object_members("{ id: string; limit?: integer; \"x-y\": null }").expect("object");
        assert_eq!(
            m,
            vec![
                ("id".to_string(), true),
                ("limit".to_string(), false),
                ("x-y".to_string(), true)
            ]
        );
        assert_eq!(object_members("string | { a: string }"), None);
    }
}
