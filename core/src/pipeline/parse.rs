//! The pipeline grammar, by recursive descent with column-accurate errors.

use std::fmt;

use super::spec::{OptionValue, PipelineSpec, Step};

/// A syntax error: the column (1-based, in characters) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineError {
    /// Where (1-based column).
    pub column: usize,
    /// What was expected, and what was found.
    pub message: String,
    /// The text, for rendering.
    pub text: String,
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "pipeline error at column {}: {}",
            self.column, self.message
        )?;
        writeln!(f, "  {}", self.text)?;
        write!(f, "  {}^", " ".repeat(self.column.saturating_sub(1)))
    }
}

impl std::error::Error for PipelineError {}

/// Parses a textual pipeline.
///
/// # Errors
/// The first syntax error, with its column.
pub fn parse(text: &str) -> Result<PipelineSpec, PipelineError> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser {
        chars: &chars,
        pos: 0,
        text,
    };
    let spec = p.pipeline(0)?;
    p.skip_ws();
    if p.pos < chars.len() {
        return Err(p.error(&format!(
            "expected `,` or the end of the pipeline, found `{}`",
            chars[p.pos]
        )));
    }
    Ok(spec)
}

struct Parser<'a> {
    chars: &'a [char],
    pos: usize,
    text: &'a str,
}

