//! The typed model of a `rules!` input, parsed with syn.

use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Expr, Ident, LitStr, Token, Type, Visibility, braced};

/// Everything inside `rules! { ... }`: one or more rule sets.
pub struct Input {
    pub sets: Vec<RuleSetDef>,
}

/// `#[doc] #[pass(...)] pub static NAME: RuleSet = { rules };`
pub struct RuleSetDef {
    /// The attributes other than `#[pass]` (doc comments, `#[allow]`, ...).
    pub attrs: Vec<Attribute>,
    /// `#[pass(...)]`, when given.
    pub pass: Option<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    pub ty: Type,
    pub rules: Vec<RuleDef>,
}

/// `[once] [exclusive] name: "PATTERN" [if GUARD] => REPLACEMENT;`
pub struct RuleDef {
    pub docs: Vec<Attribute>,
    pub once: bool,
    pub exclusive: bool,
    pub name: Ident,
    pub pattern: LitStr,
    pub guard: Option<Expr>,
    pub replacement: Replacement,
}

/// A template (text) or a Rust expression (a block, a call) computing the replacement.
pub enum Replacement {
    Template(LitStr),
    Rust(Box<Expr>),
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut sets = Vec::new();
        while !input.is_empty() {
            sets.push(input.parse()?);
        }
        Ok(Input { sets })
    }
}

impl Parse for RuleSetDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut attrs = Attribute::parse_outer(input)?;
        let pass = attrs
            .iter()
            .position(|a| a.path().is_ident("pass"))
            .map(|i| attrs.remove(i));
        let vis: Visibility = input.parse()?;
        input.parse::<Token![static]>()?;
        let name: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let ty: Type = input.parse()?;
        input.parse::<Token![=]>()?;
        let body;
        braced!(body in input);
        let mut rules = Vec::new();
        while !body.is_empty() {
            rules.push(body.parse()?);
        }
        input.parse::<Token![;]>()?;
        Ok(RuleSetDef {
            attrs,
            pass,
            vis,
            name,
            ty,
            rules,
        })
    }
}

impl Parse for RuleDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let docs = Attribute::parse_outer(input)?;
        // Modifiers: words before the rule's name, each at most once.
        let (mut once, mut exclusive) = (false, false);
        while input.peek(Ident) && input.peek2(Ident) {
            let word: Ident = input.parse()?;
            let flag = match word.to_string().as_str() {
                "once" => &mut once,
                "exclusive" => &mut exclusive,
                _ => {
                    return Err(syn::Error::new(
                        word.span(),
                        format!(
                            "unknown rule modifier `{word}`: expected `once` or `exclusive` before the rule's name"
                        ),
                    ));
                }
            };
            if std::mem::replace(flag, true) {
                return Err(syn::Error::new(
                    word.span(),
                    format!("`{word}` is given twice"),
                ));
            }
        }
        let name: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let pattern: LitStr = input.parse()?;
        let guard = if input.peek(Token![if]) {
            input.parse::<Token![if]>()?;
            Some(Expr::parse_without_eager_brace(input)?)
        } else {
            None
        };
        input.parse::<Token![=>]>()?;
        let replacement = if input.peek(LitStr) {
            Replacement::Template(input.parse()?)
        } else if input.peek(Token![;]) || input.is_empty() {
            return Err(input.error(
                "expected the replacement: a template string (\"?x\") or Rust code computing an `Option<ExprId>`",
            ));
        } else {
            Replacement::Rust(Box::new(input.parse()?))
        };
        input.parse::<Token![;]>()?;
        Ok(RuleDef {
            docs,
            once,
            exclusive,
            name,
            pattern,
            guard,
            replacement,
        })
    }
}
