//! The text format read straight into arenas, with an explicit stack of open constructs
//! instead of recursion: a program nested a million deep parses in a loop. The grammar, the
//! messages and the positions are those of the recursive parser (its token cursor and its
//! readers of leaves — numbers, tensor literals, types, attributes — are shared).

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

use super::cursor::{PResult, Parser, err};
use super::lexer::Tok;
use crate::body::{ArenaFunction, BodyBuilder, ClosureData, ExprId, VarId};
use crate::op::Op;
use crate::{Attrs, DType, Span, Tensor, TensorType, Type};

/// A function read from text: its arena and what surrounds it.
#[derive(Clone, Debug)]
pub struct ParsedFunction {
    /// Its name (without `@`).
    pub name: String,
    /// Its arena, parameters and result.
    pub function: ArenaFunction,
    /// The declared result type.
    pub ret_type: Option<Type>,
    /// Its attributes.
    pub attrs: Attrs,
    /// Where it was written.
    pub span: Option<Span>,
}

/// What a `%name` refers to.
#[derive(Clone, Copy)]
enum Binding {
    Var(VarId),
    Graph(ExprId),
}

/// An expression being read: its operands and the infix operators between them (precedence
/// climbing as a loop), and the minus signs before the operand being read.
struct ExprFrame {
    operands: Vec<(ExprId, Span)>,
    ops: Vec<(&'static str, u8)>,
    minuses: Vec<Span>,
    /// Where the operand being read starts (after its minus signs).
    operand_start: Span,
}

/// What a body's next expression is.
enum Pending<'t> {
    /// `%n = value;`
    Graph(&'t str),
    /// `let %v = value;`; `recursive` when the value is a `fn`, in whose scope `%v` is.
    Let {
        var: VarId,
        name: &'t str,
        start: Span,
        recursive: bool,
    },
    /// The body's result.
    Result,
}

/// A construct opened and not closed yet.
enum Frame<'t> {
    Expr(ExprFrame),
    /// `(` and the fields read so far.
    Paren {
        start: Span,
        fields: Vec<ExprId>,
    },
    /// `callee(` and the arguments read so far.
    Call {
        start: Span,
        callee: ExprId,
        args: Vec<ExprId>,
    },
    /// `op(` and the arguments read so far.
    OpCall {
        start: Span,
        op: Op,
        args: Vec<ExprId>,
    },
    /// `if (cond) { then } else { otherwise }`, with the parts read so far.
    If {
        start: Span,
        cond: Option<ExprId>,
        then: Option<ExprId>,
    },
    /// `fn (params) -> ret {`, waiting for its body; `mark` is its scope.
    Fn {
        start: Span,
        params: Vec<VarId>,
        ret_type: Option<Type>,
        attrs: Attrs,
        mark: usize,
    },
    /// `def @name(params) -> ret {`, waiting for its body.
    Def {
        start: Span,
        name: &'t str,
        params: Vec<VarId>,
        ret_type: Option<Type>,
        attrs: Attrs,
        mark: usize,
    },
    /// `{` in operand position, waiting for its body, or `(` before a `let` (Relay's
    /// `(let %a = 1; %a)`): `paren` says which closes it.
    Block {
        start: Span,
        paren: bool,
    },
    /// A body: its `let` bindings so far, and what the expression being read is.
    Body {
        lets: Vec<(VarId, ExprId)>,
        first_let: Option<Span>,
        mark: usize,
        pending: Pending<'t>,
    },
}

/// What to do next.
enum Step {
    /// Read an expression (its minus signs, then its first operand).
    Expr,
    /// Read a body's next binding or its result.
    Body,
    /// An operand's primary was read: its calls and projections, then what follows.
    Postfix(ExprId, Span),
    /// The innermost open construct receives a value.
    Deliver(ExprId),
}

/// Reads a module's functions into arenas.
pub(crate) struct ArenaParser<'t> {
    p: Parser<'t>,
    b: BodyBuilder,
    /// Each name's bindings, innermost last.
    names: FxHashMap<&'t str, Vec<Binding>>,
    /// The names bound, in order: a scope is a length of this log to return to.
    log: Vec<&'t str>,
    frames: Vec<Frame<'t>>,
}

