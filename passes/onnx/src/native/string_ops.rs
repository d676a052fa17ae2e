//! The operators on tensors of strings ([`crate::strings`]): `StringConcat`, `StringSplit`,
//! `RegexFullMatch`, `StringNormalizer`, and `Equal` of two tensors of strings. A tensor of
//! strings is an opaque value; what they give of numbers (a `StringSplit`'s counts, a
//! match's booleans) is an IR tensor.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, broadcast_concrete, broadcast_shapes};
use irpass_ir::{DType, Dim, Tensor, Type, Value};
use ndarray::{ArrayD, IxDyn};

use super::{Args, attr, native};
use crate::strings::{Strings, dims_of};

native! {
    /// ONNX `StringConcat`: the strings of the two inputs joined element by element
    /// (broadcast).
    "StringConcat" {
        versions: &[20],
        attrs: [],
        value_rel: broadcast_strings,
        value_kernel: concat,
    }
}

native! {
    /// ONNX `Equal` of two tensors of strings (broadcast): whether the strings are the same.
    /// (`Equal` of numbers is the IR's `equal`.)
    "Equal" {
        versions: &[19],
        attrs: [],
        value_rel: equal_rel,
        value_kernel: equal,
    }
}

native! {
    /// ONNX `StringSplit`: each string split at `delimiter` (at runs of whitespace when it is
    /// empty), at most `maxsplit` times; the parts along a new last axis, padded with empty
    /// strings to the most any string has, and the number of parts of each.
    "StringSplit" {
        versions: &[20],
        attrs: [
            attr("delimiter", AttrKind::Str, AttrDefault::Str("")),
            attr("maxsplit", AttrKind::OptInt, AttrDefault::Null),
        ],
        value_rel: split_rel,
        value_kernel: split,
    }
}

native! {
    /// ONNX `RegexFullMatch`: whether each string matches `pattern` (RE2's syntax, which the
    /// `regex` crate reads) as a whole.
    "RegexFullMatch" {
        versions: &[20],
        attrs: [attr("pattern", AttrKind::Str, AttrDefault::Required)],
        value_rel: match_rel,
        value_kernel: full_match,
    }
}

native! {
    /// ONNX `StringNormalizer`: the strings of a vector (or a 1×C matrix) less the
    /// `stopwords` (compared ignoring case unless `is_case_sensitive`), each then changed to
    /// `case_change_action`'s case (`LOWER`, `UPPER`, `NONE`); one empty string where none
    /// is left.
    "StringNormalizer" {
        versions: &[10],
        attrs: [
            attr("case_change_action", AttrKind::Str, AttrDefault::Str("NONE")),
            attr("is_case_sensitive", AttrKind::Int, AttrDefault::Int(0)),
            attr("locale", AttrKind::Str, AttrDefault::Str("")),
            attr("stopwords", AttrKind::Strs, AttrDefault::Strs(&[])),
        ],
        value_rel: normalizer_rel,
        value_kernel: normalize,
    }
}

/// The dimensions of input `i`, a tensor of strings.
fn dims(a: &Args<'_, Type>, i: usize) -> Result<Vec<Dim>, String> {
    let t = a.get(i)?;
    dims_of(t).ok_or_else(|| {
        format!(
            "`{}`: input {i} is {t}, not a tensor of strings of known rank",
            a.op()
        )
    })
}

/// Input `i`, a tensor of strings.
fn strings<'a>(a: &Args<'a, Value>, i: usize) -> Result<&'a Strings, String> {
    Strings::of_value(a.get(i)?, &format!("`{}`: input {i}", a.op()))
}

fn broadcast_strings(a: &Args<'_, Type>, _: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    let shape = broadcast_shapes(&dims(a, 0)?, &dims(a, 1)?)?;
    Ok(vec![Strings::type_of(&shape)])
}

fn equal_rel(a: &Args<'_, Type>, _: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    let shape = broadcast_shapes(&dims(a, 0)?, &dims(a, 1)?)?;
    Ok(vec![Type::with_dims(shape, DType::Bool)])
}

/// The elements of inputs 0 and 1 paired, broadcast, into an array of their broadcast shape.
fn pairwise<T>(
    a: &Args<'_, Value>,
    f: impl Fn(&String, &String) -> T,
) -> Result<ArrayD<T>, String> {
    let (x, y) = (strings(a, 0)?, strings(a, 1)?);
    let shape = broadcast_concrete(x.0.shape(), y.0.shape())?;
    let (bx, by) = (
        x.0.broadcast(IxDyn(&shape))
            .ok_or("inputs that do not broadcast")?,
        y.0.broadcast(IxDyn(&shape))
            .ok_or("inputs that do not broadcast")?,
    );
    let items = bx.iter().zip(by.iter()).map(|(p, q)| f(p, q)).collect();
    ArrayD::from_shape_vec(IxDyn(&shape), items).map_err(|e| e.to_string())
}

fn concat(a: &Args<'_, Value>, _: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let joined = pairwise(a, |p, q| format!("{p}{q}"))?;
    Ok(vec![Value::opaque(Strings(joined))])
}

fn equal(a: &Args<'_, Value>, _: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let same = pairwise(a, |p, q| p == q)?;
    Ok(vec![Value::tensor(Tensor::from_bool(same))])
}

fn split_rel(a: &Args<'_, Type>, _: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    let x = dims(a, 0)?;
    let mut parts = x.clone();
    parts.push(Dim::Any);
    Ok(vec![
        Strings::type_of(&parts),
        Type::with_dims(x, DType::Int64),
    ])
}

