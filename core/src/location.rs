//! Where a registered item (pass, analysis, instrument, config key) is defined.

use std::fmt;

/// Where a registered item is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// `module_path!()` at the definition (crate and module).
    pub module_path: &'static str,
    /// `file!()` at the definition.
    pub file: &'static str,
    /// `line!()` at the definition.
    pub line: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}:{})", self.module_path, self.file, self.line)
    }
}

/// The [`Location`] of the macro call site.
#[macro_export]
#[doc(hidden)]
macro_rules! __location {
    () => {
        $crate::__private::Location {
            module_path: module_path!(),
            file: file!(),
            line: line!(),
        }
    };
}
