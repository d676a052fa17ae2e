//! The text of patterns and templates: the IR's own call syntax, with holes.
//!
//! A **pattern**:
//!
//! | text | matches |
//! |---|---|
//! | `_` | anything |
//! | `?x` | anything, captured as `x`; every `?x` of a pattern is the same node |
//! | `p as ?x` | what `p` matches, captured as `x` |
//! | `nn.conv2d(p, q)` | a call of the operator with arguments matching `p`, `q` (`add` and `multiply` in either order) |
//! | `nn.conv2d(p, q, strides=[2, 2])` | ... whose attributes include these (defaults count) |
//! | `concatenate(..)`, `_(..)` | a call with any arguments; a call of anything |
//! | `_[TOpPattern=0](_)` | a call of an operator of this fusion kind (TVM's `K_ELEMWISE`; 1 is broadcast) |
//! | `%x`, `%_` | the variable named `x`; any variable |
//! | `const` | any constant |
//! | `1f`, `0`, `-2.5f64` | a scalar constant of exactly this dtype and value |
//! | `(p, q)`, `(..)`, `p.1`, `p._` | tuples; a projection at an index, or any |
//! | `if (c) { t } else { e }`, `let ?v = p; q` | `if`; a block of one binding |
//! | `fn (p, q) { b }`, `fn (..) { b }` | a closure |
//! | `p \| q` | `p`, or else `q` |
//! | `p : float32`, `p : [1, 3, ?]`, `p : Tensor[(2), int64]` | a dtype, a shape (`?` any extent), a type |
//! | `p [Composite="dense"]` | a match with these attributes (a closure's, a call's) |
//! | `dominates(parent, path, child)` | TVM's dominator pattern |
//!
//! A **template** (the replacement of a [`Rule`](super::Rule)) is an expression built from the
//! captures: `?x`, operator calls with attributes, scalar literals, tuples and projections
//! (`nn.batch_norm(?x, ?g, ?b, ?m, ?v).0`). An attribute's value may be a hole bound to a
//! scalar constant (`nn.batch_norm(..., epsilon=?eps)`), or the static shape or the dtype of
//! a hole's type (`zeros(shape=?x.shape, dtype=?x.dtype)`); where the hole is not such a
//! constant or its type is not known, the rule does not fire.
//!
//! ```
//! use irpass_ir::pattern::{Pattern, Template};
//! assert!(Pattern::parse("nn.relu(nn.bias_add(nn.conv2d(?x, ?w), ?b))").is_ok());
//! let e = Pattern::parse("nn.relu(?x").unwrap_err();
//! assert_eq!(e.message, "expected `,` or `)` after an argument, found the end of the input");
//! let t = Template::parse("multiply(?x, 2f)").unwrap();
//! assert_eq!(t.holes(), ["x"]);
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use super::template::{HoleProp, TNode, Template, TemplateAttr};
use super::{Pattern, PatternError, PatternKind};

// The parser's entry for templates is a method of the template (defined here, where the
// grammar is, so that the template's own file does not name the parser).
impl Template {
    /// Parses a template.
    ///
    /// # Errors
    /// A syntax error, with where it is.
    pub fn parse(text: &str) -> Result<Template, PatternError> {
        template(text)
    }
}
use crate::text::parse::cursor::Parser;
use crate::text::parse::lexer::Tok;
use crate::{Attrs, DType, Dim, Span};

/// How deep a pattern or template may nest.
const MAX_DEPTH: usize = 128;

/// Parses a pattern.
pub(crate) fn pattern(text: &str) -> Result<Pattern, PatternError> {
    let mut p = Reader::new(text);
    let out = p.pattern(0);
    p.finish(out)
}

/// Parses a template.
pub(crate) fn template(text: &str) -> Result<Template, PatternError> {
    let mut p = Reader::new(text);
    let out = p.template(0).map(|root| Template {
        text: text.to_string(),
        root,
    });
    p.finish(out)
}

/// A call's arguments and its `name = value` attributes, as written.
type CallArgs<A, V> = (Vec<A>, Vec<(String, V)>);

struct Reader<'t> {
    text: &'t str,
    p: Parser<'t>,
    names: HashMap<String, Pattern>,
}

type R<T> = Result<T, PatternError>;

