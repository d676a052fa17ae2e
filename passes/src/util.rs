//! Helpers shared by the passes: attributes and constants.

use irpass_ir::{AttrValue, Attrs, Type};

/// An integer list attribute value.
pub fn ints(v: &[i64]) -> AttrValue {
    AttrValue::List(v.iter().map(|&i| AttrValue::Int(i)).collect())
}

/// The number of elements of a tensor type, or of all the tensors of a tuple type; `None` when
/// a shape is not static or the count overflows.
pub fn elements(t: &Type) -> Option<u64> {
    match t {
        Type::Tensor(t) => t.num_elements().map(|n| n as u64),
        Type::Tuple(fields) => fields
            .iter()
            .try_fold(0u64, |n, f| n.checked_add(elements(f)?)),
        _ => None,
    }
}

/// `epsilon`, `center` and `scale` of a normalisation's attributes, with Relay's defaults.
pub fn norm_flags(attrs: &Attrs) -> (f64, bool, bool) {
    let flag = |name: &str| attrs.get(name).and_then(AttrValue::as_bool).unwrap_or(true);
    let eps = attrs
        .get("epsilon")
        .and_then(AttrValue::as_float)
        .unwrap_or(1e-5);
    (eps, flag("center"), flag("scale"))
}

/// A normalisation's `axis` attribute (or `default`), negative values counted from the end of
/// a tensor of rank `rank`.
pub fn norm_axis(attrs: &Attrs, default: i64, rank: usize) -> usize {
    let a = attrs
        .get("axis")
        .and_then(AttrValue::as_int)
        .unwrap_or(default);
    (if a < 0 { a + rank as i64 } else { a }) as usize
}

/// `v` (a vector) reshaped to broadcast along `axis` of a tensor of rank `rank`: `expand_dims`
/// adds the axes after it (none for the last axis); a constant `v` is reshaped here, into a
/// new constant.
pub fn along_axis(
    cx: &mut irpass_ir::pattern::RuleCx<'_>,
    v: irpass_ir::ExprId,
    axis: usize,
    rank: usize,
) -> Option<irpass_ir::ExprId> {
    let trailing = rank.checked_sub(axis + 1)?;
    if trailing == 0 {
        return Some(v);
    }
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(1)),
        ("num_newaxis", AttrValue::Int(trailing as i64)),
    ]);
    // A constant is laid out along the axis now, not by a later FoldConstant: a rule that
    // runs before that pass (SimplifyExpr's constant reassociation after CanonicalizeOps)
    // sees a constant.
    if let Some(t) = cx.constant(v).cloned() {
        return cx.fold("expand_dims", &[&t], &attrs);
    }
    cx.call("expand_dims", &[v], attrs)
}
