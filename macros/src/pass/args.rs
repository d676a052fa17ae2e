//! The arguments of `#[function_pass(...)]` / `#[module_pass(...)]`, validated.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr, Type};

use super::Kind;
use crate::args::{self, Arg};
use crate::errors::Errors;
use crate::names::is_identifier;

/// The highest `opt_level` a pass may declare (TVM's range: 0 to 4).
pub const MAX_OPT_LEVEL: u32 = 4;

/// An entry of `required` (a pass) or `preserves` (an analysis): a type, checked by rustc, or
/// a name as a string literal, looked up at run time.
pub enum Listed {
    Type(Box<Type>),
    Name(LitStr),
}

/// A required pass (a name is looked up at pipeline build time).
pub type Required = Listed;

/// A preserved analysis (a type implements `Analysis`).
pub type Preserved = Listed;

/// Validated arguments. Invalid ones are reported and replaced by defaults, so that the rest
/// of the expansion still happens and the mistake gives one error.
pub struct PassArgs {
    pub opt_level: u32,
    pub required: Vec<Required>,
    pub preserves: Vec<Preserved>,
    pub name: Option<LitStr>,
    pub krate: syn::Path,
    pub parallel: Option<bool>,
    pub ir: Option<Type>,
    /// `default`: registered, built with `Default` (impl blocks only).
    pub default: Option<Span>,
    /// `options`: registered, built from options with serde (impl blocks only).
    pub options: Option<Span>,
}

const FN_KEYS: &[&str] = &[
    "opt_level",
    "required",
    "preserves",
    "name",
    "parallel",
    "ir",
    "crate",
];
const MODULE_KEYS: &[&str] = &["opt_level", "required", "preserves", "name", "crate"];
const FN_IMPL_KEYS: &[&str] = &[
    "opt_level",
    "required",
    "preserves",
    "name",
    "parallel",
    "ir",
    "default",
    "options",
    "crate",
];
const MODULE_IMPL_KEYS: &[&str] = &[
    "opt_level",
    "required",
    "preserves",
    "name",
    "default",
    "options",
    "crate",
];

/// Parses and validates the attribute's arguments for a pass of `kind`, on a function
/// (`on_impl == false`) or on an impl block.
pub fn parse(tokens: TokenStream, kind: Kind, on_impl: bool, errors: &mut Errors) -> PassArgs {
    let mut out = PassArgs {
        opt_level: 0,
        required: Vec::new(),
        preserves: Vec::new(),
        name: None,
        krate: args::default_crate_path(),
        parallel: None,
        ir: None,
        default: None,
        options: None,
    };
    let Some(list) = args::parse_list(tokens, errors) else {
        return out;
    };
    let known = match (kind, on_impl) {
        (Kind::Function, false) => FN_KEYS,
        (Kind::Module, false) => MODULE_KEYS,
        (Kind::Function, true) => FN_IMPL_KEYS,
        (Kind::Module, true) => MODULE_IMPL_KEYS,
    };
    let what = format!(
        "`#[{}]` on {}",
        kind.attribute(),
        if on_impl {
            "an impl block"
        } else {
            "a function"
        }
    );
    let mut saw_level = false;
    let errors_before = errors.len();
    for arg in args::known_args(list, known, &what, errors) {
        match args::key_name(&arg).as_str() {
            "opt_level" => {
                saw_level = true;
                if let Some(level) = opt_level(&arg, errors) {
                    out.opt_level = level;
                }
            }
            "required" => out.required = required(&arg, errors),
            "preserves" => out.preserves = preserves(&arg, errors),
            "name" => {
                if let Some(name) = args::string_value(&arg, "name = \"FoldConstant\"", errors) {
                    if is_identifier(&name.value()) {
                        out.name = Some(name);
                    } else {
                        errors.spanned(
                            &name,
                            "a pass name is an identifier (letters, digits, `_`), so that pipelines can name it: `name = \"FoldConstant\"`",
                        );
                    }
                }
            }
            "parallel" => out.parallel = args::bool_value(&arg, errors),
            "ir" => match &arg.value {
                Some(Expr::Path(p)) => {
                    out.ir = Some(Type::Path(syn::TypePath {
                        qself: p.qself.clone(),
                        path: p.path.clone(),
                    }))
                }
                Some(other) => {
                    errors.spanned(other, "`ir` takes the IR's module type: `ir = Module`")
                }
                None => errors.at(
                    arg.key.span(),
                    "`ir` needs the IR's module type: `ir = Module`",
                ),
            },
            "default" => out.default = args::flag(&arg, errors),
            "options" => out.options = args::flag(&arg, errors),
            "crate" => {
                if let Some(path) = args::crate_path(&arg, errors) {
                    out.krate = path;
                }
            }
            _ => unreachable!("known_args only lets known keys through"),
        }
    }
    // A misspelt key already has its error ("did you mean `opt_level`?"): one mistake, one error.
    if !saw_level && errors.len() == errors_before {
        errors.at(
            Span::call_site(),
            format!(
                "missing `opt_level`: write `#[{}(opt_level = 0)]` (the lowest context opt level that runs the pass; 0 runs it always)",
                kind.attribute()
            ),
        );
    }
    out
}