impl<'t> Reader<'t> {
    fn new(text: &'t str) -> Self {
        Reader {
            text,
            p: Parser::new(text),
            names: HashMap::new(),
        }
    }

    fn finish<T>(&mut self, out: R<T>) -> R<T> {
        if let Some((msg, span)) = self.p.take_lex_error() {
            return Err(PatternError::at(msg, span, self.text));
        }
        let out = out?;
        if *self.p.peek() != Tok::Eof {
            return Err(self.error(format!(
                "expected the end of the text, found {}",
                self.p.peek().describe()
            )));
        }
        Ok(out)
    }

    fn error(&self, msg: impl Into<String>) -> PatternError {
        PatternError::at(msg, self.p.span(), self.text)
    }

    fn error_at(&self, msg: impl Into<String>, span: Span) -> PatternError {
        PatternError::at(msg, span, self.text)
    }

    /// Converts a cursor error (a bad attribute value, type or number) into ours.
    fn lift<T>(&self, r: Result<T, crate::IrError>) -> R<T> {
        r.map_err(|e| {
            let problem = &e.problems[0];
            match problem.span {
                Some(span) => self.error_at(problem.message.clone(), span),
                None => PatternError::new(problem.message.clone()),
            }
        })
    }

    fn expect(&mut self, punct: &str, context: &str) -> R<Span> {
        let r = self.p.expect_punct(punct, context);
        self.lift(r)
    }

    fn depth(&self, depth: usize) -> R<()> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("this nests deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn pattern(&mut self, depth: usize) -> R<Pattern> {
        self.depth(depth)?;
        let mut left = self.postfix(depth)?;
        while self.p.eat_punct("|") {
            let right = self.postfix(depth)?;
            left = left.or(&right);
        }
        Ok(left)
    }

    /// A hole's name after `?`.
    fn hole_name(&mut self) -> R<(String, Span)> {
        match self.p.bump() {
            (Tok::Ident(n), span) if !n.contains('.') => Ok((n.to_string(), span)),
            (t, span) => Err(self.error_at(
                format!("expected a hole's name after `?`, found {}", t.describe()),
                span,
            )),
        }
    }

    fn postfix(&mut self, depth: usize) -> R<Pattern> {
        let mut p = self.primary(depth)?;
        loop {
            if self.p.is_punct("(") {
                self.p.bump();
                p = self.call(p, depth)?;
            } else if self.p.is_punct(".") {
                self.p.bump();
                p = match self.p.bump() {
                    (Tok::Punct("_"), _) => Pattern::new(PatternKind::Proj(p, None)),
                    (Tok::Number { text, suffix: "" }, span) => {
                        let i = text.parse::<u32>().map_err(|_| {
                            self.error_at("a projection's index is a small integer", span)
                        })?;
                        Pattern::new(PatternKind::Proj(p, Some(i)))
                    }
                    (t, span) => {
                        return Err(self.error_at(
                            format!(
                                "expected a field index or `_` after `.`, found {}",
                                t.describe()
                            ),
                            span,
                        ));
                    }
                };
            } else if self.p.is_punct(":") {
                self.p.bump();
                p = self.constraint(p)?;
            } else if self.p.is_punct("[") {
                self.p.bump();
                let attrs = self.attr_list("]")?;
                p = Pattern::new(PatternKind::HasAttrs(p, attrs));
            } else if self.p.is_ident("as") {
                self.p.bump();
                self.expect("?", "after `as`")?;
                let (name, span) = self.hole_name()?;
                if self.names.contains_key(&name) {
                    return Err(self.error_at(
                        format!(
                            "`?{name}` is already bound: a hole is bound once, at its first use"
                        ),
                        span,
                    ));
                }
                let named = p.named(&name);
                self.names.insert(name, named.clone());
                p = named;
            } else {
                return Ok(p);
            }
        }
    }

