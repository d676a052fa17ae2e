//! The parser of the text format (Relay's, v0.0.5, plus inline tensor literals).

pub(crate) mod cursor;
mod function;
pub(crate) mod lexer;

use std::sync::Arc;

use crate::error::{ErrorKind, IrError, Source};

pub use function::ParsedFunction;

/// Parses a module's text straight into arenas ([`crate::body`]), one per function, with an
/// explicit stack of open constructs instead of recursion; errors carry the source for
/// rendering.
pub fn parse_functions(name: &str, text: &str) -> Result<Vec<ParsedFunction>, IrError> {
    let source = || {
        Arc::new(Source {
            name: name.to_string(),
            text: text.to_string(),
        })
    };
    let mut parser = function::ArenaParser::new(text);
    let parsed = parser.module();
    if let Some((msg, span)) = parser.cursor().take_lex_error() {
        return Err(IrError::new(ErrorKind::Parse, msg, Some(span)).with_source(Some(source())));
    }
    parsed.map_err(|e| e.with_source(Some(source())))
}
