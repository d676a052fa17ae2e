//! A native operator's inputs in their ONNX positions (the optional ones a node leaves out
//! absent), for its type relation (tensor types) and its kernel (tensors).

use irpass_ir::op::AttrReader;
use irpass_ir::{DType, Tensor, TensorType, Type};

/// The inputs of a call, by ONNX input position.
pub(crate) struct Args<'a, T> {
    op: &'static str,
    slots: Vec<Option<&'a T>>,
    declared: &'a [Option<Type>],
}

impl<'a, T> Args<'a, T> {
    /// The call's arguments put back in their positions around the `absent` ones.
    pub(crate) fn new(
        op: &'static str,
        given: &[&'a T],
        r: &AttrReader<'_>,
        declared: &'a [Option<Type>],
    ) -> Self {
        Args {
            op,
            slots: crate::slots::positions(given, &r.ints("absent")),
            declared,
        }
    }

    /// The operator's name (for messages).
    pub(crate) fn op(&self) -> &'static str {
        self.op
    }

    /// Input `i`, which must be given.
    pub(crate) fn get(&self, i: usize) -> Result<&'a T, String> {
        self.opt(i)
            .ok_or_else(|| format!("`{}`: input {i} is missing", self.op))
    }

    /// Input `i` if given.
    pub(crate) fn opt(&self, i: usize) -> Option<&'a T> {
        self.slots.get(i).copied().flatten()
    }

    /// How many input positions the call has (the last given one's plus one).
    pub(crate) fn count(&self) -> usize {
        self.slots.len()
    }

    /// The type the model declares (or the importer infers) for output `k` (type relations
    /// only).
    pub(crate) fn declared_type(&self, k: usize) -> Option<&'a Type> {
        self.declared.get(k)?.as_ref()
    }

    /// The tensor type the model declares for output `k` (type relations only).
    pub(crate) fn declared(&self, k: usize) -> Option<&'a TensorType> {
        match self.declared.get(k) {
            Some(Some(Type::Tensor(t))) => Some(t),
            _ => None,
        }
    }
}

impl Args<'_, TensorType> {
    /// The type of output `k` whose sizes depend on input values: of `dtype`, the rank
    /// `rank` gives (or the declared type's), each size unknown (the declared ones fill them).
    pub(crate) fn value_shaped(
        &self,
        k: usize,
        dtype: DType,
        rank: Option<usize>,
    ) -> Result<TensorType, String> {
        let rank = rank.or_else(|| self.declared(k).map(TensorType::rank)).ok_or_else(|| {
            format!(
                "`{}`: the rank of output {k} depends on input values, and the model does not declare it",
                self.op
            )
        })?;
        Ok(TensorType {
            shape: vec![irpass_ir::Dim::Any; rank],
            dtype,
        })
    }

    /// Input `i`'s type, which must be a float's.
    pub(crate) fn float(&self, i: usize) -> Result<&TensorType, String> {
        let t = self.get(i)?;
        if t.dtype.is_float() {
            Ok(t)
        } else {
            Err(format!(
                "`{}`: input {i} is {t}, a float tensor is expected",
                self.op
            ))
        }
    }

    /// Input `i`'s type, whose dtype must be one `ok` accepts (`what` names them).
    pub(crate) fn of_dtype(
        &self,
        i: usize,
        ok: impl Fn(DType) -> bool,
        what: &str,
    ) -> Result<&TensorType, String> {
        let t = self.get(i)?;
        if ok(t.dtype) {
            Ok(t)
        } else {
            Err(format!(
                "`{}`: input {i} is {t}, {what} is expected",
                self.op
            ))
        }
    }
}

impl Args<'_, Tensor> {
    /// The integers of input `i` (a shape, axes, a count).
    pub(crate) fn ints(&self, i: usize) -> Result<Vec<i64>, String> {
        Ok(self.get(i)?.to_i64().iter().copied().collect())
    }

    /// The elements of input `i`, a shape, as sizes (each at least 0, of no more elements in
    /// all than the interpreter evaluates, [`irpass_ir::op::checked_size`]).
    pub(crate) fn sizes(&self, i: usize) -> Result<Vec<usize>, String> {
        let sizes = self
            .ints(i)?
            .into_iter()
            .map(|v| usize::try_from(v).map_err(|_| format!("`{}`: a negative size {v}", self.op)))
            .collect::<Result<Vec<_>, _>>()?;
        irpass_ir::op::checked_size(self.op, &sizes)?;
        Ok(sizes)
    }

    /// The one integer of input `i` (a scalar or a tensor of one element).
    pub(crate) fn int(&self, i: usize) -> Result<i64, String> {
        match self.ints(i)?.as_slice() {
            [v] => Ok(*v),
            other => Err(format!(
                "`{}`: input {i} has {} elements, one is expected",
                self.op,
                other.len()
            )),
        }
    }
}
