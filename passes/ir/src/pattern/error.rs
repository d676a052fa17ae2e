//! The errors of patterns and rules.

use std::fmt;

use crate::Span;
use crate::error::{ErrorKind, IrError};

/// A pattern, template or rule that cannot be used: a syntax error (with where in the text),
/// an operator no operator has, a replacement that uses a hole the pattern does not bind, a
/// replacement that does not build, or a rule set that does not converge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError {
    /// What is wrong.
    pub message: String,
    /// Where in `text`, when the error is in a text.
    pub span: Option<Span>,
    /// The text the span is in.
    pub text: Option<String>,
}

impl PatternError {
    /// An error without a place.
    pub fn new(message: impl Into<String>) -> PatternError {
        PatternError {
            message: message.into(),
            span: None,
            text: None,
        }
    }

    /// An error at `span` of `text`.
    pub fn at(message: impl Into<String>, span: Span, text: &str) -> PatternError {
        PatternError {
            message: message.into(),
            span: Some(span),
            text: Some(text.to_string()),
        }
    }

    /// The same error, its message prefixed with `context` (the rule it is in, say).
    pub fn context(mut self, context: &str) -> PatternError {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// The byte range of the error in its text, when it has one.
    pub fn range(&self) -> Option<std::ops::Range<usize>> {
        self.span.map(|s| s.start as usize..s.end as usize)
    }
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let (Some(span), Some(text)) = (self.span, &self.text) {
            // The text, and a caret line under the offending part.
            let start = (span.start as usize).min(text.len());
            let end = (span.end as usize).clamp(start, text.len());
            let width = text[start..end].chars().count().max(1);
            let pad = text[..start].chars().count();
            write!(f, "\n  {text}\n  {}{}", " ".repeat(pad), "^".repeat(width))?;
        }
        Ok(())
    }
}

impl std::error::Error for PatternError {}

impl From<PatternError> for IrError {
    fn from(e: PatternError) -> IrError {
        IrError::new(ErrorKind::Parse, e.to_string(), None)
    }
}
