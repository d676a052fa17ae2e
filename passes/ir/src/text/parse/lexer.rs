//! Tokens of the text format, with byte spans. Comments (`//`, nested `/* */`) are skipped.

use crate::Span;

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok<'a> {
    /// `%name` (a variable) or `%0` (a graph binding): the text after `%`.
    Local(&'a str),
    /// `@name`.
    Global(&'a str),
    /// A name: keyword, op name (`nn.conv2d`, dots included), dtype, attribute name.
    Ident(&'a str),
    /// A number: its text (without sign) and suffix (`f`, `f64`, `i64`, ...).
    Number { text: &'a str, suffix: &'a str },
    /// A string literal's value.
    Str(String),
    /// Punctuation: `( ) [ ] { } , ; : = . + - * / < > <= >= == != -> # ? _ |` (`?` and `|` are
    /// the pattern language's, [`crate::pattern`]).
    Punct(&'static str),
    /// End of input.
    Eof,
}

impl Tok<'_> {
    /// How the token is shown in messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Local(n) => format!("`%{n}`"),
            Tok::Global(n) => format!("`@{n}`"),
            Tok::Ident(n) => format!("`{n}`"),
            Tok::Number { text, suffix } => format!("`{text}{suffix}`"),
            Tok::Str(s) => format!("the string {:?}", s),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "the end of the input".to_string(),
        }
    }
}

/// A lexing error: message and span.
pub type LexError = (String, Span);

/// Two-character punctuation, tried before [`PUNCT1`].
const PUNCT2: [&str; 5] = ["->", "<=", ">=", "==", "!="];

/// One-character punctuation.
const PUNCT1: &str = "()[]{},;:=.+-*/<>#?_|";

/// The punctuation `rest` starts with, if any (the longest).
fn punct(rest: &[u8]) -> Option<&'static str> {
    let first = *rest.first()?;
    if b"-<>=!".contains(&first)
        && let Some(p) = PUNCT2.iter().find(|p| rest.starts_with(p.as_bytes()))
    {
        return Some(p);
    }
    let k = PUNCT1.bytes().position(|b| b == first)?;
    Some(&PUNCT1[k..k + 1])
}

/// Tokens made on demand: the parser pulls them one at a time, so lexing costs no memory
/// beyond the text (a token vector took ~48 bytes a token, about 24 times the input).
pub struct Lexer<'a> {
    text: &'a str,
    i: usize,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Lexer { text, i: 0 }
    }

    /// The next token; [`Tok::Eof`] at the end (and again on every call after it).
    pub fn next_token(&mut self) -> Result<(Tok<'a>, Span), LexError> {
        let text = self.text;
        let bytes = text.as_bytes();
        let n = bytes.len();
        let mut i = self.i;
        let result = loop {
            if i >= n {
                break Ok((Tok::Eof, Span::new(n, n)));
            }
            let c = bytes[i];
            if c.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
                while i < n && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
                let start = i;
                let mut depth = 0;
                while i < n {
                    if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                if depth != 0 {
                    break Err((
                        "this `/*` comment is never closed with `*/`".into(),
                        Span::new(start, start + 2),
                    ));
                }
                continue;
            }
            break token(text, i).map(|(tok, end)| {
                let span = Span::new(i, end);
                i = end;
                (tok, span)
            });
        };
        self.i = i;
        result
    }
}

/// Splits `text` into tokens (all of them; the parser pulls them from a [`Lexer`] instead).
#[cfg(test)]
pub fn lex(text: &str) -> Result<Vec<(Tok<'_>, Span)>, LexError> {
    let mut lexer = Lexer::new(text);
    let mut out = Vec::new();
    loop {
        let (tok, span) = lexer.next_token()?;
        let end = tok == Tok::Eof;
        out.push((tok, span));
        if end {
            return Ok(out);
        }
    }
}