/// `s` split as Python's `str.split` does: at `delimiter`, or at runs of whitespace (none at
/// either end) when it is empty; at most `max` times.
fn split_one(s: &str, delimiter: &str, max: Option<usize>) -> Vec<String> {
    let max = max.unwrap_or(usize::MAX);
    if !delimiter.is_empty() {
        return s
            .splitn(max.saturating_add(1), delimiter)
            .map(str::to_string)
            .collect();
    }
    let mut parts = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        if parts.len() == max {
            parts.push(rest.to_string());
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        parts.push(rest[..end].to_string());
        rest = rest[end..].trim_start();
    }
    parts
}

fn split(a: &Args<'_, Value>, r: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let x = strings(a, 0)?;
    let delimiter = r.str("delimiter");
    let max = r
        .opt_int("maxsplit")
        .map(|m| usize::try_from(m).unwrap_or(usize::MAX));
    let each: Vec<Vec<String>> = x.0.iter().map(|s| split_one(s, &delimiter, max)).collect();
    let width = each.iter().map(Vec::len).max().unwrap_or(0);
    let counts: Vec<i64> = each.iter().map(|p| p.len() as i64).collect();
    let mut shape = x.0.shape().to_vec();
    let counts = ArrayD::from_shape_vec(IxDyn(&shape), counts).map_err(|e| e.to_string())?;
    shape.push(width);
    let padded = each
        .into_iter()
        .flat_map(|mut p| {
            p.resize(width, String::new());
            p
        })
        .collect();
    let parts = ArrayD::from_shape_vec(IxDyn(&shape), padded).map_err(|e| e.to_string())?;
    Ok(vec![
        Value::opaque(Strings(parts)),
        Value::tensor(Tensor::from_i64(DType::Int64, counts)),
    ])
}

fn match_rel(a: &Args<'_, Type>, r: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    pattern(r)?;
    Ok(vec![Type::with_dims(dims(a, 0)?, DType::Bool)])
}

/// The `pattern` attribute, anchored at both ends.
fn pattern(r: &AttrReader<'_>) -> Result<regex::Regex, String> {
    let p = r.str("pattern");
    regex::Regex::new(&format!("^(?:{p})$"))
        .map_err(|e| format!("`{}`: pattern `{p}`: {e}", r.op_name()))
}

fn full_match(a: &Args<'_, Value>, r: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let re = pattern(r)?;
    let matched = strings(a, 0)?.0.map(|s| re.is_match(s));
    Ok(vec![Value::tensor(Tensor::from_bool(matched))])
}

fn normalizer_rel(a: &Args<'_, Type>, r: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    let x = dims(a, 0)?;
    case_change(r)?;
    // The strings left: as many or fewer (one at least).
    match x.as_slice() {
        [_] => Ok(vec![Strings::type_of(&[Dim::Any])]),
        [one, _] if one.value() == Some(1) => Ok(vec![Strings::type_of(&[*one, Dim::Any])]),
        _ => Err(format!(
            "`StringNormalizer`: input of dimensions {x:?}; a vector or a 1×C matrix is expected"
        )),
    }
}

/// The case `StringNormalizer` changes the strings to: `Some(true)` upper, `Some(false)`
/// lower, `None` unchanged.
fn case_change(r: &AttrReader<'_>) -> Result<Option<bool>, String> {
    match r.str("case_change_action").as_str() {
        "NONE" => Ok(None),
        "UPPER" => Ok(Some(true)),
        "LOWER" => Ok(Some(false)),
        other => Err(format!(
            "`StringNormalizer`: case_change_action `{other}` (NONE, LOWER or UPPER)"
        )),
    }
}

fn normalize(a: &Args<'_, Value>, r: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let x = strings(a, 0)?;
    let change = case_change(r)?;
    let sensitive = r.int("is_case_sensitive") != 0;
    let key = |s: &str| match sensitive {
        true => s.to_string(),
        false => s.to_lowercase(),
    };
    let stops: Vec<String> = r.strs("stopwords").iter().map(|s| key(s)).collect();
    let mut kept: Vec<String> =
        x.0.iter()
            .filter(|s| !stops.contains(&key(s)))
            .map(|s| match change {
                Some(true) => s.to_uppercase(),
                Some(false) => s.to_lowercase(),
                None => s.clone(),
            })
            .collect();
    if kept.is_empty() {
        kept.push(String::new());
    }
    let shape = match x.0.shape() {
        [_] => vec![kept.len()],
        _ => vec![1, kept.len()],
    };
    let out = ArrayD::from_shape_vec(IxDyn(&shape), kept).map_err(|e| e.to_string())?;
    Ok(vec![Value::opaque(Strings(out))])
}

#[cfg(test)]
mod tests {
    use super::split_one;

    #[test]
    fn splitting_follows_pythons_str_split() {
        // At runs of whitespace, none at the ends, without a delimiter.
        assert_eq!(split_one("  a \t b  ", "", None), ["a", "b"]);
        assert_eq!(split_one("   ", "", None), Vec::<String>::new());
        assert_eq!(split_one("a b c", "", Some(1)), ["a", "b c"]);
        // Every delimiter splits with one; an empty string is one empty part.
        assert_eq!(split_one("a,,b", ",", None), ["a", "", "b"]);
        assert_eq!(split_one("", ",", None), [""]);
        assert_eq!(split_one("a,b,c", ",", Some(1)), ["a", "b,c"]);
        assert_eq!(split_one("a,b", ",", Some(0)), ["a,b"]);
    }
}
