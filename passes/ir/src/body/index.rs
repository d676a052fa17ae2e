//! Typed indices and the vectors they index (as rustc's `IndexVec`, cranelift's `PrimaryMap`).

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// A typed index: a `u32` that says what it indexes, so an [`ExprId`](super::ExprId) cannot be
/// used where a [`VarId`](super::VarId) is meant.
pub trait Idx: Copy + Eq + Ord + std::hash::Hash + fmt::Debug {
    /// The index of position `i`.
    ///
    /// # Panics
    /// Beyond `u32::MAX` entries (an arena that large is a bug, not an input).
    fn new(i: usize) -> Self;
    /// The position.
    fn index(self) -> usize;
}

/// Declares a typed `u32` index.
macro_rules! define_index {
    ($(#[$doc:meta])* $vis:vis struct $name:ident, $prefix:literal;) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis struct $name(u32);

        impl $crate::body::Idx for $name {
            #[inline]
            fn new(i: usize) -> Self {
                $name(u32::try_from(i).expect(concat!("more than u32::MAX ", stringify!($name), "s")))
            }
            #[inline]
            fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}
pub(crate) use define_index;

/// A vector indexed by `I`: entries are added at the end and never removed, so an index, once
/// handed out, stays valid.
#[derive(Clone, PartialEq)]
pub struct IndexVec<I: Idx, T> {
    raw: Vec<T>,
    _index: PhantomData<fn(I) -> I>,
}

impl<I: Idx, T> IndexVec<I, T> {
    /// An empty vector.
    #[inline]
    pub fn new() -> Self {
        IndexVec {
            raw: Vec::new(),
            _index: PhantomData,
        }
    }

    /// An empty vector with room for `n` entries.
    pub fn with_capacity(n: usize) -> Self {
        IndexVec {
            raw: Vec::with_capacity(n),
            _index: PhantomData,
        }
    }

    /// Appends `value` and returns its index.
    #[inline]
    pub fn push(&mut self, value: T) -> I {
        let i = I::new(self.raw.len());
        self.raw.push(value);
        i
    }

    /// How many entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The index the next [`IndexVec::push`] returns.
    #[inline]
    pub fn next_index(&self) -> I {
        I::new(self.raw.len())
    }

    /// The entry at `i`, if there is one.
    #[inline]
    pub fn get(&self, i: I) -> Option<&T> {
        self.raw.get(i.index())
    }

    /// The indices, in order.
    pub fn indices(&self) -> impl DoubleEndedIterator<Item = I> + ExactSizeIterator + use<I, T> {
        (0..self.raw.len()).map(I::new)
    }

    /// `(index, entry)` pairs, in order.
    pub fn iter_enumerated(&self) -> impl DoubleEndedIterator<Item = (I, &T)> {
        self.raw.iter().enumerate().map(|(i, t)| (I::new(i), t))
    }

    /// The entries, in order.
    pub fn as_slice(&self) -> &[T] {
        &self.raw
    }
}

impl<I: Idx, T: Clone> IndexVec<I, T> {
    /// `n` copies of `value`: a side table for an arena of `n` entries.
    pub fn from_elem(value: T, n: usize) -> Self {
        IndexVec {
            raw: vec![value; n],
            _index: PhantomData,
        }
    }
}

impl<I: Idx, T> Default for IndexVec<I, T> {
    fn default() -> Self {
        IndexVec::new()
    }
}

impl<I: Idx, T> FromIterator<T> for IndexVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> Self {
        IndexVec {
            raw: iter.into_iter().collect(),
            _index: PhantomData,
        }
    }
}

impl<I: Idx, T> Index<I> for IndexVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, i: I) -> &T {
        &self.raw[i.index()]
    }
}

impl<I: Idx, T> IndexMut<I> for IndexVec<I, T> {
    #[inline]
    fn index_mut(&mut self, i: I) -> &mut T {
        &mut self.raw[i.index()]
    }
}

impl<I: Idx, T: fmt::Debug> fmt::Debug for IndexVec<I, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter_enumerated()).finish()
    }
}