    /// `name = value, ...` up to `close`.
    fn attr_list(&mut self, close: &str) -> R<Attrs> {
        let mut attrs = Attrs::new();
        if self.p.eat_punct(close) {
            return Ok(attrs);
        }
        loop {
            let name = match self.p.bump() {
                (Tok::Ident(n), _) => n.to_string(),
                (t, span) => {
                    return Err(self.error_at(
                        format!("expected an attribute name, found {}", t.describe()),
                        span,
                    ));
                }
            };
            self.expect("=", "after an attribute name")?;
            let v = self.p.attr_value();
            let v = self.lift(v)?;
            attrs.set(&name, v);
            if self.p.eat_punct(close) {
                return Ok(attrs);
            }
            self.expect(",", &format!("or `{close}` after an attribute"))?;
        }
    }

    /// After `p(`: the arguments and attributes of a call.
    fn call(&mut self, callee: Pattern, depth: usize) -> R<Pattern> {
        if self.p.is_punct(".") && matches!(self.p.peek_next(), Tok::Punct(".")) {
            self.p.bump();
            self.p.bump();
            self.expect(")", "after `..`")?;
            return Ok(callee.call_any());
        }
        let (args, given) = self.call_args(
            |r| r.pattern(depth + 1),
            |r| {
                let v = r.p.attr_value();
                r.lift(v)
            },
        )?;
        let mut attrs = Attrs::new();
        for (name, v) in given {
            attrs.set(&name, v);
        }
        // `_` (any callee) takes a call's attributes as a constraint too.
        let call = callee.call(args);
        Ok(if attrs.is_empty() {
            call
        } else {
            Pattern::new(PatternKind::HasAttrs(call, attrs))
        })
    }

    /// After `:`: a dtype, a shape or a type.
    fn constraint(&mut self, p: Pattern) -> R<Pattern> {
        if let Tok::Ident(name) = self.p.peek()
            && let Some(d) = DType::from_name(name)
        {
            self.p.bump();
            return Ok(p.has_dtype(d));
        }
        if self.p.eat_punct("[") {
            let mut dims = Vec::new();
            if !self.p.eat_punct("]") {
                loop {
                    match self.p.bump() {
                        (Tok::Punct("?"), _) => dims.push(Dim::Any),
                        (Tok::Number { text, suffix: "" }, span) => {
                            let d = text
                                .parse::<i64>()
                                .map_err(|_| self.error_at("an extent is an integer", span))?;
                            dims.push(Dim::Static(d));
                        }
                        (t, span) => {
                            return Err(self.error_at(
                                format!("expected an extent or `?`, found {}", t.describe()),
                                span,
                            ));
                        }
                    }
                    if self.p.eat_punct("]") {
                        break;
                    }
                    self.expect(",", "or `]` in a shape")?;
                }
            }
            return Ok(Pattern::new(PatternKind::HasShape(p, dims)));
        }
        let ty = self.p.ty();
        Ok(p.has_type(self.lift(ty)?))
    }