/// The token that starts at byte `start` (not whitespace or a comment), and where it ends.
fn token(text: &str, start: usize) -> Result<(Tok<'_>, usize), LexError> {
    let bytes = text.as_bytes();
    let c = bytes[start];
    if c == b'%' || c == b'@' {
        return name(text, start);
    }
    if c.is_ascii_alphabetic()
        || (c == b'_'
            && bytes
                .get(start + 1)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_'))
    {
        return Ok(word(text, start));
    }
    if c.is_ascii_digit() {
        return Ok(number(text, start));
    }
    if c == b'"' {
        return string(text, start);
    }
    match punct(&bytes[start..]) {
        Some(p) => Ok((Tok::Punct(p), start + p.len())),
        None => {
            let ch = text[start..].chars().next().unwrap_or('?');
            Err((
                format!("unexpected character `{ch}`"),
                Span::new(start, start + ch.len_utf8()),
            ))
        }
    }
}

/// `%name` or `@name`.
fn name(text: &str, start: usize) -> Result<(Tok<'_>, usize), LexError> {
    let bytes = text.as_bytes();
    let c = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    let name = &text[start + 1..i];
    if name.is_empty() {
        return Err((
            format!("expected a name after `{}`", c as char),
            Span::new(start, start + 1),
        ));
    }
    let tok = if c == b'%' {
        Tok::Local(name)
    } else {
        Tok::Global(name)
    };
    Ok((tok, i))
}

/// A word: letters, digits, `_`, and dots followed by a letter (`nn.conv2d`).
fn word(text: &str, start: usize) -> (Tok<'_>, usize) {
    let bytes = text.as_bytes();
    let mut i = start;
    while i < bytes.len() {
        let b = bytes[i];
        let dotted = b == b'.' && bytes.get(i + 1).is_some_and(|b| b.is_ascii_alphabetic());
        if b.is_ascii_alphanumeric() || b == b'_' || dotted {
            i += 1;
        } else {
            break;
        }
    }
    (Tok::Ident(&text[start..i]), i)
}

/// A number: digits, a fraction when a digit follows the dot, an exponent, then a suffix
/// (`f`, `i64`, ...).
fn number(text: &str, start: usize) -> (Tok<'_>, usize) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let digits = |mut i: usize| {
        while i < n && bytes[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = digits(start);
    // A fraction only when a digit follows the dot (`%1.0` stays a projection because `%1`
    // is lexed as a local).
    if i < n && bytes[i] == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i = digits(i + 1);
    }
    if i < n && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < n && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < n && bytes[j].is_ascii_digit() {
            i = digits(j);
        }
    }
    let num_end = i;
    while i < n && bytes[i].is_ascii_alphanumeric() {
        i += 1;
    }
    (
        Tok::Number {
            text: &text[start..num_end],
            suffix: &text[num_end..i],
        },
        i,
    )
}

/// A string in double quotes, with `\n`, `\t`, `\"` and `\\` escapes.
fn string(text: &str, start: usize) -> Result<(Tok<'_>, usize), LexError> {
    let bytes = text.as_bytes();
    let mut i = start + 1;
    let mut s = String::new();
    loop {
        match bytes.get(i) {
            None => {
                return Err((
                    "this string is never closed with `\"`".into(),
                    Span::new(start, start + 1),
                ));
            }
            Some(b'"') => return Ok((Tok::Str(s), i + 1)),
            Some(b'\\') => {
                s.push(match bytes.get(i + 1).copied() {
                    Some(b'n') => '\n',
                    Some(b't') => '\t',
                    Some(b'"') => '"',
                    Some(b'\\') => '\\',
                    _ => {
                        return Err((
                            "unknown escape in string (use \\n, \\t, \\\" or \\\\)".into(),
                            Span::new(i, i + 2),
                        ));
                    }
                });
                i += 2;
            }
            Some(_) => {
                let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
                s.push(ch);
                i += ch.len_utf8();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn puncts(text: &str) -> Vec<&'static str> {
        lex(text)
            .unwrap()
            .into_iter()
            .filter_map(|(t, _)| match t {
                Tok::Punct(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_punctuation_lexes_as_itself_and_the_longest_wins() {
        for p in PUNCT2
            .iter()
            .copied()
            .chain(PUNCT1.split("").filter(|s| !s.is_empty()))
        {
            assert_eq!(puncts(p), [p], "{p:?}");
        }
        assert_eq!(
            puncts("<=<>=>->-!=="),
            ["<=", "<", ">=", ">", "->", "-", "!=", "="]
        );
        assert_eq!(puncts("a,b;c"), [",", ";"]);
        let err = lex("add(%x) ! 1").unwrap_err();
        assert_eq!(
            (err.0.as_str(), err.1),
            ("unexpected character `!`", Span::new(8, 9))
        );
    }
}
