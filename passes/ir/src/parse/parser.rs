//! Recursive descent over the tokens; infix operators by precedence climbing.

use rustc_hash::FxHashMap as HashMap;
use smallvec::smallvec;
use std::sync::Arc;

use super::lexer::{LexError, Lexer, Tok};
use crate::error::{ErrorKind, IrError};
use crate::expr::Function;
use crate::expr::with_stack;
use crate::module::Module;
use crate::op::Op;
use crate::{
    Args, AttrValue, Attrs, Call, Callee, DType, Dim, Expr, ExprKind, Span, Tensor, TensorType,
    Type, Var,
};

pub(crate) mod arena;

type PResult<T> = Result<T, IrError>;

/// How many lists deep an attribute value may nest.
const MAX_ATTR_DEPTH: usize = 256;

/// What a `%name` refers to in a scope.
#[derive(Clone)]
enum Binding {
    Var(Var),
    Graph(Expr),
}

pub struct Parser<'t> {
    lexer: Lexer<'t>,
    /// The current token and the one after it (the grammar needs one token of lookahead).
    cur: (Tok<'t>, Span),
    next: (Tok<'t>, Span),
    /// Where the last consumed token ended.
    prev_end: u32,
    /// A lexing error met while pulling tokens: the token stream ends there, and the error is
    /// what the parse reports.
    lex_error: Option<LexError>,
    scopes: Vec<HashMap<&'t str, Binding>>,
}

fn err(msg: impl Into<String>, span: Span) -> IrError {
    IrError::new(ErrorKind::Parse, msg, Some(span))
}

impl<'t> Parser<'t> {
    pub fn new(text: &'t str) -> Self {
        let end = Span::new(text.len(), text.len());
        let mut p = Parser {
            lexer: Lexer::new(text),
            cur: (Tok::Eof, end),
            next: (Tok::Eof, end),
            prev_end: 0,
            lex_error: None,
            scopes: Vec::new(),
        };
        p.cur = p.pull();
        p.next = p.pull();
        p
    }

    /// The lexing error that ended the token stream, if any.
    pub fn take_lex_error(&mut self) -> Option<LexError> {
        self.lex_error.take()
    }

    /// The next token from the lexer; after a lexing error, the end of the input there.
    fn pull(&mut self) -> (Tok<'t>, Span) {
        if let Some((_, span)) = &self.lex_error {
            return (Tok::Eof, *span);
        }
        match self.lexer.next_token() {
            Ok(t) => t,
            Err(e) => {
                let span = e.1;
                self.lex_error = Some(e);
                (Tok::Eof, span)
            }
        }
    }

    fn peek(&self) -> &Tok<'t> {
        &self.cur.0
    }

    /// The token after the current one (the only lookahead the grammar uses).
    fn peek_next(&self) -> &Tok<'t> {
        &self.next.0
    }

    fn span(&self) -> Span {
        self.cur.1
    }

    fn prev_end(&self) -> u32 {
        self.prev_end
    }

    fn since(&self, start: Span) -> Span {
        Span {
            start: start.start,
            end: self.prev_end().max(start.start),
        }
    }

    /// Consumes the current token (the end of the input stays current once reached).
    fn bump(&mut self) -> (Tok<'t>, Span) {
        if self.cur.0 == Tok::Eof {
            return self.cur.clone();
        }
        let pulled = self.pull();
        let next = std::mem::replace(&mut self.next, pulled);
        let t = std::mem::replace(&mut self.cur, next);
        self.prev_end = t.1.end;
        t
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_ident(&self, name: &str) -> bool {
        matches!(self.peek(), Tok::Ident(n) if *n == name)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, p: &str, context: &str) -> PResult<Span> {
        if self.is_punct(p) {
            Ok(self.bump().1)
        } else {
            Err(err(
                format!("expected `{p}` {context}, found {}", self.peek().describe()),
                self.span(),
            ))
        }
    }

    fn expect_ident(&mut self, name: &str, context: &str) -> PResult<Span> {
        if self.is_ident(name) {
            Ok(self.bump().1)
        } else {
            Err(err(
                format!(
                    "expected `{name}` {context}, found {}",
                    self.peek().describe()
                ),
                self.span(),
            ))
        }
    }

    // ------------------------------------------------------------------ scopes

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn bind(&mut self, name: &'t str, b: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, b);
        }
    }

    // ------------------------------------------------------------------ module

    pub fn module(&mut self) -> PResult<Module> {
        self.version_header()?;
        let mut funcs: Vec<(String, Function)> = Vec::new();
        loop {
            match self.peek().clone() {
                Tok::Eof => break,
                Tok::Ident("def") => {
                    let start = self.bump().1;
                    let (name, name_span) = match self.bump() {
                        (Tok::Global(n), s) => (n, s),
                        (t, s) => {
                            return Err(err(
                                format!(
                                    "expected a global name like `@main` after `def`, found {}",
                                    t.describe()
                                ),
                                s,
                            ));
                        }
                    };
                    if funcs.iter().any(|(n, _)| *n == name) {
                        return Err(err(format!("`@{name}` is defined twice"), name_span));
                    }
                    let f = self.function_rest(start)?;
                    funcs.push((name.to_string(), f));
                }
                Tok::Ident("METADATA") => {
                    return Err(err(
                        "a metadata section is not supported: write constants inline, e.g. `Tensor[(2), float32]{1, 2}`",
                        self.span(),
                    ));
                }
                other => {
                    return Err(err(
                        format!(
                            "expected `def @name(...)` at the top level, found {}",
                            other.describe()
                        ),
                        self.span(),
                    ));
                }
            }
        }
        Ok(Module::from_functions(funcs))
    }

    fn version_header(&mut self) -> PResult<()> {
        if !self.is_punct("#") {
            return Ok(());
        }
        self.bump();
        self.expect_punct("[", "in `#[version = \"0.0.5\"]`")?;
        self.expect_ident("version", "in `#[version = \"0.0.5\"]`")?;
        self.expect_punct("=", "in `#[version = \"0.0.5\"]`")?;
        match self.bump() {
            (Tok::Str(v), s) => {
                if v != "0.0.5" {
                    return Err(err(
                        format!(
                            "version \"{v}\" is not supported; this parser reads version \"0.0.5\""
                        ),
                        s,
                    ));
                }
            }
            (t, s) => {
                return Err(err(
                    format!("expected the version as a string, found {}", t.describe()),
                    s,
                ));
            }
        }
        self.expect_punct("]", "to close `#[version = ...]`")?;
        Ok(())
    }

    /// After `def @name` or `fn`: `(params) -> ret { body }`.
    fn function_rest(&mut self, start: Span) -> PResult<Function> {
        self.expect_punct("(", "to open the parameter list")?;
        self.scopes.push(HashMap::default());
        let result = self.function_inner(start);
        self.scopes.pop();
        result
    }

    fn function_inner(&mut self, start: Span) -> PResult<Function> {
        let mut params: Vec<Var> = Vec::new();
        let mut attrs = Attrs::new();
        if !self.is_punct(")") {
            loop {
                match self.peek().clone() {
                    Tok::Local(name) => {
                        let pspan = self.bump().1;
                        if params.iter().any(|p| *p.name == *name) {
                            return Err(err(
                                format!("parameter `%{name}` is declared twice"),
                                pspan,
                            ));
                        }
                        let ann = if self.eat_punct(":") {
                            Some(self.ty()?)
                        } else {
                            None
                        };
                        let v = Var::with_span(name, ann, Some(self.since(pspan)));
                        self.bind(name, Binding::Var(v.clone()));
                        params.push(v);
                    }
                    Tok::Ident(name) if matches!(self.peek_next(), Tok::Punct("=")) => {
                        self.bump();
                        self.bump();
                        let value = self.attr_value()?;
                        attrs.set(name, value);
                    }
                    other => {
                        return Err(err(
                            format!(
                                "expected a parameter like `%x: Tensor[(1), float32]` or an attribute like `Primitive=1`, found {}",
                                other.describe()
                            ),
                            self.span(),
                        ));
                    }
                }
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect_punct(")", "to close the parameter list")?;
        let ret = if self.eat_punct("->") {
            Some(self.ty()?)
        } else {
            None
        };
        self.expect_punct("{", "to open the function body")?;
        let body = self.body()?;
        self.expect_punct("}", "to close the function body")?;
        Ok(Function::with_span(
            params,
            ret,
            body,
            attrs,
            Some(self.since(start)),
        ))
    }

    /// A sequence of bindings and a final expression, up to (not including) `}`.
    fn body(&mut self) -> PResult<Expr> {
        self.scopes.push(HashMap::default());
        let result = with_stack(|| self.body_inner());
        self.scopes.pop();
        result
    }

    fn body_inner(&mut self) -> PResult<Expr> {
        // `let`s are collected and nested at the end, so a body of a hundred thousand of them
        // does not recurse.
        let mut lets: Vec<(Var, Expr, Span)> = Vec::new();
        let result = loop {
            match self.peek().clone() {
                Tok::Local(name) if matches!(self.peek_next(), Tok::Punct("=")) => {
                    let nspan = self.bump().1;
                    if !name.chars().all(|c| c.is_ascii_digit()) {
                        return Err(err(
                            format!(
                                "`%{name} = ...` binds a graph node, whose names are numbers (`%0 = ...`); for a named variable write `let %{name} = ...;`"
                            ),
                            nspan,
                        ));
                    }
                    self.bump();
                    let value = self.expr()?;
                    self.expect_punct(";", "after a binding `%n = ...`")?;
                    self.bind(name, Binding::Graph(value));
                }
                Tok::Ident("let") => {
                    let start = self.bump().1;
                    let (name, vspan) = match self.bump() {
                        (Tok::Local(n), s) => (n, s),
                        (t, s) => {
                            return Err(err(
                                format!(
                                    "expected a variable like `%x` after `let`, found {}",
                                    t.describe()
                                ),
                                s,
                            ));
                        }
                    };
                    let ann = if self.eat_punct(":") {
                        Some(self.ty()?)
                    } else {
                        None
                    };
                    self.expect_punct("=", "after the variable of a `let`")?;
                    let var = Var::with_span(name, ann, Some(vspan));
                    // A let-bound closure may call itself: its variable is in scope in it.
                    // Any other value sees the variables bound before the `let`.
                    let recursive = matches!(self.peek(), Tok::Ident("fn"));
                    if recursive {
                        self.scopes.push(HashMap::default());
                        self.bind(name, Binding::Var(var.clone()));
                    }
                    let value = self.expr();
                    if recursive {
                        self.scopes.pop();
                    }
                    let value = value?;
                    self.expect_punct(";", "after the value of a `let`")?;
                    self.bind(name, Binding::Var(var.clone()));
                    lets.push((var, value, start));
                }
                Tok::Ident("free_var") => {
                    self.bump();
                    let (name, vspan) = match self.bump() {
                        (Tok::Local(n), s) => (n, s),
                        (t, s) => {
                            return Err(err(
                                format!(
                                    "expected a variable like `%x` after `free_var`, found {}",
                                    t.describe()
                                ),
                                s,
                            ));
                        }
                    };
                    let ann = if self.eat_punct(":") {
                        Some(self.ty()?)
                    } else {
                        None
                    };
                    self.eat_punct(";");
                    self.bind(name, Binding::Var(Var::with_span(name, ann, Some(vspan))));
                }
                _ => break self.expr()?,
            }
        };
        let end = self.prev_end();
        let span = lets.first().map(|(_, _, start)| Span {
            start: start.start,
            end,
        });
        let bindings = lets
            .into_iter()
            .map(|(var, value, _)| (var, value))
            .collect();
        Ok(Expr::lets_with_span(bindings, result, span))
    }

    // ------------------------------------------------------------------ expressions

    fn expr(&mut self) -> PResult<Expr> {
        with_stack(|| self.binary(0))
    }

    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let start = self.span();
        let mut lhs = self.unary()?;
        loop {
            let (op, prec) = match self.peek() {
                Tok::Punct("==") => ("equal", 1),
                Tok::Punct("!=") => ("not_equal", 1),
                Tok::Punct("<") => ("less", 1),
                Tok::Punct("<=") => ("less_equal", 1),
                Tok::Punct(">") => ("greater", 1),
                Tok::Punct(">=") => ("greater_equal", 1),
                Tok::Punct("+") => ("add", 2),
                Tok::Punct("-") => ("subtract", 2),
                Tok::Punct("*") => ("multiply", 3),
                Tok::Punct("/") => ("divide", 3),
                _ => break,
            };
            if prec < min_prec.max(1) {
                break;
            }
            self.bump();
            let rhs = self.binary(prec + 1)?;
            let op = Op::get(op).map_err(|e| err(e, start))?;
            lhs = Expr::with_span(
                ExprKind::Call(Call {
                    callee: Callee::Op(op),
                    args: smallvec![lhs, rhs],
                    attrs: Attrs::new(),
                }),
                Some(self.since(start)),
            );
        }
        Ok(lhs)
    }

    /// `- - … operand`: the minus signs are counted in a loop and applied innermost first,
    /// so a chain of any length does not recurse. A `-` right before a number is its sign.
    fn unary(&mut self) -> PResult<Expr> {
        let mut minuses: Vec<Span> = Vec::new();
        while self.is_punct("-") && !matches!(self.peek_next(), Tok::Number { .. }) {
            minuses.push(self.bump().1);
        }
        let mut e = if self.is_punct("-") {
            let start = self.bump().1;
            self.number(true, start)?
        } else {
            self.postfix()?
        };
        if let Some(&first) = minuses.first() {
            let op = Op::get("negative").map_err(|e| err(e, first))?;
            for start in minuses.into_iter().rev() {
                e = Expr::with_span(
                    ExprKind::Call(Call {
                        callee: Callee::Op(op),
                        args: smallvec![e],
                        attrs: Attrs::new(),
                    }),
                    Some(self.since(start)),
                );
            }
        }
        Ok(e)
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let start = self.span();
        let mut e = self.primary()?;
        loop {
            if self.is_punct("(") {
                self.bump();
                let args = self.call_args(None)?.0;
                e = Expr::with_span(
                    ExprKind::Call(Call {
                        callee: Callee::Expr(e),
                        args,
                        attrs: Attrs::new(),
                    }),
                    Some(self.since(start)),
                );
            } else if self.is_punct(".") {
                self.bump();
                let (index, ispan) = match self.bump() {
                    (Tok::Number { text, suffix }, s)
                        if suffix.is_empty() && !text.contains(['.', 'e', 'E']) =>
                    {
                        (text, s)
                    }
                    (t, s) => {
                        return Err(err(
                            format!(
                                "expected a field number after `.` (as in `%t.0`), found {}",
                                t.describe()
                            ),
                            s,
                        ));
                    }
                };
                let index: usize = index
                    .parse()
                    .map_err(|_| err("field number too large", ispan))?;
                e = Expr::with_span(ExprKind::TupleGetItem(e, index), Some(self.since(start)));
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Local(name) => {
                self.bump();
                match self.lookup(name) {
                    Some(Binding::Var(v)) => Ok(Expr::var(v)),
                    Some(Binding::Graph(e)) => Ok(e.clone()),
                    None => Err(err(
                        format!(
                            "`%{name}` is not defined here (not a parameter, `let` or `%n = ...` binding in scope); to use a free variable declare it first: `free_var %{name}: <type>;`"
                        ),
                        start,
                    )),
                }
            }
            Tok::Global(name) => {
                self.bump();
                Ok(Expr::with_span(
                    ExprKind::GlobalVar(name.to_string()),
                    Some(start),
                ))
            }
            Tok::Punct("{") => {
                // A block `{ bindings; expr }` (how a `let` in operand position prints).
                self.bump();
                let body = self.body()?;
                self.expect_punct("}", "to close the block")?;
                Ok(body)
            }
            Tok::Number { .. } => self.number(false, start),
            Tok::Punct("(") => {
                self.bump();
                if self.eat_punct(")") {
                    return Ok(Expr::with_span(
                        ExprKind::Tuple(Vec::new()),
                        Some(self.since(start)),
                    ));
                }
                let first = self.expr()?;
                if self.eat_punct(")") {
                    return Ok(first);
                }
                let mut fields = vec![first];
                while self.eat_punct(",") {
                    if self.is_punct(")") {
                        break;
                    }
                    fields.push(self.expr()?);
                }
                self.expect_punct(")", "to close the tuple")?;
                Ok(Expr::with_span(
                    ExprKind::Tuple(fields),
                    Some(self.since(start)),
                ))
            }
            Tok::Ident(k) => match k {
                "True" | "False" => {
                    self.bump();
                    let t = Tensor::scalar(DType::Bool, if k == "True" { 1.0 } else { 0.0 });
                    Ok(Expr::with_span(
                        ExprKind::Constant(Arc::new(t)),
                        Some(start),
                    ))
                }
                "fn" => {
                    self.bump();
                    let f = self.function_rest(start)?;
                    Ok(Expr::with_span(
                        ExprKind::Function(f),
                        Some(self.since(start)),
                    ))
                }
                "if" => {
                    self.bump();
                    self.expect_punct("(", "after `if`")?;
                    let cond = self.expr()?;
                    self.expect_punct(")", "after the condition of `if`")?;
                    self.expect_punct("{", "to open the `if` branch")?;
                    let then = self.body()?;
                    self.expect_punct("}", "to close the `if` branch")?;
                    self.expect_ident("else", "after the `if` branch (an `if` needs an `else`)")?;
                    self.expect_punct("{", "to open the `else` branch")?;
                    let other = self.body()?;
                    self.expect_punct("}", "to close the `else` branch")?;
                    Ok(Expr::with_span(
                        ExprKind::If(cond, then, other),
                        Some(self.since(start)),
                    ))
                }
                "meta" => Err(err(
                    "`meta[...]` refers to a metadata section, which this text does not have: write the constant inline, e.g. `Tensor[(2, 2), float32]{1, 2, 3, 4}`",
                    start,
                )),
                "Tensor" => {
                    let ty = self.tensor_type()?;
                    self.tensor_literal(ty, start)
                }
                _ if matches!(self.peek_next(), Tok::Punct("{"))
                    && DType::from_name(k).is_some() =>
                {
                    let dtype: DType = k.parse().map_err(|e: String| err(e, start))?;
                    self.bump();
                    self.tensor_literal(TensorType::scalar(dtype), start)
                }
                "let" | "free_var" => Err(err(
                    format!(
                        "`{k}` starts a binding and must come before the final expression of a body"
                    ),
                    start,
                )),
                _ => {
                    self.bump();
                    let op = Op::get(k).map_err(|e| err(e, start))?;
                    if !self.is_punct("(") {
                        return Err(err(
                            format!(
                                "expected `(` to call the operator `{k}`, found {}",
                                self.peek().describe()
                            ),
                            self.span(),
                        ));
                    }
                    self.bump();
                    let (args, attrs) = self.call_args(Some(k))?;
                    let attrs = op
                        .normalize_attrs(attrs)
                        .map_err(|e| err(e, self.since(start)))?;
                    Ok(Expr::with_span(
                        ExprKind::Call(Call {
                            callee: Callee::Op(op),
                            args,
                            attrs,
                        }),
                        Some(self.since(start)),
                    ))
                }
            },
            other => Err(err(
                format!("expected an expression, found {}", other.describe()),
                start,
            )),
        }
    }

    /// After `(`: arguments, then (operator calls) `name=value` attributes, then `)`.
    fn call_args(&mut self, op: Option<&str>) -> PResult<(Args, Attrs)> {
        let mut args = Args::new();
        let mut attrs = Attrs::new();
        if self.eat_punct(")") {
            return Ok((args, attrs));
        }
        loop {
            if let (Tok::Ident(name), Tok::Punct("=")) =
                (self.peek().clone(), self.peek_next().clone())
            {
                let nspan = self.bump().1;
                self.bump();
                if op.is_none() {
                    return Err(err(
                        "attributes (`name=value`) are for operator calls; a function call takes only arguments",
                        nspan,
                    ));
                }
                if attrs.contains(name) {
                    return Err(err(format!("attribute `{name}` is given twice"), nspan));
                }
                let value = self.attr_value()?;
                attrs.set(name, value);
            } else {
                if !attrs.is_empty() {
                    return Err(err(
                        "arguments come before attributes (`name=value`)",
                        self.span(),
                    ));
                }
                args.push(self.expr()?);
            }
            if self.eat_punct(")") {
                return Ok((args, attrs));
            }
            self.expect_punct(",", "or `)` after an argument")?;
            if self.eat_punct(")") {
                return Ok((args, attrs));
            }
        }
    }

    fn attr_value(&mut self) -> PResult<AttrValue> {
        self.attr_value_at(0)
    }

    /// An attribute value nested `depth` lists deep: deeper than 256 is an error, so reading
    /// one recurses a bounded number of times.
    fn attr_value_at(&mut self, depth: usize) -> PResult<AttrValue> {
        let start = self.span();
        if depth > MAX_ATTR_DEPTH {
            return Err(err(
                format!("this attribute value nests deeper than {MAX_ATTR_DEPTH} lists"),
                start,
            ));
        }
        match self.peek().clone() {
            Tok::Str(s) => {
                self.bump();
                Ok(AttrValue::Str(s))
            }
            Tok::Ident(k @ ("True" | "False")) => {
                self.bump();
                Ok(AttrValue::Bool(k == "True"))
            }
            Tok::Ident("None") => {
                self.bump();
                Ok(AttrValue::Null)
            }
            Tok::Ident(k) if DType::from_name(k).is_some() => {
                self.bump();
                Ok(AttrValue::Str(k.to_string()))
            }
            Tok::Punct("[") => {
                self.bump();
                let mut items = Vec::new();
                if !self.eat_punct("]") {
                    loop {
                        items.push(self.attr_value_at(depth + 1)?);
                        if self.eat_punct("]") {
                            break;
                        }
                        self.expect_punct(",", "or `]` in a list")?;
                    }
                }
                Ok(AttrValue::List(items))
            }
            Tok::Punct("-") | Tok::Number { .. } => {
                let neg = self.eat_punct("-");
                let (text, suffix, span) = match self.bump() {
                    (Tok::Number { text, suffix }, s) => (text, suffix, s),
                    (t, s) => {
                        return Err(err(
                            format!("expected a number after `-`, found {}", t.describe()),
                            s,
                        ));
                    }
                };
                let is_float = text.contains(['.', 'e', 'E']) || suffix.starts_with('f');
                if is_float {
                    let v = parse_float(DType::Float64, text, neg)
                        .ok_or_else(|| err("not a number", span))?;
                    Ok(AttrValue::Float(v))
                } else {
                    let v =
                        parse_int(text, neg).ok_or_else(|| err("integer out of range", span))?;
                    Ok(AttrValue::Int(v))
                }
            }
            other => Err(err(
                format!(
                    "expected an attribute value (number, string, True/False, None or a list), found {}",
                    other.describe()
                ),
                start,
            )),
        }
    }

    /// A scalar literal: `1f`, `2.5f64`, `3`, `-42i64`.
    fn number(&mut self, negative: bool, start: Span) -> PResult<Expr> {
        let t = self.number_value(negative)?;
        Ok(Expr::with_span(
            ExprKind::Constant(Arc::new(t)),
            Some(self.since(start)),
        ))
    }

    /// The tensor of a scalar literal (its sign, if any, already consumed).
    fn number_value(&mut self, negative: bool) -> PResult<Tensor> {
        let (text, suffix, span) = match self.bump() {
            (Tok::Number { text, suffix }, s) => (text, suffix, s),
            (t, s) => return Err(err(format!("expected a number, found {}", t.describe()), s)),
        };
        let is_float_text = text.contains(['.', 'e', 'E']);
        let dtype = match suffix {
            "" if is_float_text => DType::Float32,
            "" => DType::Int32,
            "f" | "f32" => DType::Float32,
            "f16" => DType::Float16,
            "f64" => DType::Float64,
            "i8" => DType::Int8,
            "i16" => DType::Int16,
            "i" | "i32" => DType::Int32,
            "i64" => DType::Int64,
            "u8" => DType::UInt8,
            other => {
                return Err(err(
                    format!(
                        "unknown number suffix `{other}` (use f, f16, f32, f64, i8, i16, i32, i64 or u8)"
                    ),
                    span,
                ));
            }
        };
        let full = || format!("{}{text}", if negative { "-" } else { "" });
        let t = if dtype.is_float() {
            let v = parse_float(dtype, text, negative)
                .ok_or_else(|| err(format!("`{}` is not a number", full()), span))?;
            Tensor::scalar(dtype, v)
        } else {
            if is_float_text {
                return Err(err(
                    format!("`{text}{suffix}` has a fraction or exponent but an integer suffix"),
                    span,
                ));
            }
            let v = parse_int(text, negative)
                .ok_or_else(|| err(format!("`{}` does not fit in 64 bits", full()), span))?;
            if dtype.wrap_int(v) != v {
                return Err(err(format!("`{}` does not fit in {dtype}", full()), span));
            }
            Tensor::scalar_i64(dtype, v)
        };
        Ok(t)
    }

    /// `{v, v, ...}` after a tensor type: an inline tensor literal.
    fn tensor_literal(&mut self, ty: TensorType, start: Span) -> PResult<Expr> {
        let t = self.tensor_literal_value(ty, start)?;
        Ok(Expr::with_span(
            ExprKind::Constant(Arc::new(t)),
            Some(self.since(start)),
        ))
    }

    /// The tensor of an inline tensor literal of type `ty` written from `start`.
    fn tensor_literal_value(&mut self, ty: TensorType, start: Span) -> PResult<Tensor> {
        let shape = ty.static_shape().ok_or_else(|| {
            err(
                "a tensor literal needs a static shape (no `?`)",
                self.since(start),
            )
        })?;
        self.expect_punct("{", "to open the elements of a tensor literal")?;
        // Room for the elements the type promises (bounded: the literal may be shorter than a
        // huge declared shape, which is an error reported below, not an allocation). The shape
        // is static here, so no count means it overflows.
        let n = ty.num_elements().ok_or_else(|| {
            err(
                "a tensor literal of this shape has too many elements",
                self.since(start),
            )
        })?;
        let mut values: Vec<f64> = Vec::with_capacity(n.min(1 << 16));
        let mut ints: Vec<i64> =
            Vec::with_capacity(if ty.dtype.is_int() { n.min(1 << 16) } else { 0 });
        if !self.eat_punct("}") {
            loop {
                let neg = self.eat_punct("-");
                let vspan = self.span();
                match self.bump() {
                    (Tok::Number { text, suffix }, s) => {
                        if !suffix.is_empty() {
                            return Err(err(
                                "elements of a tensor literal take no suffix: the dtype is the literal's",
                                s,
                            ));
                        }
                        // The sign is applied to the parsed value: no string per element.
                        let full = || format!("{}{text}", if neg { "-" } else { "" });
                        if ty.dtype.is_int() {
                            let v = parse_int(text, neg)
                                .ok_or_else(|| err(format!("`{}` is not an integer", full()), s))?;
                            ints.push(v);
                            values.push(v as f64);
                        } else {
                            values.push(
                                parse_float(ty.dtype, text, neg).ok_or_else(|| {
                                    err(format!("`{}` is not a number", full()), s)
                                })?,
                            );
                        }
                    }
                    (Tok::Ident(k), s) if ty.dtype.is_float() && (k == "nan" || k == "inf") => {
                        let v = if k == "nan" { f64::NAN } else { f64::INFINITY };
                        values.push(if neg { -v } else { v });
                        let _ = s;
                    }
                    (Tok::Ident(k), _) if k == "True" || k == "False" => {
                        values.push(if k == "True" { 1.0 } else { 0.0 })
                    }
                    (t, _) => {
                        return Err(err(
                            format!(
                                "expected a number in the tensor literal, found {}",
                                t.describe()
                            ),
                            vspan,
                        ));
                    }
                }
                if self.eat_punct("}") {
                    break;
                }
                self.expect_punct(",", "or `}` between tensor elements")?;
            }
        }
        if values.len() != n {
            return Err(err(
                format!(
                    "a tensor of type `{ty}` has {n} elements, the literal gives {}",
                    values.len()
                ),
                self.since(start),
            ));
        }
        let t = if ty.dtype.is_int() {
            Tensor::from_i64(
                ty.dtype,
                ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), ints)
                    .map_err(|e| err(e.to_string(), start))?,
            )
        } else {
            Tensor::from_vec(ty.dtype, &shape, values).map_err(|e| err(e, start))?
        };
        Ok(t)
    }

    // ------------------------------------------------------------------ types

    fn ty(&mut self) -> PResult<Type> {
        self.ty_at(0)
    }

    /// A type nested `depth` deep in the type being read: deeper than
    /// [`MAX_TYPE_DEPTH`](crate::arena::MAX_TYPE_DEPTH) is an error, so reading a type
    /// recurses a bounded number of times.
    fn ty_at(&mut self, depth: usize) -> PResult<Type> {
        let start = self.span();
        if depth > crate::arena::MAX_TYPE_DEPTH {
            return Err(err(
                format!(
                    "this type nests deeper than {} levels",
                    crate::arena::MAX_TYPE_DEPTH
                ),
                start,
            ));
        }
        match self.peek().clone() {
            Tok::Punct("_") => {
                self.bump();
                Ok(Type::Unknown)
            }
            Tok::Ident("Tensor") => Ok(Type::from(self.tensor_type()?)),
            Tok::Ident("fn") => {
                self.bump();
                self.expect_punct("(", "to open a function type's parameters")?;
                let mut params = Vec::new();
                if !self.eat_punct(")") {
                    loop {
                        params.push(self.ty_at(depth + 1)?);
                        if self.eat_punct(")") {
                            break;
                        }
                        self.expect_punct(",", "or `)` in a function type")?;
                    }
                }
                self.expect_punct("->", "after a function type's parameters")?;
                let ret = self.ty_at(depth + 1)?;
                Ok(Type::func(params, ret))
            }
            Tok::Ident(k) => {
                let dtype: DType = k.parse().map_err(|e: String| err(format!("expected a type: {e}, `Tensor[...]`, a tuple `(...)`, `fn (...) -> ...` or `_`"), start))?;
                self.bump();
                Ok(Type::scalar(dtype))
            }
            Tok::Punct("(") => {
                self.bump();
                let mut fields = Vec::new();
                if !self.eat_punct(")") {
                    loop {
                        fields.push(self.ty_at(depth + 1)?);
                        if self.eat_punct(")") {
                            break;
                        }
                        self.expect_punct(",", "or `)` in a tuple type")?;
                        if self.eat_punct(")") {
                            break;
                        }
                    }
                }
                Ok(Type::Tuple(fields))
            }
            other => Err(err(
                format!("expected a type, found {}", other.describe()),
                start,
            )),
        }
    }

    /// `Tensor[(d, ...), dtype]`.
    fn tensor_type(&mut self) -> PResult<TensorType> {
        self.expect_ident("Tensor", "")?;
        self.expect_punct("[", "after `Tensor`")?;
        let mut shape = Vec::new();
        if self.eat_punct("(") {
            if !self.eat_punct(")") {
                loop {
                    let s = self.span();
                    match self.bump() {
                        (Tok::Number { text, suffix }, _)
                            if suffix.is_empty() && text.chars().all(|c| c.is_ascii_digit()) =>
                        {
                            shape.push(Dim::Static(
                                text.parse().map_err(|_| err("dimension too large", s))?,
                            ));
                        }
                        (Tok::Punct("?"), _) => shape.push(Dim::Any),
                        (t, _) => {
                            return Err(err(
                                format!(
                                    "expected a dimension (a number or `?`), found {}",
                                    t.describe()
                                ),
                                s,
                            ));
                        }
                    }
                    if self.eat_punct(")") {
                        break;
                    }
                    self.expect_punct(",", "or `)` in a shape")?;
                    if self.eat_punct(")") {
                        break;
                    }
                }
            }
        } else if let Tok::Number { text, .. } = self.peek().clone() {
            // `Tensor[10, float32]`: a one-dimensional shape without parentheses.
            let s = self.bump().1;
            shape.push(Dim::Static(
                text.parse().map_err(|_| err("dimension too large", s))?,
            ));
        }
        self.expect_punct(",", "between the shape and the dtype of `Tensor[...]`")?;
        let s = self.span();
        let dtype = match self.bump() {
            (Tok::Ident(k), _) => k.parse::<DType>().map_err(|e| err(e, s))?,
            (t, _) => return Err(err(format!("expected a dtype, found {}", t.describe()), s)),
        };
        self.expect_punct("]", "to close `Tensor[...]`")?;
        Ok(TensorType { shape, dtype })
    }
}

/// Parses `text` (a number token's digits, no sign) as a float of `dtype`'s precision,
/// negated when `negative` (`nan`/`inf` handled by callers). Rounding to nearest is symmetric,
/// so negating the parsed magnitude gives the value of the signed text.
fn parse_float(dtype: DType, text: &str, negative: bool) -> Option<f64> {
    let v = match dtype {
        DType::Float16 | DType::Float32 => text
            .parse::<f32>()
            .ok()
            .map(f64::from)
            .map(|v| dtype.round_float(v)),
        _ => text.parse::<f64>().ok(),
    }?;
    Some(if negative { -v } else { v })
}

/// Parses `text` (a number token's digits, no sign) as an integer, negated when `negative`;
/// `None` when the result does not fit in 64 bits.
fn parse_int(text: &str, negative: bool) -> Option<i64> {
    let magnitude: u64 = text.parse().ok()?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}
