//! Pieces of the text format shared by the printer ([`crate::text::function_text`]):
//! variable names and constants.

use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt::Write as _;
use std::rc::Rc;

use crate::Tensor;

/// The printed names of variables: `%` and the name as written, made of letters, digits and
/// `_` (a name of digits only gets a `v` in front, as `%0` would read as a graph binding), with
/// a numeric suffix when another variable has it already. One per printed function; variables
/// are numbered densely (a body's `VarId`s), so a name is found by index.
#[derive(Default)]
pub(crate) struct VarNames {
    names: Vec<Option<Rc<str>>>,
    /// The names given so far.
    used: FxHashSet<Rc<str>>,
    /// Per name as written, the suffix to try next when it is taken: every suffix below it
    /// was taken when tried (so the thousandth `%y` does not try the 999 before it).
    next_suffix: FxHashMap<String, usize>,
}

impl VarNames {
    /// Names for variables numbered below `count`.
    pub(crate) fn with_count(count: usize) -> Self {
        VarNames {
            names: vec![None; count],
            ..VarNames::default()
        }
    }

    /// The printed name of variable number `key`, written `raw`, given now if it has none.
    pub(crate) fn get(&mut self, key: usize, raw: &str) -> &str {
        if key >= self.names.len() {
            self.names.resize(key + 1, None);
        }
        if self.names[key].is_none() {
            let name = self.fresh(raw);
            self.names[key] = Some(name);
        }
        self.names[key].as_deref().expect("named above")
    }

    fn fresh(&mut self, raw: &str) -> Rc<str> {
        let mut name = String::with_capacity(raw.len() + 4);
        name.push('%');
        name.extend(raw.chars().map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        }));
        if name[1..].bytes().all(|b| b.is_ascii_digit()) {
            name.insert(1, 'v');
        }
        if self.used.contains(name.as_str()) {
            let base = name.clone();
            let mut k = self.next_suffix.get(&base).copied().unwrap_or(1);
            loop {
                name.truncate(base.len());
                let _ = write!(name, "{k}");
                k += 1;
                if !self.used.contains(name.as_str()) {
                    break;
                }
            }
            self.next_suffix.insert(base, k);
        }
        let name: Rc<str> = name.into();
        self.used.insert(name.clone());
        name
    }
}

/// The deepest indentation the printer writes: 64 levels of two spaces. A scope nested deeper
/// is indented as much as the 64th, so the text stays linear in the nesting depth (indenting
/// every level would make 10^5 nested `if`s ten gigabytes of spaces); any input nested less
/// deep prints exactly as before.
pub(crate) const MAX_INDENT: usize = 128;

/// Appends `n` spaces of indentation, at most [`MAX_INDENT`].
pub(crate) fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n.min(MAX_INDENT)));
}

/// A constant: scalars as literals (`1f`, `3`, `2i64`, `True`), others as tensor literals.
pub fn constant_text(t: &Tensor) -> String {
    let mut out = String::new();
    write_constant(t, &mut out);
    out
}

/// Appends [`constant_text`]`(t)` to `out`.
pub(crate) fn write_constant(t: &Tensor, out: &mut String) {
    if !t.shape().is_empty() {
        return t.write_literal(out);
    }
    let v = t.element_text(0);
    let finite = t.scalar_value().is_none_or(f64::is_finite);
    let Some(suffix) = t.dtype().suffix() else {
        return out.push_str(&v);
    };
    if finite {
        out.push_str(&v);
        out.push_str(suffix);
    } else {
        let _ = write!(out, "{}{{{v}}}", t.dtype());
    }
}
