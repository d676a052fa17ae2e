//! Data layouts as TVM writes them: a string of axes, each a primal axis (a capital letter:
//! `N`, `C`, `H`, `W`, `O`, `I`, ...) or a sub-axis (a factor and a small letter, `4c`: the
//! inner 4 of `C`). `NCHW` and `NHWC` are permutations of the same axes; `NCHW4c` splits `C`
//! into `C/4` outer blocks and 4 inner channels (shape `(N, C/4, H, W, 4)`), and `OIHW4i4o`
//! splits a weight's input and output channels.
//!
//! [`Layout::transform_shape`] and [`transform_tensor`] move between two layouts of the same
//! primal axes (TVM's `BijectiveLayout`): they merge the source's splits, reorder the primal
//! axes, and split as the destination says.
//!
//! ```
//! use irpass_ir::layout::Layout;
//! use irpass_ir::Dim;
//! let packed = Layout::parse("NCHW4c").unwrap();
//! let plain = Layout::parse("NCHW").unwrap();
//! let shape = [Dim::Static(1), Dim::Static(8), Dim::Static(5), Dim::Static(5)];
//! let out = plain.transform_shape(&shape, &packed).unwrap();
//! assert_eq!(out, [1, 2, 5, 5, 4].map(Dim::Static));
//! assert!(Layout::parse("NCHW4x").is_err()); // `x` splits no axis of the layout
//! ```

use std::fmt;

use crate::{Dim, Tensor};

/// One axis of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutAxis {
    /// The primal axis it belongs to (a capital letter).
    pub primal: char,
    /// For a sub-axis, its size (the split factor); `None` for the primal axis itself.
    pub factor: Option<i64>,
}

/// A parsed layout (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    axes: Vec<LayoutAxis>,
}

