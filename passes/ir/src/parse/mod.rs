//! The parser of the text format (Relay's, v0.0.5, plus inline tensor literals).

mod lexer;
mod parser;

use std::sync::Arc;

use super::Module;
use super::error::{ErrorKind, IrError, Source};

/// Parses a module; errors carry the source for rendering.
pub fn parse_module(name: &str, text: &str) -> Result<Module, IrError> {
    let source = Arc::new(Source {
        name: name.to_string(),
        text: text.to_string(),
    });
    let tokens = lexer::lex(text).map_err(|(msg, span)| {
        IrError::new(ErrorKind::Parse, msg, Some(span)).with_source(Some(source.clone()))
    })?;
    let module = super::expr::with_stack(|| parser::Parser::new(&tokens).module())
        .map_err(|e| e.with_source(Some(source.clone())))?;
    Ok(module.with_source(source))
}
