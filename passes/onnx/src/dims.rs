//! Dimensions between ONNX and the IR: `dim_value` is a static size, a non-empty `dim_param` a
//! size known by name (`batch`), and a dimension with neither is `?`.

use irpass_ir::Dim;

use crate::proto::TensorShapeProto;
use crate::proto::tensor_shape_proto::Dimension;
use crate::proto::tensor_shape_proto::dimension::Value;

/// The IR's dimension of an ONNX one; a negative `dim_value` (not a size) is the error.
pub(crate) fn dim_of(d: &Dimension) -> Result<Dim, i64> {
    match &d.value {
        Some(Value::DimValue(v)) if *v < 0 => Err(*v),
        Some(Value::DimValue(v)) => Ok(Dim::Static(*v)),
        Some(Value::DimParam(p)) if !p.is_empty() => Ok(Dim::named(p)),
        _ => Ok(Dim::Any),
    }
}

/// The ONNX dimension of an IR one.
pub(crate) fn dimension(d: Dim) -> Dimension {
    Dimension {
        value: match d {
            Dim::Static(v) => Some(Value::DimValue(v)),
            Dim::Named(s) => Some(Value::DimParam(s.as_str().to_string())),
            Dim::Any => None,
        },
        ..Dimension::default()
    }
}

/// `target` as the shape input of a `Reshape` of a tensor of shape `input`: each static size
/// as itself, a size that is not static as 0 (the input's size at the same position) where
/// `copy` allows it and the input has that name there (`batch`) or `copied(i)` says position
/// `i` holds the input's own size there, else as -1 — `None` when more than one -1 would be
/// needed.
pub(crate) fn reshape_codes(
    input: &[Dim],
    target: &[Dim],
    copy: bool,
    copied: impl Fn(usize) -> bool,
) -> Option<Vec<i64>> {
    let codes: Vec<i64> = target
        .iter()
        .enumerate()
        .map(|(i, &d)| match d {
            Dim::Static(v) => v,
            Dim::Named(_) if copy && input.get(i) == Some(&d) => 0,
            _ if copy && copied(i) => 0,
            _ => -1,
        })
        .collect();
    (codes.iter().filter(|&&c| c == -1).count() <= 1).then_some(codes)
}

/// `dims` in brackets, as [`read_dims`] reads them: `[2,batch,?]` (a name that is not a word
/// quoted as the text format quotes it).
pub(crate) fn dims_text(dims: &[Dim]) -> String {
    let dims: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(","))
}

/// The dimensions in brackets at the start of `text` (`[2,batch,?]`, `[]` for a scalar), and
/// the text after them.
pub(crate) fn read_dims(text: &str) -> Result<(Vec<Dim>, &str), String> {
    let mut rest = text
        .strip_prefix('[')
        .ok_or_else(|| format!("`{text}` does not start with `[`"))?;
    let mut dims = Vec::new();
    if let Some(after) = rest.strip_prefix(']') {
        return Ok((dims, after));
    }
    loop {
        let (dim, after) = read_dim(rest)?;
        dims.push(dim);
        if let Some(after) = after.strip_prefix(',') {
            rest = after;
        } else if let Some(after) = after.strip_prefix(']') {
            return Ok((dims, after));
        } else {
            return Err(format!("`{after}`: expected `,` or `]` in a shape"));
        }
    }
}

/// The dimensions of an ONNX shape (a dimension that is not a size or a name is `?`).
pub(crate) fn dims_of(shape: &TensorShapeProto) -> Vec<Dim> {
    shape
        .dim
        .iter()
        .map(|d| dim_of(d).unwrap_or(Dim::Any))
        .collect()
}

/// One dimension at the start of `text` (`3`, `?`, `batch` or `"2*seq"`), and the text after.
pub(crate) fn read_dim(text: &str) -> Result<(Dim, &str), String> {
    if let Some(after) = text.strip_prefix('?') {
        return Ok((Dim::Any, after));
    }
    if let Some(quoted) = text.strip_prefix('"') {
        let mut name = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' if !name.is_empty() => return Ok((Dim::named(&name), &quoted[i + 1..])),
                '\\' => match chars.next() {
                    Some((_, 'n')) => name.push('\n'),
                    Some((_, 't')) => name.push('\t'),
                    Some((_, c)) => name.push(c),
                    None => break,
                },
                c => name.push(c),
            }
        }
        return Err(format!("`{text}` is not a quoted dimension name"));
    }
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (word, after) = text.split_at(end);
    let dim = if word.bytes().all(|b| b.is_ascii_digit()) {
        word.parse::<i64>().ok().map(Dim::Static)
    } else if word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        Some(Dim::named(word))
    } else {
        None
    };
    dim.map(|d| (d, after))
        .ok_or_else(|| format!("`{text}` does not start with a dimension"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_names_and_unknowns_round_trip() {
        for d in [Dim::Static(3), Dim::named("batch"), Dim::Any] {
            assert_eq!(dim_of(&dimension(d)), Ok(d));
        }
        let empty_name = Dimension {
            value: Some(Value::DimParam(String::new())),
            ..Dimension::default()
        };
        assert_eq!(dim_of(&empty_name), Ok(Dim::Any));
        let negative = Dimension {
            value: Some(Value::DimValue(-1)),
            ..Dimension::default()
        };
        assert_eq!(dim_of(&negative), Err(-1));
    }
}