    fn primary(&mut self, depth: usize) -> R<Pattern> {
        let start = self.p.span();
        match self.p.peek().clone() {
            Tok::Punct("_") => {
                self.p.bump();
                Ok(super::wildcard())
            }
            Tok::Punct("?") => {
                self.p.bump();
                let (name, _) = self.hole_name()?;
                Ok(self
                    .names
                    .entry(name.clone())
                    .or_insert_with(|| super::wildcard().named(&name))
                    .clone())
            }
            Tok::Local(name) => {
                self.p.bump();
                if name.chars().all(|c| c.is_ascii_digit()) {
                    return Err(self.error_at(
                        format!("`%{name}` names a graph binding, which a pattern cannot refer to; write the expression"),
                        start,
                    ));
                }
                Ok(super::is_var((name != "_").then_some(name)))
            }
            Tok::Punct("-") | Tok::Number { .. } => {
                let neg = self.p.eat_punct("-");
                let t = self.p.number_value(neg);
                Ok(super::is_literal(self.lift(t)?))
            }
            Tok::Punct("(") => {
                self.p.bump();
                self.tuple_or_group(depth)
            }
            Tok::Ident("const") => {
                self.p.bump();
                Ok(super::is_constant())
            }
            Tok::Ident("if") => {
                self.p.bump();
                self.expect("(", "after `if`")?;
                let c = self.pattern(depth + 1)?;
                self.expect(")", "after the condition")?;
                self.expect("{", "before the `then` branch")?;
                let t = self.pattern(depth + 1)?;
                self.expect("}", "after the `then` branch")?;
                let r = self.p.expect_ident("else", "after the `then` branch");
                self.lift(r)?;
                self.expect("{", "before the `else` branch")?;
                let e = self.pattern(depth + 1)?;
                self.expect("}", "after the `else` branch")?;
                Ok(super::is_if(&c, &t, &e))
            }
            Tok::Ident("let") => {
                self.p.bump();
                let v = self.postfix(depth + 1)?;
                self.expect("=", "after the bound variable")?;
                let value = self.pattern(depth + 1)?;
                self.expect(";", "after the bound value")?;
                let body = self.pattern(depth + 1)?;
                Ok(super::is_let(&v, &value, &body))
            }
            Tok::Ident("fn") => {
                self.p.bump();
                self.expect("(", "after `fn`")?;
                let params = self.list(")", depth)?;
                self.expect("{", "before the closure's body")?;
                let body = self.pattern(depth + 1)?;
                self.expect("}", "after the closure's body")?;
                Ok(super::is_function(params, &body))
            }
            Tok::Ident("dominates") if matches!(self.p.peek_next(), Tok::Punct("(")) => {
                self.p.bump();
                self.p.bump();
                let parent = self.pattern(depth + 1)?;
                self.expect(",", "after the parent")?;
                let path = self.pattern(depth + 1)?;
                self.expect(",", "after the path")?;
                let child = self.pattern(depth + 1)?;
                self.expect(")", "after the child")?;
                Ok(super::dominates(&parent, &path, &child))
            }
            Tok::Ident(name) => {
                self.p.bump();
                Ok(super::is_op(name))
            }
            other => Err(self.error_at(
                format!("expected a pattern, found {}", other.describe()),
                start,
            )),
        }
    }

    /// Patterns up to `close`, or `..` for any: `None`.
    fn list(&mut self, close: &str, depth: usize) -> R<Option<Vec<Pattern>>> {
        if self.p.is_punct(".") && matches!(self.p.peek_next(), Tok::Punct(".")) {
            self.p.bump();
            self.p.bump();
            self.expect(close, "after `..`")?;
            return Ok(None);
        }
        let mut items = Vec::new();
        if self.p.eat_punct(close) {
            return Ok(Some(items));
        }
        loop {
            items.push(self.pattern(depth + 1)?);
            if self.p.eat_punct(close) {
                return Ok(Some(items));
            }
            self.expect(",", &format!("or `{close}`"))?;
        }
    }

    /// After `(`: `()`, `(..)`, `(p)`, `(p,)`, `(p, q, ...)`.
    fn tuple_or_group(&mut self, depth: usize) -> R<Pattern> {
        if self.p.is_punct(".") && matches!(self.p.peek_next(), Tok::Punct(".")) {
            self.p.bump();
            self.p.bump();
            self.expect(")", "after `..`")?;
            return Ok(super::is_tuple(None));
        }
        if self.p.eat_punct(")") {
            return Ok(super::is_tuple(Some(Vec::new())));
        }
        let first = self.pattern(depth + 1)?;
        if self.p.eat_punct(")") {
            return Ok(first);
        }
        self.expect(",", "or `)`")?;
        let mut fields = vec![first];
        if !self.p.eat_punct(")") {
            loop {
                fields.push(self.pattern(depth + 1)?);
                if self.p.eat_punct(")") {
                    break;
                }
                self.expect(",", "or `)` in a tuple")?;
            }
        }
        Ok(super::is_tuple(Some(fields)))
    }

    /// After a callee's `(`: arguments (`arg`), then `name = value` attributes (`attr` reads
    /// the value), up to `)`: what patterns and templates write alike.
    fn call_args<A, V>(
        &mut self,
        mut arg: impl FnMut(&mut Self) -> R<A>,
        mut attr: impl FnMut(&mut Self) -> R<V>,
    ) -> R<CallArgs<A, V>> {
        let mut args = Vec::new();
        let mut attrs = Vec::new();
        if self.p.eat_punct(")") {
            return Ok((args, attrs));
        }
        loop {
            if let (Tok::Ident(name), Tok::Punct("=")) = (self.p.peek(), self.p.peek_next()) {
                let name = name.to_string();
                self.p.bump();
                self.p.bump();
                attrs.push((name, attr(self)?));
            } else {
                if !attrs.is_empty() {
                    return Err(self.error("an argument after an attribute"));
                }
                args.push(arg(self)?);
            }
            if self.p.eat_punct(")") {
                return Ok((args, attrs));
            }
            self.expect(",", "or `)` after an argument")?;
        }
    }