fn opt_level(arg: &Arg, errors: &mut Errors) -> Option<u32> {
    let range = format!("an integer literal from 0 to {MAX_OPT_LEVEL}: `opt_level = 2`");
    match &arg.value {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        })) => match int.base10_parse::<u32>() {
            Ok(level) if level <= MAX_OPT_LEVEL => Some(level),
            _ => {
                errors.spanned(
                    int,
                    format!(
                        "`opt_level` {} is out of range: it takes {range}",
                        int.base10_digits()
                    ),
                );
                None
            }
        },
        Some(other) => {
            errors.spanned(other, format!("`opt_level` takes {range}"));
            None
        }
        None => {
            errors.at(
                arg.key.span(),
                format!("`opt_level` needs a value: {range}"),
            );
            None
        }
    }
}

/// What differs between the `required` and `preserves` lists: their key, an example, and
/// the messages for an entry that is neither a type nor a name, and for an empty name
/// (`None`: reported as not an entry).
struct ListKind {
    key: &'static str,
    example: &'static str,
    not_an_entry: &'static str,
    empty_name: Option<&'static str>,
}

fn required(arg: &Arg, errors: &mut Errors) -> Vec<Required> {
    const EXAMPLE: &str =
        "`required = [InferType, \"OtherCrate.Pass\"]` (pass types, or names as string literals)";
    listed(
        arg,
        &ListKind {
            key: "required",
            example: EXAMPLE,
            not_an_entry: "not a pass: an entry of `required` is a pass type or a pass name as a string literal",
            empty_name: Some("a required pass name cannot be empty"),
        },
        errors,
    )
}

fn preserves(arg: &Arg, errors: &mut Errors) -> Vec<Preserved> {
    const EXAMPLE: &str = "`preserves = [CallGraph, \"OtherCrate.Analysis\"]` (analysis types, or names as string literals)";
    listed(
        arg,
        &ListKind {
            key: "preserves",
            example: EXAMPLE,
            not_an_entry: "not an analysis: an entry of `preserves` is an analysis type or a non-empty name as a string literal",
            empty_name: None,
        },
        errors,
    )
}

/// A `key = [Type, "Name", ...]` list: each entry a type or a non-empty string literal, none
/// twice. Each mistake is an error on its entry; the valid entries are kept.
fn listed(arg: &Arg, kind: &ListKind, errors: &mut Errors) -> Vec<Listed> {
    let (key_name, example) = (kind.key, kind.example);
    let elems = match &arg.value {
        Some(Expr::Array(array)) => &array.elems,
        Some(other) => {
            errors.spanned(
                other,
                format!("`{key_name}` takes a list in brackets: {example}"),
            );
            return Vec::new();
        }
        None => {
            errors.at(
                arg.key.span(),
                format!("`{key_name}` needs a list: {example}"),
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for elem in elems {
        let (entry, key) = match elem {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => {
                if s.value().trim().is_empty() {
                    match kind.empty_name {
                        Some(message) => errors.spanned(s, message),
                        None => errors.spanned(s, format!("{}, e.g. {example}", kind.not_an_entry)),
                    }
                    continue;
                }
                (Listed::Name(s.clone()), s.value())
            }
            Expr::Path(p) if p.attrs.is_empty() => {
                let ty = Type::Path(syn::TypePath {
                    qself: p.qself.clone(),
                    path: p.path.clone(),
                });
                let key = quote::quote!(#ty).to_string().replace(' ', "");
                (Listed::Type(Box::new(ty)), key)
            }
            other => {
                errors.spanned(other, format!("{}, e.g. {example}", kind.not_an_entry));
                continue;
            }
        };
        if seen.contains(&key) {
            errors.at(
                elem.span(),
                format!("`{key}` is listed twice in `{key_name}`"),
            );
            continue;
        }
        seen.push(key);
        out.push(entry);
    }
    out
}
