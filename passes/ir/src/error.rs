//! Errors of the reference IR (parse, type, well-formedness), rendered with the source line
//! and a caret.

use std::fmt;
use std::sync::Arc;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;

use super::Span;

/// Source text a module was parsed from.
#[derive(Debug)]
pub struct Source {
    /// A name for messages (a file name, or `<input>`).
    pub name: String,
    /// The text.
    pub text: String,
}

/// What kind of problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text does not parse.
    Parse,
    /// A program does not type-check.
    Type,
    /// A variable is unbound, bound twice, or a global is missing.
    WellFormed,
    /// Evaluation failed (a kernel's error, a wrong argument).
    Eval,
}

/// One problem: message, where, and an optional hint.
#[derive(Clone, Debug)]
pub struct Problem {
    /// What is wrong.
    pub message: String,
    /// Where (if the node came from text).
    pub span: Option<Span>,
    /// A hint or context line.
    pub note: Option<String>,
}

/// An error of the reference IR: one or more problems, renderable against the source.
#[derive(Clone, Debug)]
pub struct IrError {
    /// The kind.
    pub kind: ErrorKind,
    /// The problems, in source order.
    pub problems: Vec<Problem>,
    /// The source, when known (for rendering).
    pub source: Option<Arc<Source>>,
}

impl IrError {
    /// An error with one problem.
    pub fn new(kind: ErrorKind, message: impl Into<String>, span: Option<Span>) -> IrError {
        IrError {
            kind,
            problems: vec![Problem {
                message: message.into(),
                span,
                note: None,
            }],
            source: None,
        }
    }

    /// The same error with a note on its first problem.
    pub fn with_note(mut self, note: impl Into<String>) -> IrError {
        if let Some(p) = self.problems.first_mut() {
            p.note = Some(note.into());
        }
        self
    }

    /// The same error, to be rendered against `source`.
    pub fn with_source(mut self, source: Option<Arc<Source>>) -> IrError {
        if self.source.is_none() {
            self.source = source;
        }
        self
    }

    /// The first problem's message.
    pub fn message(&self) -> &str {
        self.problems.first().map_or("", |p| p.message.as_str())
    }

    /// The first problem's position as 1-based (line, column), if known.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        let span = self.problems.first()?.span?;
        let text = &self.source.as_ref()?.text;
        let start = (span.start as usize).min(text.len());
        let before = &text[..start];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Some((line, col))
    }

    /// The error rendered with source lines and carets (plain text, no colour).
    pub fn render(&self) -> String {
        let what = match self.kind {
            ErrorKind::Parse => "parse error",
            ErrorKind::Type => "type error",
            ErrorKind::WellFormed => "ill-formed program",
            ErrorKind::Eval => "evaluation error",
        };
        let Some(source) = &self.source else {
            return self
                .problems
                .iter()
                .map(|p| match &p.note {
                    Some(n) => format!("{what}: {}\n  = {n}\n", p.message),
                    None => format!("{what}: {}\n", p.message),
                })
                .collect();
        };
        let file = SimpleFile::new(source.name.as_str(), source.text.as_str());
        let config = term::Config::default();
        let mut out = String::new();
        for p in &self.problems {
            let mut diag = CsDiagnostic::error().with_message(format!("{what}: {}", p.message));
            if let Some(span) = p.span {
                let len = source.text.len();
                let range = span.start as usize..(span.end as usize).max(span.start as usize + 1);
                let range = range.start.min(len)..range.end.min(len);
                diag = diag.with_labels(vec![Label::primary((), range)]);
            }
            if let Some(note) = &p.note {
                diag = diag.with_notes(vec![note.clone()]);
            }
            match term::emit_into_string(&config, &file, &diag) {
                Ok(text) => out.push_str(&text),
                Err(_) => out.push_str(&format!("{what}: {}\n", p.message)),
            }
        }
        out
    }
}

impl fmt::Display for IrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.render().trim_end())
    }
}

impl std::error::Error for IrError {}
