//! Maps and sets keyed by variable id, laid out so that variables made one after another
//! share cache lines.
//!
//! Passes keep per-variable facts (a type, a replacement, liveness) in hash tables keyed by
//! [`Var::id`](super::Var::id). A general-purpose hash scatters those keys over the whole
//! table, so on a function of a hundred thousand bindings every lookup is a cache miss. Ids
//! are handed out in creation order, which for a parsed or built program is program order, and
//! a variable is mostly used near where it is bound. [`VarHasher`] keeps each run of 16
//! consecutive ids in neighbouring buckets and scatters the runs with a full-avalanche mix, so
//! a walk over a let chain touches a few table lines per stretch of bindings instead of one per
//! lookup, while keys that are not consecutive still spread evenly.
//!
//! ```
//! use irpass_ir::{Var, VarMap, VarSet};
//! let (x, y) = (Var::new("x", None), Var::new("y", None));
//! let mut names: VarMap<&str> = VarMap::default();
//! names.insert(x.id(), "x");
//! let mut live = VarSet::default();
//! live.insert(y.id());
//! assert_eq!(names.get(&x.id()), Some(&"x"));
//! assert!(live.contains(&y.id()) && !live.contains(&x.id()));
//! ```

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A map from variable id ([`Var::id`](super::Var::id)) to `V`, hashed by [`VarHasher`].
pub type VarMap<V> = HashMap<u64, V, BuildHasherDefault<VarHasher>>;

/// A set of variable ids, hashed by [`VarHasher`].
pub type VarSet = HashSet<u64, BuildHasherDefault<VarHasher>>;

/// The hasher of [`VarMap`] and [`VarSet`], for `u64` ids.
///
/// The low 4 bits of the hash are the low 4 bits of the id, so ids `16n..16n+15` fall in 16
/// adjacent buckets (one probe group of the table); the bits above come from a mix of `n`, so
/// the groups of different runs are spread over the table whatever pattern the ids follow; the
/// top 7 bits (the table's per-slot tag) are the id's low 7 bits, distinct within a run.
#[derive(Default, Clone, Copy)]
pub struct VarHasher(u64);

/// Bits 4..57 of the hash: where a run of 16 ids goes.
const RUN_BITS: u64 = 0x01FF_FFFF_FFFF_FFF0;

/// A full-avalanche 64-bit mix (the finaliser of MurmurHash3).
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl Hasher for VarHasher {
    fn finish(&self) -> u64 {
        let id = self.0;
        (mix(id >> 4) << 4) & RUN_BITS | (id & 0xF) | ((id & 0x7F) << 57)
    }

    /// Bytes are folded into the key, so a key of any type hashes consistently; the layout
    /// described above is that of a single `u64` id.
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0 ^ u64::from(b));
        }
    }

    /// A first `u64` is taken as it is (`mix(0)` is 0); a further one is folded in, so a key
    /// made of several words depends on all of them.
    fn write_u64(&mut self, id: u64) {
        self.0 = mix(self.0) ^ id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(id: u64) -> u64 {
        BuildHasherDefault::<VarHasher>::default().hash_one(id)
    }

    #[test]
    fn a_run_of_sixteen_ids_takes_adjacent_buckets_with_distinct_tags() {
        let base = 16 * 12_345;
        let first = hash(base);
        for i in 0..16 {
            let h = hash(base + i);
            assert_eq!(h & RUN_BITS, first & RUN_BITS, "id {}", base + i);
            assert_eq!(h & 0xF, i);
        }
        let tags: HashSet<u64> = (0..16).map(|i| hash(base + i) >> 57).collect();
        assert_eq!(tags.len(), 16);
    }

    #[test]
    fn a_key_of_several_words_depends_on_each() {
        let build = BuildHasherDefault::<VarHasher>::default();
        assert_ne!(build.hash_one((1u64, 7u64)), build.hash_one((2u64, 7u64)));
        assert_ne!(build.hash_one((1u64, 7u64)), build.hash_one((1u64, 8u64)));
    }

    #[test]
    fn runs_spread_over_the_table_even_for_power_of_two_strides() {
        // 4096 ids spaced `stride` apart, in a table of 4096 groups of 16 buckets: a uniform
        // hash fills about 4096 * (1 - 1/e) = 2589 groups; one that ignored the high bits of
        // the id would put every id of a large stride in one group.
        for stride in [1u64 << 4, 1 << 10, 1 << 20, 1 << 40] {
            let groups: HashSet<u64> = (0..4096u64)
                .map(|i| (hash(i * stride) & ((1 << 16) - 1)) >> 4)
                .collect();
            assert!(
                groups.len() > 2400,
                "stride {stride}: {} groups",
                groups.len()
            );
        }
    }
}