impl<'t> ArenaParser<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        ArenaParser {
            p: Parser::new(text),
            b: BodyBuilder::new(),
            names: FxHashMap::default(),
            log: Vec::new(),
            frames: Vec::new(),
        }
    }

    /// The parser whose token stream this one reads (for its lexing error).
    pub(crate) fn cursor(&mut self) -> &mut Parser<'t> {
        &mut self.p
    }

    fn bind(&mut self, name: &'t str, b: Binding) {
        self.names.entry(name).or_default().push(b);
        self.log.push(name);
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.names.get(name).and_then(|b| b.last().copied())
    }

    /// Leaves every scope opened since `mark`.
    fn pop_scope(&mut self, mark: usize) {
        for name in self.log.drain(mark..) {
            if let Some(b) = self.names.get_mut(name) {
                b.pop();
            }
        }
    }

    pub(crate) fn module(&mut self) -> PResult<Vec<ParsedFunction>> {
        self.p.version_header()?;
        let mut funcs: Vec<ParsedFunction> = Vec::new();
        let mut defined: FxHashSet<&'t str> = FxHashSet::default();
        loop {
            match self.p.peek().clone() {
                Tok::Eof => break,
                Tok::Ident("def") => {
                    let start = self.p.bump().1;
                    let (name, name_span) = match self.p.bump() {
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
                    if !defined.insert(name) {
                        return Err(err(format!("`@{name}` is defined twice"), name_span));
                    }
                    self.b = BodyBuilder::new();
                    let (params, ret_type, attrs, mark) = self.signature()?;
                    self.frames.push(Frame::Def {
                        start,
                        name,
                        params,
                        ret_type,
                        attrs,
                        mark,
                    });
                    funcs.push(self.run()?);
                }
                Tok::Ident("METADATA") => {
                    return Err(err(
                        "a metadata section is not supported: write constants inline, e.g. `Tensor[(2), float32]{1, 2}`",
                        self.p.span(),
                    ));
                }
                other => {
                    return Err(err(
                        format!(
                            "expected `def @name(...)` at the top level, found {}",
                            other.describe()
                        ),
                        self.p.span(),
                    ));
                }
            }
        }
        Ok(funcs)
    }

    /// After `def @name` or `fn`: `(params) -> ret {`, the parameters bound in a new scope
    /// (whose mark is returned).
    fn signature(&mut self) -> PResult<(Vec<VarId>, Option<Type>, Attrs, usize)> {
        self.p.expect_punct("(", "to open the parameter list")?;
        let mark = self.log.len();
        let mut params: Vec<VarId> = Vec::new();
        let mut names: FxHashSet<&'t str> = FxHashSet::default();
        let mut attrs = Attrs::new();
        if !self.p.is_punct(")") {
            loop {
                match self.p.peek().clone() {
                    Tok::Local(name) => {
                        let pspan = self.p.bump().1;
                        if !names.insert(name) {
                            return Err(err(
                                format!("parameter `%{name}` is declared twice"),
                                pspan,
                            ));
                        }
                        let ann = if self.p.eat_punct(":") {
                            Some(self.p.ty()?)
                        } else {
                            None
                        };
                        let v = self.b.var(name, ann, Some(self.p.since(pspan)));
                        self.bind(name, Binding::Var(v));
                        params.push(v);
                    }
                    Tok::Ident(name) if matches!(self.p.peek_next(), Tok::Punct("=")) => {
                        self.p.bump();
                        self.p.bump();
                        let value = self.p.attr_value()?;
                        attrs.set(name, value);
                    }
                    other => {
                        return Err(err(
                            format!(
                                "expected a parameter like `%x: Tensor[(1), float32]` or an attribute like `Primitive=1`, found {}",
                                other.describe()
                            ),
                            self.p.span(),
                        ));
                    }
                }
                if !self.p.eat_punct(",") {
                    break;
                }
            }
        }
        self.p.expect_punct(")", "to close the parameter list")?;
        let ret = if self.p.eat_punct("->") {
            Some(self.p.ty()?)
        } else {
            None
        };
        self.p.expect_punct("{", "to open the function body")?;
        Ok((params, ret, attrs, mark))
    }

    /// Reads the body of the `def` on top of the frames, and returns the function.
    fn run(&mut self) -> PResult<ParsedFunction> {
        let mut step = self.open_body();
        loop {
            step = match step {
                Step::Expr => self.expr()?,
                Step::Body => self.body()?,
                Step::Postfix(e, start) => self.postfix(e, start)?,
                Step::Deliver(e) => match self.deliver(e)? {
                    Ok(step) => step,
                    Err(f) => return Ok(f),
                },
            };
        }
    }

    fn open_body(&mut self) -> Step {
        self.frames.push(Frame::Body {
            lets: Vec::new(),
            first_let: None,
            mark: self.log.len(),
            pending: Pending::Result,
        });
        Step::Body
    }

    fn open_expr(&mut self) -> Step {
        self.frames.push(Frame::Expr(ExprFrame {
            operands: Vec::new(),
            ops: Vec::new(),
            minuses: Vec::new(),
            operand_start: self.p.span(),
        }));
        Step::Expr
    }

    fn top_expr(&mut self) -> &mut ExprFrame {
        match self.frames.last_mut() {
            Some(Frame::Expr(f)) => f,
            _ => unreachable!("an expression is being read"),
        }
    }

    /// A body's next binding, or its result.
    fn body(&mut self) -> PResult<Step> {
        loop {
            let pending = match self.p.peek().clone() {
                Tok::Local(name) if matches!(self.p.peek_next(), Tok::Punct("=")) => {
                    let nspan = self.p.bump().1;
                    if !name.chars().all(|c| c.is_ascii_digit()) {
                        return Err(err(
                            format!(
                                "`%{name} = ...` binds a graph node, whose names are numbers (`%0 = ...`); for a named variable write `let %{name} = ...;`"
                            ),
                            nspan,
                        ));
                    }
                    self.p.bump();
                    Pending::Graph(name)
                }
                Tok::Ident("let") => {
                    let start = self.p.bump().1;
                    let (name, vspan) = match self.p.bump() {
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
                    let ann = if self.p.eat_punct(":") {
                        Some(self.p.ty()?)
                    } else {
                        None
                    };
                    self.p.expect_punct("=", "after the variable of a `let`")?;
                    let var = self.b.var(name, ann, Some(vspan));
                    // A let-bound closure may call itself: its variable is in scope in it.
                    // Any other value sees the variables bound before the `let`.
                    let recursive = matches!(self.p.peek(), Tok::Ident("fn"));
                    if recursive {
                        self.bind(name, Binding::Var(var));
                    }
                    Pending::Let {
                        var,
                        name,
                        start,
                        recursive,
                    }
                }
                Tok::Ident("free_var") => {
                    self.p.bump();
                    let (name, vspan) = match self.p.bump() {
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
                    let ann = if self.p.eat_punct(":") {
                        Some(self.p.ty()?)
                    } else {
                        None
                    };
                    self.p.eat_punct(";");
                    let v = self.b.var(name, ann, Some(vspan));
                    self.bind(name, Binding::Var(v));
                    continue;
                }
                _ => Pending::Result,
            };
            match self.frames.last_mut() {
                Some(Frame::Body { pending: p, .. }) => *p = pending,
                _ => unreachable!("a body is being read"),
            }
            return Ok(self.open_expr());
        }
    }

    /// An expression's minus signs, then its next operand's primary.
    fn expr(&mut self) -> PResult<Step> {
        let operand_start = self.p.span();
        let mut minuses = Vec::new();
        while self.p.is_punct("-") && !matches!(self.p.peek_next(), Tok::Number { .. }) {
            minuses.push(self.p.bump().1);
        }
        let f = self.top_expr();
        f.minuses = minuses;
        f.operand_start = operand_start;
        let start = self.p.span();
        self.primary(start)
    }

    fn primary(&mut self, start: Span) -> PResult<Step> {
        let value = match self.p.peek().clone() {
            Tok::Punct("-") => {
                // A `-` right before a number is its sign.
                self.p.bump();
                self.constant(start, |p| p.number_value(true))?
            }
            Tok::Local(name) => {
                self.p.bump();
                match self.lookup(name) {
                    Some(Binding::Var(v)) => self.b.use_var(v),
                    Some(Binding::Graph(e)) => e,
                    None => {
                        return Err(err(
                            format!(
                                "`%{name}` is not defined here (not a parameter, `let` or `%n = ...` binding in scope); to use a free variable declare it first: `free_var %{name}: <type>;`"
                            ),
                            start,
                        ));
                    }
                }
            }
            Tok::Global(name) => {
                self.p.bump();
                let id = self.b.global(name);
                if self.b.body().span(id).is_none() {
                    self.b.set_span(id, Some(start));
                }
                id
            }
            Tok::Punct("{") => {
                // A block `{ bindings; expr }` (how a `let` in operand position prints).
                self.p.bump();
                self.frames.push(Frame::Block {
                    start,
                    paren: false,
                });
                return Ok(self.open_body());
            }
            Tok::Number { .. } => self.constant(start, |p| p.number_value(false))?,
            Tok::Punct("(") if matches!(self.p.peek_next(), Tok::Ident("let" | "free_var")) => {
                // `(let %a = v; body)`: a body in parentheses, as Relay writes a `let` operand.
                self.p.bump();
                self.frames.push(Frame::Block { start, paren: true });
                return Ok(self.open_body());
            }
            Tok::Punct("(") => {
                self.p.bump();
                if self.p.eat_punct(")") {
                    let t = self.b.tuple(&[]);
                    self.b.set_span(t, Some(self.p.since(start)));
                    t
                } else {
                    self.frames.push(Frame::Paren {
                        start,
                        fields: Vec::new(),
                    });
                    return Ok(self.open_expr());
                }
            }
            Tok::Ident(k) => return self.word(start, k),
            other => {
                return Err(err(
                    format!("expected an expression, found {}", other.describe()),
                    start,
                ));
            }
        };
        Ok(Step::Postfix(value, start))
    }

    /// An operand that starts with a word: a boolean, `fn`, `if`, a tensor literal, or an
    /// operator call.
    fn word(&mut self, start: Span, k: &'t str) -> PResult<Step> {
        let value = match k {
            "True" | "False" => {
                self.p.bump();
                let t = Tensor::scalar(DType::Bool, if k == "True" { 1.0 } else { 0.0 });
                self.constant(start, |_| Ok(t))?
            }
            "fn" => {
                self.p.bump();
                let (params, ret_type, attrs, mark) = self.signature()?;
                self.frames.push(Frame::Fn {
                    start,
                    params,
                    ret_type,
                    attrs,
                    mark,
                });
                return Ok(self.open_body());
            }
            "if" => {
                self.p.bump();
                self.p.expect_punct("(", "after `if`")?;
                self.frames.push(Frame::If {
                    start,
                    cond: None,
                    then: None,
                });
                return Ok(self.open_expr());
            }
            "meta" => {
                return Err(err(
                    "`meta[...]` refers to a metadata section, which this text does not have: write the constant inline, e.g. `Tensor[(2, 2), float32]{1, 2, 3, 4}`",
                    start,
                ));
            }
            "Tensor" => {
                let ty = self.p.tensor_type()?;
                self.constant(start, |p| p.tensor_literal_value(ty, start))?
            }
            _ if matches!(self.p.peek_next(), Tok::Punct("{")) && DType::from_name(k).is_some() => {
                let dtype: DType = k.parse().map_err(|e: String| err(e, start))?;
                self.p.bump();
                self.constant(start, |p| {
                    p.tensor_literal_value(TensorType::scalar(dtype), start)
                })?
            }
            "let" | "free_var" => {
                return Err(err(
                    format!(
                        "`{k}` starts a binding and must come before the final expression of a body"
                    ),
                    start,
                ));
            }
            _ => {
                self.p.bump();
                let op = Op::get(k).map_err(|e| err(e, start))?;
                if !self.p.is_punct("(") {
                    return Err(err(
                        format!(
                            "expected `(` to call the operator `{k}`, found {}",
                            self.p.peek().describe()
                        ),
                        self.p.span(),
                    ));
                }
                self.p.bump();
                if self.p.is_punct(")") || self.at_attribute() {
                    return self.finish_op_call(start, op, Vec::new());
                }
                self.frames.push(Frame::OpCall {
                    start,
                    op,
                    args: Vec::new(),
                });
                return Ok(self.open_expr());
            }
        };
        Ok(Step::Postfix(value, start))
    }

    /// A constant read by `read`, written from `start`.
    fn constant(
        &mut self,
        start: Span,
        read: impl FnOnce(&mut Parser<'t>) -> PResult<Tensor>,
    ) -> PResult<ExprId> {
        let t = read(&mut self.p)?;
        let id = self.b.constant(Arc::new(t));
        self.b.set_span(id, Some(self.p.since(start)));
        Ok(id)
    }

    fn at_attribute(&self) -> bool {
        matches!(
            (self.p.peek(), self.p.peek_next()),
            (Tok::Ident(_), Tok::Punct("="))
        )
    }

    /// After an operator call's arguments: its attributes and `)`.
    fn finish_op_call(&mut self, start: Span, op: Op, args: Vec<ExprId>) -> PResult<Step> {
        let mut attrs = Attrs::new();
        if !self.p.eat_punct(")") {
            loop {
                match (self.p.peek().clone(), self.p.peek_next().clone()) {
                    (Tok::Ident(name), Tok::Punct("=")) => {
                        let nspan = self.p.bump().1;
                        self.p.bump();
                        if attrs.contains(name) {
                            return Err(err(format!("attribute `{name}` is given twice"), nspan));
                        }
                        let value = self.p.attr_value()?;
                        attrs.set(name, value);
                    }
                    _ => {
                        return Err(err(
                            "arguments come before attributes (`name=value`)",
                            self.p.span(),
                        ));
                    }
                }
                if self.p.eat_punct(")") {
                    break;
                }
                self.p.expect_punct(",", "or `)` after an argument")?;
                if self.p.eat_punct(")") {
                    break;
                }
            }
        }
        let attrs = op
            .normalize_attrs(attrs)
            .map_err(|e| err(e, self.p.since(start)))?;
        let id = self.b.call_op(op, &args, attrs);
        self.b.set_span(id, Some(self.p.since(start)));
        Ok(Step::Postfix(id, start))
    }

    /// After a primary: calls and projections, then the minus signs before it, then an infix
    /// operator (read the next operand) or the end of the expression.
    fn postfix(&mut self, mut e: ExprId, start: Span) -> PResult<Step> {
        loop {
            if self.p.is_punct("(") {
                self.p.bump();
                if self.p.eat_punct(")") {
                    e = self.b.call(e, &[]);
                    self.b.set_span(e, Some(self.p.since(start)));
                    continue;
                }
                self.check_not_attribute()?;
                self.frames.push(Frame::Call {
                    start,
                    callee: e,
                    args: Vec::new(),
                });
                return Ok(self.open_expr());
            } else if self.p.is_punct(".") {
                self.p.bump();
                let (index, ispan) = match self.p.bump() {
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
                let index: u32 = index
                    .parse()
                    .map_err(|_| err("field number too large", ispan))?;
                e = self.b.proj(e, index);
                self.b.set_span(e, Some(self.p.since(start)));
            } else {
                break;
            }
        }
        // The minus signs, innermost first.
        let minuses = std::mem::take(&mut self.top_expr().minuses);
        if let Some(&first) = minuses.first() {
            let op = Op::get("negative").map_err(|m| err(m, first))?;
            for m in minuses.into_iter().rev() {
                e = self.b.call_op(op, &[e], Attrs::new());
                self.b.set_span(e, Some(self.p.since(m)));
            }
        }
        let operand_start = self.top_expr().operand_start;
        self.top_expr().operands.push((e, operand_start));
        let (op, prec) = match self.p.peek() {
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
            _ => {
                let e = self.reduce(0)?;
                self.frames.pop();
                return Ok(Step::Deliver(e));
            }
        };
        self.reduce(prec)?;
        self.top_expr().ops.push((op, prec));
        self.p.bump();
        Ok(Step::Expr)
    }

    /// Applies the pending infix operators of precedence `min` or more (all with 0): each to
    /// the two operands before it, left to right. Returns the last operand.
    fn reduce(&mut self, min: u8) -> PResult<ExprId> {
        loop {
            let f = self.top_expr();
            match f.ops.last() {
                Some(&(op, prec)) if prec >= min.max(1) => {
                    f.ops.pop();
                    let (rhs, _) = f.operands.pop().expect("an operand after an operator");
                    let (lhs, start) = f.operands.pop().expect("an operand before an operator");
                    let op = Op::get(op).map_err(|m| err(m, start))?;
                    let e = self.b.call_op(op, &[lhs, rhs], Attrs::new());
                    self.b.set_span(e, Some(self.p.since(start)));
                    self.top_expr().operands.push((e, start));
                }
                _ => return Ok(f.operands.last().expect("an operand").0),
            }
        }
    }

    /// In a call of a function value, `name=` is an error: attributes are for operators.
    fn check_not_attribute(&mut self) -> PResult<()> {
        if self.at_attribute() {
            let nspan = self.p.bump().1;
            self.p.bump();
            return Err(err(
                "attributes (`name=value`) are for operator calls; a function call takes only arguments",
                nspan,
            ));
        }
        Ok(())
    }

    /// The innermost open construct receives value `e`: what to read next, or (`Err`) the
    /// function, when `e` was the body of the `def` being read.
    fn deliver(&mut self, e: ExprId) -> PResult<Result<Step, ParsedFunction>> {
        let step = match self.frames.last().expect("a construct is open") {
            Frame::Expr(_) => unreachable!("an expression frame is closed before delivering"),
            Frame::Paren { .. } => self.deliver_paren(e)?,
            Frame::Call { .. } => self.deliver_call(e)?,
            Frame::OpCall { .. } => self.deliver_op_call(e)?,
            Frame::If { .. } => self.deliver_if(e)?,
            Frame::Block { .. } => self.deliver_block(e)?,
            Frame::Fn { .. } => self.deliver_fn(e)?,
            Frame::Def { .. } => return self.deliver_def(e).map(Err),
            Frame::Body { .. } => self.deliver_body(e)?,
        };
        Ok(Ok(step))
    }

    /// A field of `( ... )`: the next one, or the tuple (or the parenthesised expression).
    fn deliver_paren(&mut self, e: ExprId) -> PResult<Step> {
        let Some(Frame::Paren { start, fields }) = self.frames.last_mut() else {
            unreachable!()
        };
        let start = *start;
        fields.push(e);
        if fields.len() == 1 && self.p.eat_punct(")") {
            self.frames.pop();
            return Ok(Step::Postfix(e, start));
        }
        if self.p.eat_punct(",") && !self.p.is_punct(")") {
            return Ok(self.open_expr());
        }
        self.p.expect_punct(")", "to close the tuple")?;
        let Some(Frame::Paren { fields, .. }) = self.frames.pop() else {
            unreachable!()
        };
        let t = self.b.tuple(&fields);
        self.b.set_span(t, Some(self.p.since(start)));
        Ok(Step::Postfix(t, start))
    }

    /// An argument of a function call: the next one, or the call.
    fn deliver_call(&mut self, e: ExprId) -> PResult<Step> {
        let Some(Frame::Call { start, args, .. }) = self.frames.last_mut() else {
            unreachable!()
        };
        let start = *start;
        args.push(e);
        if !self.p.eat_punct(")") {
            self.p.expect_punct(",", "or `)` after an argument")?;
            if !self.p.eat_punct(")") {
                self.check_not_attribute()?;
                return Ok(self.open_expr());
            }
        }
        let Some(Frame::Call { callee, args, .. }) = self.frames.pop() else {
            unreachable!()
        };
        let c = self.b.call(callee, &args);
        self.b.set_span(c, Some(self.p.since(start)));
        Ok(Step::Postfix(c, start))
    }

    /// An argument of an operator call: the next one, or the attributes and the call.
    fn deliver_op_call(&mut self, e: ExprId) -> PResult<Step> {
        let Some(Frame::OpCall { args, .. }) = self.frames.last_mut() else {
            unreachable!()
        };
        args.push(e);
        if !self.p.is_punct(")") {
            self.p.expect_punct(",", "or `)` after an argument")?;
            if !self.p.is_punct(")") && !self.at_attribute() {
                return Ok(self.open_expr());
            }
        }
        let Some(Frame::OpCall { start, op, args }) = self.frames.pop() else {
            unreachable!()
        };
        self.finish_op_call(start, op, args)
    }

    /// A part of `if (cond) { then } else { otherwise }`: the next one, or the `if`.
    fn deliver_if(&mut self, e: ExprId) -> PResult<Step> {
        let Some(Frame::If { cond, then, start }) = self.frames.last_mut() else {
            unreachable!()
        };
        let start = *start;
        if cond.is_none() {
            *cond = Some(e);
            self.p.expect_punct(")", "after the condition of `if`")?;
            self.p.expect_punct("{", "to open the `if` branch")?;
            return Ok(self.open_body());
        }
        if then.is_none() {
            *then = Some(e);
            self.p.expect_punct("}", "to close the `if` branch")?;
            self.p
                .expect_ident("else", "after the `if` branch (an `if` needs an `else`)")?;
            self.p.expect_punct("{", "to open the `else` branch")?;
            return Ok(self.open_body());
        }
        self.p.expect_punct("}", "to close the `else` branch")?;
        let Some(Frame::If {
            cond: Some(c),
            then: Some(t),
            ..
        }) = self.frames.pop()
        else {
            unreachable!()
        };
        let i = self.b.if_(c, t, e);
        self.b.set_span(i, Some(self.p.since(start)));
        Ok(Step::Postfix(i, start))
    }

    /// The body of a block `{ ... }` or of a parenthesised `let`.
    fn deliver_block(&mut self, e: ExprId) -> PResult<Step> {
        let Some(Frame::Block { start, paren }) = self.frames.pop() else {
            unreachable!()
        };
        if paren {
            self.p
                .expect_punct(")", "to close the parenthesised `let`")?;
        } else {
            self.p.expect_punct("}", "to close the block")?;
        }
        Ok(Step::Postfix(e, start))
    }

    /// The body of a `fn`: the closure.
    fn deliver_fn(&mut self, e: ExprId) -> PResult<Step> {
        self.p.expect_punct("}", "to close the function body")?;
        let Some(Frame::Fn {
            start,
            params,
            ret_type,
            attrs,
            mark,
        }) = self.frames.pop()
        else {
            unreachable!()
        };
        self.pop_scope(mark);
        let c = self.b.closure(ClosureData {
            params,
            ret_type,
            attrs,
            body: e,
        });
        self.b.set_span(c, Some(self.p.since(start)));
        Ok(Step::Postfix(c, start))
    }

    /// The body of a `def`: the function.
    fn deliver_def(&mut self, e: ExprId) -> PResult<ParsedFunction> {
        self.p.expect_punct("}", "to close the function body")?;
        let Some(Frame::Def {
            start,
            name,
            params,
            ret_type,
            attrs,
            mark,
        }) = self.frames.pop()
        else {
            unreachable!()
        };
        self.pop_scope(mark);
        let body = std::mem::take(&mut self.b).finish();
        Ok(ParsedFunction {
            name: name.to_string(),
            function: ArenaFunction {
                body,
                params,
                root: e,
            },
            ret_type,
            attrs,
            span: Some(self.p.since(start)),
        })
    }

    /// A binding's value (the next binding follows), or the body's result (the body is done).
    fn deliver_body(&mut self, e: ExprId) -> PResult<Step> {
        let Some(Frame::Body {
            lets,
            first_let,
            mark,
            pending,
        }) = self.frames.last_mut()
        else {
            unreachable!()
        };
        match std::mem::replace(pending, Pending::Result) {
            Pending::Graph(name) => {
                self.p.expect_punct(";", "after a binding `%n = ...`")?;
                self.bind(name, Binding::Graph(e));
                Ok(Step::Body)
            }
            Pending::Let {
                var,
                name,
                start,
                recursive,
            } => {
                lets.push((var, e));
                first_let.get_or_insert(start);
                self.p.expect_punct(";", "after the value of a `let`")?;
                // A closure's variable was bound before its value (it may call itself), and
                // that binding is the one the rest of the body sees.
                if !recursive {
                    self.bind(name, Binding::Var(var));
                }
                Ok(Step::Body)
            }
            Pending::Result => {
                let mark = *mark;
                let Some(Frame::Body {
                    lets, first_let, ..
                }) = self.frames.pop()
                else {
                    unreachable!()
                };
                self.pop_scope(mark);
                let end = self.p.prev_end();
                let value = self.b.lets(&lets, e);
                if let Some(first) = first_let {
                    self.b.set_span(
                        value,
                        Some(Span {
                            start: first.start,
                            end,
                        }),
                    );
                }
                Ok(Step::Deliver(value))
            }
        }
    }
}