impl Layout {
    /// Reads a layout string.
    ///
    /// # Errors
    /// A character that is not a letter or a digit, a capital letter with a factor, a small
    /// letter without one, a factor of 0, an axis named twice, or a sub-axis whose primal axis
    /// is not in the layout.
    pub fn parse(text: &str) -> Result<Layout, String> {
        // The layouts every convolution names, read once per thread (type inference and the
        // passes ask for them at every convolution).
        thread_local! {
            static COMMON: [(&'static str, Layout); 4] = ["NCHW", "NHWC", "OIHW", "HWIO"]
                .map(|t| (t, Layout::read(t).expect("a layout")));
        }
        match COMMON.with(|common| {
            common
                .iter()
                .find(|(t, _)| *t == text)
                .map(|(_, l)| l.clone())
        }) {
            Some(l) => Ok(l),
            None => Layout::read(text),
        }
    }

    /// [`Layout::parse`] itself.
    fn read(text: &str) -> Result<Layout, String> {
        let bad = |why: String| format!("layout `{text}`: {why}");
        let mut axes: Vec<LayoutAxis> = Vec::new();
        let mut digits = String::new();
        for c in text.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            let factor = if digits.is_empty() {
                None
            } else {
                let f: i64 = digits
                    .parse()
                    .map_err(|_| bad(format!("the factor `{digits}` is too large")))?;
                if f < 1 {
                    return Err(bad(format!("a split factor must be at least 1, got {f}")));
                }
                Some(f)
            };
            digits.clear();
            let axis = match (c.is_ascii_uppercase(), c.is_ascii_lowercase(), factor) {
                (true, _, None) => LayoutAxis {
                    primal: c,
                    factor: None,
                },
                (true, _, Some(f)) => {
                    return Err(bad(format!(
                        "`{f}{c}`: a factor goes before a small letter (`{f}{}`)",
                        c.to_ascii_lowercase()
                    )));
                }
                (_, true, Some(f)) => LayoutAxis {
                    primal: c.to_ascii_uppercase(),
                    factor: Some(f),
                },
                (_, true, None) => {
                    return Err(bad(format!(
                        "the sub-axis `{c}` needs its size before it (`4{c}`)"
                    )));
                }
                _ => {
                    return Err(bad(format!(
                        "`{c}` is not an axis (letters and factors only)"
                    )));
                }
            };
            if axes
                .iter()
                .any(|a| a.primal == axis.primal && a.factor.is_some() == axis.factor.is_some())
            {
                return Err(bad(format!("the axis `{c}` appears twice")));
            }
            axes.push(axis);
        }
        if !digits.is_empty() {
            return Err(bad(format!("the factor `{digits}` splits no axis")));
        }
        for a in &axes {
            if a.factor.is_some()
                && !axes
                    .iter()
                    .any(|b| b.primal == a.primal && b.factor.is_none())
            {
                return Err(bad(format!(
                    "the sub-axis `{}` splits `{}`, which the layout lacks",
                    a.primal.to_ascii_lowercase(),
                    a.primal
                )));
            }
        }
        Ok(Layout { axes })
    }

    /// The number of axes (of a tensor in this layout).
    pub fn rank(&self) -> usize {
        self.axes.len()
    }

    /// The axes, in order.
    pub fn axes(&self) -> &[LayoutAxis] {
        &self.axes
    }

    /// The primal axes in the order they appear (`NCHW` for `NCHW4c`).
    pub fn primal(&self) -> Layout {
        Layout {
            axes: self
                .axes
                .iter()
                .filter(|a| a.factor.is_none())
                .copied()
                .collect(),
        }
    }

    /// The layout whose axis `j` is this layout's axis `perm[j]` (what `transpose` with `axes`
    /// `perm` makes of a tensor in this layout); `None` when `perm` is not a permutation of
    /// this layout's axes.
    pub fn permuted(&self, perm: &[usize]) -> Option<Layout> {
        if perm.len() != self.rank() {
            return None;
        }
        let mut seen = vec![false; self.rank()];
        for &i in perm {
            if i >= seen.len() || std::mem::replace(&mut seen[i], true) {
                return None;
            }
        }
        Some(Layout {
            axes: perm.iter().map(|&i| self.axes[i]).collect(),
        })
    }

    /// Whether it has no sub-axes.
    pub fn is_primal(&self) -> bool {
        self.axes.iter().all(|a| a.factor.is_none())
    }

    /// The position of primal axis `c` (its outer part, when split).
    pub fn position(&self, c: char) -> Option<usize> {
        self.axes
            .iter()
            .position(|a| a.primal == c && a.factor.is_none())
    }

    /// The split factor of primal axis `c`, if the layout splits it.
    pub fn factor(&self, c: char) -> Option<i64> {
        self.axes
            .iter()
            .find(|a| a.primal == c && a.factor.is_some())
            .and_then(|a| a.factor)
    }

    /// Whether `other` has the same primal axes (in any order).
    pub fn same_axes(&self, other: &Layout) -> bool {
        let key = |l: &Layout| {
            let mut p: Vec<char> = l.primal().axes.iter().map(|a| a.primal).collect();
            p.sort_unstable();
            p
        };
        key(self) == key(other)
    }

    /// The shape in layout `dst` of a tensor of `shape` in this layout: splits merged,
    /// primal axes reordered, `dst`'s splits made. Unknown sizes stay unknown.
    ///
    /// # Errors
    /// Different primal axes, a shape of another rank, a sub-axis whose size is not its
    /// factor, or a size that `dst`'s factor does not divide.
    pub fn transform_shape(&self, shape: &[Dim], dst: &Layout) -> Result<Vec<Dim>, String> {
        self.check(shape.len(), dst)?;
        if self == dst && self.is_primal() {
            return Ok(shape.to_vec());
        }
        // The size of each primal axis, in this layout's primal order.
        let mut primal = Vec::new();
        for (i, a) in self.axes.iter().enumerate() {
            if a.factor.is_some() {
                if let (Dim::Static(s), Some(f)) = (shape[i], a.factor)
                    && s != f
                {
                    return Err(format!(
                        "layout `{self}`: the sub-axis `{}{}` has size {s}",
                        f,
                        a.primal.to_ascii_lowercase()
                    ));
                }
                continue;
            }
            let size = match (shape[i], self.factor(a.primal)) {
                (d, None) => d,
                (Dim::Static(o), Some(f)) => o.checked_mul(f).map_or(Dim::Any, Dim::Static),
                (_, Some(_)) => Dim::Any,
            };
            primal.push((a.primal, size));
        }
        dst.axes
            .iter()
            .map(|a| {
                let size = primal.iter().find(|(c, _)| *c == a.primal).map(|p| p.1);
                let size = size.expect("the primal axes were checked to be the same");
                match (a.factor, dst.factor(a.primal), size) {
                    (Some(f), _, _) => Ok(Dim::Static(f)),
                    (None, None, d) => Ok(d),
                    (None, Some(_), Dim::Any | Dim::Named(_)) => Ok(Dim::Any),
                    (None, Some(f), Dim::Static(s)) if s % f == 0 => Ok(Dim::Static(s / f)),
                    (None, Some(f), Dim::Static(s)) => Err(format!(
                        "layout `{dst}`: axis `{}` of size {s} does not split into blocks of {f}",
                        a.primal
                    )),
                }
            })
            .collect()
    }

    fn check(&self, rank: usize, dst: &Layout) -> Result<(), String> {
        if !self.same_axes(dst) {
            return Err(format!(
                "layouts `{self}` and `{dst}` do not have the same primal axes"
            ));
        }
        if rank != self.rank() {
            return Err(format!(
                "layout `{self}` has {} axes, the tensor {rank}",
                self.rank()
            ));
        }
        Ok(())
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for a in &self.axes {
            match a.factor {
                Some(k) => write!(f, "{k}{}", a.primal.to_ascii_lowercase())?,
                None => write!(f, "{}", a.primal)?,
            }
        }
        Ok(())
    }
}

/// `t` (in layout `src`) in layout `dst`: `src`'s splits merged, the primal axes reordered,
/// `dst`'s splits made (a reshape and transpose, as TVM's `layout_transform` computes).
///
/// # Errors
/// As [`Layout::transform_shape`].
pub fn transform_tensor(t: &Tensor, src: &Layout, dst: &Layout) -> Result<Tensor, String> {
    let dims: Vec<Dim> = t.shape().iter().map(|&d| Dim::Static(d as i64)).collect();
    let out_shape = src.transform_shape(&dims, dst)?;
    if src == dst {
        return Ok(t.clone());
    }
    // 1. Merge: each primal axis followed by its sub-axis, then one axis per primal.
    let mut order = Vec::new();
    let mut primal_shape = Vec::new();
    let mut primal_names = Vec::new();
    for (i, a) in src.axes.iter().enumerate() {
        if a.factor.is_some() {
            continue;
        }
        order.push(i);
        let mut size = t.shape()[i];
        if let Some(j) = src
            .axes
            .iter()
            .position(|b| b.primal == a.primal && b.factor.is_some())
        {
            order.push(j);
            size *= t.shape()[j];
        }
        primal_shape.push(size);
        primal_names.push(a.primal);
    }
    let merged = t.permute(&order).reshape(&primal_shape)?;
    // 2. Reorder the primal axes as `dst` lists them.
    let dst_primal: Vec<char> = dst.primal().axes.iter().map(|a| a.primal).collect();
    let perm: Vec<usize> = dst_primal
        .iter()
        .map(|c| primal_names.iter().position(|p| p == c).expect("same axes"))
        .collect();
    let reordered = merged.permute(&perm);
    // 3. Split: each split primal into (outer, factor), then `dst`'s order.
    let mut split_shape = Vec::new();
    let mut slot = Vec::new(); // (primal, is_sub) of each axis of the split tensor
    for (k, &c) in dst_primal.iter().enumerate() {
        let size = reordered.shape()[k];
        match dst.factor(c) {
            Some(f) => {
                let f = f as usize;
                split_shape.extend([size / f, f]);
                slot.extend([(c, false), (c, true)]);
            }
            None => {
                split_shape.push(size);
                slot.push((c, false));
            }
        }
    }
    let split = reordered.reshape(&split_shape)?;
    let last: Vec<usize> = dst
        .axes
        .iter()
        .map(|a| {
            slot.iter()
                .position(|&(c, sub)| c == a.primal && sub == a.factor.is_some())
                .expect("every axis of dst has a slot")
        })
        .collect();
    let out = split.permute(&last);
    debug_assert_eq!(
        out.shape()
            .iter()
            .map(|&d| Dim::Static(d as i64))
            .collect::<Vec<_>>(),
        out_shape
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn l(s: &str) -> Layout {
        Layout::parse(s).unwrap()
    }

    #[test]
    fn layouts_parse_print_and_refuse_what_tvm_refuses() {
        for s in [
            "NCHW", "NHWC", "NCHW4c", "OIHW4i4o", "NCHW16c", "CNHW", "HWIO",
        ] {
            assert_eq!(l(s).to_string(), s);
        }
        assert_eq!(l("NCHW4c").rank(), 5);
        assert_eq!(l("OIHW4i4o").factor('O'), Some(4));
        assert_eq!(l("NCHW4c").primal().to_string(), "NCHW");
        for (bad, why) in [
            ("NCHW4x", "splits `X`, which the layout lacks"),
            ("NCHWc", "needs its size before it"),
            ("N4CHW", "a factor goes before a small letter"),
            ("NCHW0c", "at least 1"),
            ("NCHN", "appears twice"),
            ("NCHW4c4c", "appears twice"),
            ("NC-HW", "is not an axis"),
            ("NCHW4", "splits no axis"),
        ] {
            let err = Layout::parse(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn shapes_move_between_layouts() {
        let s = |v: &[i64]| v.iter().map(|&d| Dim::Static(d)).collect::<Vec<_>>();
        assert_eq!(
            l("NCHW")
                .transform_shape(&s(&[1, 8, 3, 5]), &l("NHWC"))
                .unwrap(),
            s(&[1, 3, 5, 8])
        );
        assert_eq!(
            l("NCHW")
                .transform_shape(&s(&[1, 8, 3, 5]), &l("NCHW4c"))
                .unwrap(),
            s(&[1, 2, 3, 5, 4])
        );
        assert_eq!(
            l("NCHW4c")
                .transform_shape(&s(&[1, 2, 3, 5, 4]), &l("NHWC2c"))
                .unwrap(),
            s(&[1, 3, 5, 4, 2])
        );
        assert_eq!(
            l("OIHW")
                .transform_shape(&s(&[8, 4, 3, 3]), &l("OIHW4i4o"))
                .unwrap(),
            s(&[2, 1, 3, 3, 4, 4])
        );
        let any = [Dim::Any, Dim::Static(8), Dim::Any, Dim::Static(2)];
        assert_eq!(
            l("NCHW").transform_shape(&any, &l("NCHW4c")).unwrap()[0],
            Dim::Any
        );
        let err = l("NCHW")
            .transform_shape(&s(&[1, 6, 3, 5]), &l("NCHW4c"))
            .unwrap_err();
        assert!(err.contains("does not split into blocks of 4"), "{err}");
        let err = l("NCHW")
            .transform_shape(&s(&[1, 6, 3, 5]), &l("NCDHW"))
            .unwrap_err();
        assert!(err.contains("do not have the same primal axes"), "{err}");
        let err = l("NCHW4c")
            .transform_shape(&s(&[1, 2, 3, 5, 3]), &l("NCHW"))
            .unwrap_err();
        assert!(err.contains("has size 3"), "{err}");
    }

    #[test]
    fn tensors_move_between_layouts_and_back() {
        let n = 8 * 2 * 3; // N = 1, C = 8, H = 2, W = 3
        let x = Tensor::from_vec(
            DType::Float32,
            &[1, 8, 2, 3],
            (0..n).map(f64::from).collect(),
        )
        .unwrap();
        let packed = transform_tensor(&x, &l("NCHW"), &l("NCHW4c")).unwrap();
        assert_eq!(packed.shape(), [1, 2, 2, 3, 4]);
        // Element (n, c, h, w) is at (n, c / 4, h, w, c % 4).
        let v = packed.values();
        let at = |c: usize, h: usize, w: usize| v[(((c / 4) * 2 + h) * 3 + w) * 4 + c % 4];
        assert_eq!(at(5, 1, 2), ((5 * 2 + 1) * 3 + 2) as f64);
        let back = transform_tensor(&packed, &l("NCHW4c"), &l("NCHW")).unwrap();
        assert!(back.bit_eq(&x));
        let other = transform_tensor(&packed, &l("NCHW4c"), &l("NHWC2c")).unwrap();
        let again = transform_tensor(&other, &l("NHWC2c"), &l("NCHW")).unwrap();
        assert!(again.bit_eq(&x));
    }

    #[test]
    fn a_permuted_layout_follows_transposes_axes_and_refuses_what_is_not_a_permutation() {
        let nchw = Layout::parse("NCHW").unwrap();
        assert_eq!(
            nchw.permuted(&[0, 2, 3, 1]),
            Some(Layout::parse("NHWC").unwrap())
        );
        assert_eq!(
            Layout::parse("NCHW4c").unwrap().permuted(&[0, 4, 2, 3, 1]),
            Some(Layout::parse("N4cHWC").unwrap())
        );
        assert_eq!(nchw.permuted(&[0, 1, 2]), None);
        assert_eq!(nchw.permuted(&[0, 1, 1, 2]), None);
        assert_eq!(nchw.permuted(&[0, 1, 2, 4]), None);
    }
}