const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn error(&self, message: &str) -> PipelineError {
        PipelineError {
            column: self.pos + 1,
            message: message.to_string(),
            text: self.text.to_string(),
        }
    }

    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).copied()
    }

    fn found(&mut self) -> String {
        match self.peek() {
            Some(c) => format!("`{c}`"),
            None => "the end of the pipeline".to_string(),
        }
    }

    fn name(&mut self, what: &str) -> Result<String, PipelineError> {
        self.skip_ws();
        let start = self.pos;
        while self
            .chars
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
        {
            self.pos += 1;
        }
        if start == self.pos || self.chars[start].is_ascii_digit() {
            self.pos = start;
            let found = self.found();
            return Err(self.error(&format!("expected {what}, found {found}")));
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    fn pipeline(&mut self, depth: usize) -> Result<PipelineSpec, PipelineError> {
        if depth > MAX_DEPTH {
            return Err(self.error("pipelines nest too deeply"));
        }
        let mut steps = vec![self.step(depth)?];
        while self.peek() == Some(',') {
            self.pos += 1;
            steps.push(self.step(depth)?);
        }
        Ok(PipelineSpec(steps))
    }

    fn step(&mut self, depth: usize) -> Result<Step, PipelineError> {
        let name = self.name("a pass name")?;
        if name == crate::FIXPOINT_NAME && matches!(self.peek(), Some('(' | '<')) {
            return self.fixpoint(depth);
        }
        match self.peek() {
            Some('(') => {
                let pipeline = self.parenthesised(&name, depth)?;
                Ok(Step::Nested { name, pipeline })
            }
            Some('{') => {
                self.pos += 1;
                let mut options = Vec::new();
                if self.peek() != Some('}') {
                    loop {
                        self.skip_ws();
                        let key_start = self.pos;
                        let key = self.name("an option name")?;
                        if options.iter().any(|(k, _)| *k == key) {
                            self.pos = key_start;
                            return Err(self.error(&format!("option `{key}` is given twice")));
                        }
                        if self.peek() != Some('=') {
                            let found = self.found();
                            return Err(self.error(&format!(
                                "expected `=` after option `{key}`, found {found}"
                            )));
                        }
                        self.pos += 1;
                        let value = self.value(0)?;
                        options.push((key, value));
                        match self.peek() {
                            Some(',') => self.pos += 1,
                            Some('}') => break,
                            _ => {
                                let found = self.found();
                                return Err(self.error(&format!(
                                    "expected `,` or `}}` in the options of `{name}`, found {found}"
                                )));
                            }
                        }
                    }
                }
                self.pos += 1;
                Ok(Step::Pass {
                    name,
                    options: Some(options),
                })
            }
            _ => Ok(Step::Pass {
                name,
                options: None,
            }),
        }
    }

    /// `(a,b,...)` after `name`, at its `(`: the pipeline inside.
    fn parenthesised(&mut self, name: &str, depth: usize) -> Result<PipelineSpec, PipelineError> {
        self.pos += 1;
        let pipeline = self.pipeline(depth + 1)?;
        if self.peek() != Some(')') {
            let found = self.found();
            return Err(self.error(&format!(
                "expected `,` or `)` to close `{name}(`, found {found}"
            )));
        }
        self.pos += 1;
        Ok(pipeline)
    }

    /// The rest of `fixpoint<N>(a,b)` or `fixpoint(a,b)`, after the word.
    fn fixpoint(&mut self, depth: usize) -> Result<Step, PipelineError> {
        let mut max_rounds = None;
        if self.peek() == Some('<') {
            self.pos += 1;
            self.skip_ws();
            let start = self.pos;
            while self.chars.get(self.pos).is_some_and(char::is_ascii_digit) {
                self.pos += 1;
            }
            let digits: String = self.chars[start..self.pos].iter().collect();
            let n = digits.parse::<u32>().ok().filter(|&n| n > 0);
            if n.is_none() {
                self.pos = start;
                let found = self.found();
                return Err(self.error(&format!(
                    "expected the most rounds of `fixpoint<N>` (a whole number from 1), found {found}"
                )));
            }
            max_rounds = n;
            if self.peek() != Some('>') {
                let found = self.found();
                return Err(self.error(&format!("expected `>` after `fixpoint<N`, found {found}")));
            }
            self.pos += 1;
        }
        if self.peek() != Some('(') {
            let found = self.found();
            return Err(self.error(&format!(
                "expected `(` and the passes of `fixpoint`, found {found}"
            )));
        }
        let pipeline = self.parenthesised(crate::FIXPOINT_NAME, depth)?;
        Ok(Step::Fixpoint {
            max_rounds,
            pipeline,
        })
    }

    fn value(&mut self, depth: usize) -> Result<OptionValue, PipelineError> {
        if depth > MAX_DEPTH {
            return Err(self.error("option lists nest too deeply"));
        }
        match self.peek() {
            Some('[') => {
                self.pos += 1;
                let mut items = Vec::new();
                if self.peek() != Some(']') {
                    loop {
                        items.push(self.value(depth + 1)?);
                        match self.peek() {
                            Some(',') => self.pos += 1,
                            Some(']') => break,
                            _ => {
                                let found = self.found();
                                return Err(self.error(&format!(
                                    "expected `,` or `]` in a list, found {found}"
                                )));
                            }
                        }
                    }
                }
                self.pos += 1;
                Ok(OptionValue::List(items))
            }
            Some('"') => {
                let start = self.pos;
                self.pos += 1;
                let mut s = String::from("\"");
                loop {
                    match self.chars.get(self.pos) {
                        None => {
                            self.pos = start;
                            return Err(self.error("this string is never closed with `\"`"));
                        }
                        Some('\\') => {
                            s.push('\\');
                            if let Some(c) = self.chars.get(self.pos + 1) {
                                s.push(*c);
                            }
                            self.pos += 2;
                        }
                        Some('"') => {
                            s.push('"');
                            self.pos += 1;
                            break;
                        }
                        Some(c) => {
                            s.push(*c);
                            self.pos += 1;
                        }
                    }
                }
                let value: String = serde_json::from_str(&s).map_err(|_| {
                    let mut e = self.error("invalid escape in string");
                    e.column = start + 1;
                    e
                })?;
                Ok(OptionValue::Str(value))
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => {
                let start = self.pos;
                self.pos += 1;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
                {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                if serde_json::from_str::<serde_json::Number>(&text).is_err() {
                    self.pos = start;
                    return Err(self.error(&format!("`{text}` is not a number")));
                }
                Ok(OptionValue::Number(text))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let start = self.pos;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
                {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().collect();
                Ok(match word.as_str() {
                    "true" => OptionValue::Bool(true),
                    "false" => OptionValue::Bool(false),
                    _ => OptionValue::Str(word),
                })
            }
            _ => {
                let found = self.found();
                Err(self.error(&format!("expected a value (number, true/false, word, \"string\" or [list]), found {found}")))
            }
        }
    }
}