    /// A template attribute's value: a value, or `?x`, `?x.shape`, `?x.dtype`.
    fn template_attr(&mut self) -> R<TemplateAttr> {
        let at = self.p.span();
        if !self.p.eat_punct("?") {
            let v = self.p.attr_value();
            return Ok(TemplateAttr::Value(self.lift(v)?));
        }
        // `?x`, or `?x.shape` / `?x.dtype` (one dotted name to the lexer).
        let (word, hspan) = match self.p.bump() {
            (Tok::Ident(w), span) => (w, span),
            (t, span) => {
                return Err(self.error_at(
                    format!("expected a hole's name after `?`, found {}", t.describe()),
                    span,
                ));
            }
        };
        let span = Span {
            start: at.start,
            end: hspan.end,
        };
        let (hole, prop) = match word.rsplit_once('.') {
            None => (word.to_string(), HoleProp::Value),
            Some((h, "shape")) if !h.contains('.') => (h.to_string(), HoleProp::Shape),
            Some((h, "dtype")) if !h.contains('.') => (h.to_string(), HoleProp::Dtype),
            Some(_) => {
                return Err(self.error_at(
                    format!("`?{word}`: an attribute takes a hole's value, `.shape` or `.dtype`"),
                    span,
                ));
            }
        };
        Ok(TemplateAttr::Hole(hole, prop, span))
    }

    fn template(&mut self, depth: usize) -> R<TNode> {
        self.depth(depth)?;
        let start = self.p.span();
        let mut node = match self.p.peek().clone() {
            Tok::Punct("?") => {
                self.p.bump();
                let (name, span) = self.hole_name()?;
                TNode::Hole(
                    name,
                    Span {
                        start: start.start,
                        end: span.end,
                    },
                )
            }
            Tok::Punct("-") | Tok::Number { .. } => {
                let neg = self.p.eat_punct("-");
                let t = self.p.number_value(neg);
                TNode::Literal(Arc::new(self.lift(t)?))
            }
            Tok::Punct("(") => {
                self.p.bump();
                let mut fields = Vec::new();
                let mut trailing_comma = false;
                if !self.p.eat_punct(")") {
                    loop {
                        fields.push(self.template(depth + 1)?);
                        if self.p.eat_punct(")") {
                            break;
                        }
                        self.expect(",", "or `)`")?;
                        trailing_comma = true;
                        if self.p.eat_punct(")") {
                            break;
                        }
                        trailing_comma = false;
                    }
                }
                if fields.len() == 1 && !trailing_comma {
                    fields.pop().expect("one field")
                } else {
                    TNode::Tuple(fields)
                }
            }
            Tok::Ident(name) if !matches!(name, "if" | "let" | "fn" | "const") => {
                let (_, name_span) = self.p.bump();
                self.expect("(", "after an operator's name in a replacement")?;
                self.template_call(name.to_string(), name_span, depth)?
            }
            other => {
                return Err(self.error_at(
                    format!(
                        "expected a replacement (`?hole`, an operator call, a literal or a tuple), found {}",
                        other.describe()
                    ),
                    start,
                ));
            }
        };
        while self.p.is_punct(".") {
            self.p.bump();
            match self.p.bump() {
                (Tok::Number { text, suffix: "" }, span) => {
                    let i = text.parse::<u32>().map_err(|_| {
                        self.error_at("a projection's index is a small integer", span)
                    })?;
                    node = TNode::Proj(Box::new(node), i);
                }
                (t, span) => {
                    return Err(self.error_at(
                        format!("expected a field index after `.`, found {}", t.describe()),
                        span,
                    ));
                }
            }
        }
        Ok(node)
    }

    fn template_call(&mut self, op: String, span: Span, depth: usize) -> R<TNode> {
        let (args, attrs) = self.call_args(|r| r.template(depth + 1), Self::template_attr)?;
        Ok(TNode::Call {
            op,
            span,
            args,
            attrs,
        })
    }
}
