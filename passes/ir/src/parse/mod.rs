//! The parser of the text format (Relay's, v0.0.5, plus inline tensor literals).

mod lexer;
mod parser;

use std::sync::Arc;

use super::error::{ErrorKind, IrError, Source};
use crate::module::Module;

/// Parses a module; errors carry the source for rendering.
pub fn parse_module(name: &str, text: &str) -> Result<Module, IrError> {
    let source = Arc::new(Source {
        name: name.to_string(),
        text: text.to_string(),
    });
    // Tokens are made as the parser needs them. A lexing error ends the token stream where it
    // is; it is the error reported, whatever the parser made of the cut-off input.
    let mut parser = parser::Parser::new(text);
    let parsed = super::expr::with_stack(|| parser.module());
    if let Some((msg, span)) = parser.take_lex_error() {
        return Err(IrError::new(ErrorKind::Parse, msg, Some(span)).with_source(Some(source)));
    }
    let module = parsed.map_err(|e| e.with_source(Some(source.clone())))?;
    Ok(module.with_source(source))
}

pub use parser::arena::ParsedFunction;

/// Parses a module's text straight into arenas ([`crate::arena`]), one per function, with an
/// explicit stack of open constructs instead of recursion. The grammar, messages and positions
/// are [`Module::parse`](crate::module::Module::parse)'s; errors carry the source for rendering.
pub fn parse_functions(name: &str, text: &str) -> Result<Vec<ParsedFunction>, IrError> {
    let source = || {
        Arc::new(Source {
            name: name.to_string(),
            text: text.to_string(),
        })
    };
    let mut parser = parser::arena::ArenaParser::new(text);
    let parsed = parser.module();
    if let Some((msg, span)) = parser.cursor().take_lex_error() {
        return Err(IrError::new(ErrorKind::Parse, msg, Some(span)).with_source(Some(source())));
    }
    parsed.map_err(|e| e.with_source(Some(source())))
}
