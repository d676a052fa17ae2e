//! The token cursor and the parts of the grammar that nest only as deep as a stated limit
//! (types, attribute values, literals); expressions are parsed by [`arena`], with an explicit
//! stack.

use super::lexer::{LexError, Lexer, Tok};
use crate::error::{ErrorKind, IrError};
use crate::{AttrValue, DType, Dim, Span, Symbol, Tensor, TensorType, Type};

pub(crate) type PResult<T> = Result<T, IrError>;

/// How many lists deep an attribute value may nest.
const MAX_ATTR_DEPTH: usize = 256;

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
}

pub(crate) fn err(msg: impl Into<String>, span: Span) -> IrError {
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
    pub(crate) fn pull(&mut self) -> (Tok<'t>, Span) {
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

    pub(crate) fn peek(&self) -> &Tok<'t> {
        &self.cur.0
    }

    /// The token after the current one (the only lookahead the grammar uses).
    pub(crate) fn peek_next(&self) -> &Tok<'t> {
        &self.next.0
    }

    pub(crate) fn span(&self) -> Span {
        self.cur.1
    }

    pub(crate) fn prev_end(&self) -> u32 {
        self.prev_end
    }

    pub(crate) fn since(&self, start: Span) -> Span {
        Span {
            start: start.start,
            end: self.prev_end().max(start.start),
        }
    }

    /// Consumes the current token (the end of the input stays current once reached).
    pub(crate) fn bump(&mut self) -> (Tok<'t>, Span) {
        if self.cur.0 == Tok::Eof {
            return self.cur.clone();
        }
        let pulled = self.pull();
        let next = std::mem::replace(&mut self.next, pulled);
        let t = std::mem::replace(&mut self.cur, next);
        self.prev_end = t.1.end;
        t
    }

    pub(crate) fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    pub(crate) fn is_ident(&self, name: &str) -> bool {
        matches!(self.peek(), Tok::Ident(n) if *n == name)
    }

    pub(crate) fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_punct(&mut self, p: &str, context: &str) -> PResult<Span> {
        if self.is_punct(p) {
            Ok(self.bump().1)
        } else {
            Err(err(
                format!("expected `{p}` {context}, found {}", self.peek().describe()),
                self.span(),
            ))
        }
    }

    pub(crate) fn expect_ident(&mut self, name: &str, context: &str) -> PResult<Span> {
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

    pub(crate) fn version_header(&mut self) -> PResult<()> {
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
    pub(crate) fn attr_value(&mut self) -> PResult<AttrValue> {
        self.attr_value_at(0)
    }

    /// An attribute value nested `depth` lists deep: deeper than 256 is an error, so reading
    /// one recurses a bounded number of times.
    pub(crate) fn attr_value_at(&mut self, depth: usize) -> PResult<AttrValue> {
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
    pub(crate) fn number_value(&mut self, negative: bool) -> PResult<Tensor> {
        let (text, suffix, span) = match self.bump() {
            (Tok::Number { text, suffix }, s) => (text, suffix, s),
            (t, s) => return Err(err(format!("expected a number, found {}", t.describe()), s)),
        };
        let is_float_text = text.contains(['.', 'e', 'E']);
        let dtype = match DType::of_suffix(suffix) {
            _ if suffix.is_empty() && is_float_text => DType::Float32,
            _ if suffix.is_empty() => DType::Int32,
            Some(dtype) => dtype,
            None => {
                let known: Vec<&str> = DType::ALL
                    .iter()
                    .filter_map(|d| d.suffix())
                    .map(|s| if s.is_empty() { "i32" } else { s })
                    .collect();
                return Err(err(
                    format!(
                        "unknown number suffix `{suffix}` (the suffixes are {})",
                        known.join(", ")
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
    pub(crate) fn tensor_literal_value(&mut self, ty: TensorType, start: Span) -> PResult<Tensor> {
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

    pub(crate) fn ty(&mut self) -> PResult<Type> {
        self.ty_at(0)
    }

    /// A type nested `depth` deep in the type being read: deeper than
    /// [`MAX_TYPE_DEPTH`](crate::infer::MAX_TYPE_DEPTH) is an error, so reading a type
    /// recurses a bounded number of times.
    pub(crate) fn ty_at(&mut self, depth: usize) -> PResult<Type> {
        let start = self.span();
        if depth > crate::infer::MAX_TYPE_DEPTH {
            return Err(err(
                format!(
                    "this type nests deeper than {} levels",
                    crate::infer::MAX_TYPE_DEPTH
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
            Tok::Ident("Opaque") => {
                self.bump();
                self.expect_punct("[", "after `Opaque`")?;
                let name = match self.bump() {
                    (Tok::Str(name), _) => name,
                    (t, s) => {
                        return Err(err(
                            format!(
                                "expected the opaque type's name in quotes, found {}",
                                t.describe()
                            ),
                            s,
                        ));
                    }
                };
                self.expect_punct("]", "to close `Opaque[...]`")?;
                Ok(Type::Opaque(Symbol::new(&name)))
            }
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
    pub(crate) fn tensor_type(&mut self) -> PResult<TensorType> {
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
                        (Tok::Ident(name), _) if !name.contains('.') => {
                            shape.push(Dim::named(name))
                        }
                        (Tok::Str(name), _) if !name.is_empty() => shape.push(Dim::named(&name)),
                        (t, _) => {
                            return Err(err(
                                format!(
                                    "expected a dimension (a number, a name or `?`), found {}",
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
        DType::Float64 => text.parse::<f64>().ok(),
        _ => text
            .parse::<f32>()
            .ok()
            .map(f64::from)
            .map(|v| dtype.round_float(v)),
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
