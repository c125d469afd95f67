//! CPU references of the radix sort: a stable comparison sort in the order the GPU sort
//! documents ([`SortKey`]): [`sort_keys`], [`sort_pairs`], [`argsort`]; per segment
//! ([`segmented_argsort`], by CSR offsets) and per row ([`top_k`]).

use crate::device::{SortKey, SortOptions};
use std::cmp::Ordering;

/// How two keys compare under `options`: over all bits, [`SortKey::sort_cmp`] (written from
/// the order's definition, not from the ordered bits); over a narrower range, those bits of
/// [`SortKey::ordered_bits`]. Reversed for a descending sort.
///
/// # Panics
/// When the options' bit range is invalid for `K`.
pub fn key_order<K: SortKey>(options: SortOptions) -> impl Fn(&K, &K) -> Ordering {
    let bits = options.compared_bits::<K>().expect("a valid bit range");
    let whole = bits == (0..K::BITS);
    let mask = if bits.len() == 64 {
        u64::MAX
    } else {
        (1u64 << bits.len()) - 1
    };
    move |a: &K, b: &K| {
        let order = if whole {
            a.sort_cmp(b)
        } else {
            // An empty range at the key's top (64..64 of a u64) shifts out every bit.
            let part = |k: &K| k.ordered_bits().checked_shr(bits.start).unwrap_or(0) & mask;
            part(a).cmp(&part(b))
        };
        if options.is_descending() {
            order.reverse()
        } else {
            order
        }
    }
}

/// The input's permutation that sorts it, stably.
///
/// # Example
/// ```
/// use gpu_primitives::device::SortOptions;
/// use gpu_primitives::reference::sort;
/// assert_eq!(sort::argsort(&[2.0f32, f32::NAN, -0.0, 0.0], SortOptions::ascending()), [2, 3, 0, 1]);
/// assert_eq!(sort::argsort(&[1u8, 3, 1], SortOptions::descending()), [1, 0, 2]);
/// ```
pub fn argsort<K: SortKey>(keys: &[K], options: SortOptions) -> Vec<u32> {
    let order = key_order::<K>(options);
    let mut indices: Vec<u32> = (0..keys.len() as u32).collect();
    indices.sort_by(|&a, &b| order(&keys[a as usize], &keys[b as usize]));
    indices
}

/// The keys, sorted stably.
pub fn sort_keys<K: SortKey>(keys: &[K], options: SortOptions) -> Vec<K> {
    argsort(keys, options).iter().map(|&i| keys[i as usize]).collect()
}

/// The pairs, sorted stably by key.
pub fn sort_pairs<K: SortKey, V: Copy>(keys: &[K], values: &[V], options: SortOptions) -> (Vec<K>, Vec<V>) {
    let order = argsort(keys, options);
    (
        order.iter().map(|&i| keys[i as usize]).collect(),
        order.iter().map(|&i| values[i as usize]).collect(),
    )
}

/// Each segment `offsets[s] .. offsets[s + 1]` of `keys` argsorted on its own: the indices
/// are within the segment, at the segment's positions (positions outside every segment are 0).
///
/// # Panics
/// When the offsets decrease or pass the keys.
pub fn segmented_argsort<K: SortKey>(keys: &[K], offsets: &[u64], options: SortOptions) -> Vec<u32> {
    let mut indices = vec![0u32; keys.len()];
    for w in offsets.windows(2) {
        let (begin, end) = (w[0] as usize, w[1] as usize);
        indices[begin..end].copy_from_slice(&argsort(&keys[begin..end], options));
    }
    indices
}

/// The first `k` keys of each row of `row_len` in the order of a descending (`largest`) or
/// ascending stable sort, and their columns (`rows * k` each, row by row).
///
/// # Panics
/// When `k > row_len` or the rows do not divide the keys.
pub fn top_k<K: SortKey>(keys: &[K], row_len: usize, k: usize, largest: bool) -> (Vec<K>, Vec<u32>) {
    assert!(k <= row_len && (keys.is_empty() || keys.len().is_multiple_of(row_len)));
    let options = SortOptions::descending_if(largest);
    let (mut values, mut indices) = (Vec::new(), Vec::new());
    for row in keys.chunks(row_len.max(1)) {
        let order = argsort(row, options);
        values.extend(order[..k].iter().map(|&i| row[i as usize]));
        indices.extend_from_slice(&order[..k]);
    }
    (values, indices)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};
    use proptest::prelude::*;

    /// Whether `ordered_bits` keeps the order `sort_cmp` defines, over `keys` (every pair).
    fn bits_keep_order<K: SortKey>(keys: &[K]) {
        for a in keys {
            for b in keys {
                assert_eq!(
                    a.ordered_bits().cmp(&b.ordered_bits()),
                    a.sort_cmp(b),
                    "{a:?} vs {b:?}"
                );
            }
        }
    }

    fn specials_f32() -> Vec<f32> {
        let mut v = vec![
            f32::NEG_INFINITY,
            -1.0,
            -f32::MIN_POSITIVE,
            -0.0,
            0.0,
            f32::from_bits(1),
            1.0,
            f32::MAX,
            f32::INFINITY,
        ];
        for bits in [
            0x7fc0_0000u32,
            0x7f80_0001,
            0x7fff_ffff,
            0xffc0_0000,
            0xff80_0001,
            0xffff_ffff,
        ] {
            v.push(f32::from_bits(bits));
        }
        v
    }

    #[test]
    fn an_empty_bit_range_at_the_top_of_a_64_bit_key_compares_every_key_equal() {
        // Shifted right by 64, this range overflowed (found by the distributed sort's proptest).
        let order = key_order::<u64>(SortOptions::ascending().bits(64..64));
        assert_eq!(order(&1, &u64::MAX), Ordering::Equal);
        let order = key_order::<f64>(SortOptions::descending().bits(64..64));
        assert_eq!(order(&-1.0, &2.0), Ordering::Equal);
    }

    #[test]
    fn ordered_bits_keep_the_documented_order_at_the_edges() {
        let f = specials_f32();
        bits_keep_order(&f);
        bits_keep_order(&f.iter().map(|&x| x as f64).collect::<Vec<_>>());
        bits_keep_order(&[
            f64::from_bits(0xfff0_0000_0000_0001),
            f64::from_bits(0x7ff0_0000_0000_0001),
        ]);
        bits_keep_order(&f.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>());
        bits_keep_order(&f.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>());
        bits_keep_order(&[i32::MIN, -1, 0, 1, i32::MAX]);
        bits_keep_order(&[i64::MIN, -1, 0, 1, i64::MAX]);
        bits_keep_order(&[0u8, 1, 255]);
        // Ascending: -inf first, every NaN after +inf, -0.0 before +0.0.
        let sorted = sort_keys(&f, SortOptions::ascending());
        assert_eq!(sorted[0], f32::NEG_INFINITY);
        assert_eq!(sorted[8], f32::INFINITY);
        assert!(sorted[9..].iter().all(|x| x.is_nan()));
        assert_eq!((sorted[3].to_bits(), sorted[4].to_bits()), (0x8000_0000, 0));
        // The negative NaNs last, by payload from the largest.
        assert_eq!(sorted[14].to_bits(), 0xff80_0001);
    }

    #[test]
    fn every_f16_pattern_keeps_its_order() {
        let mut all: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        all.sort_by(|a, b| a.sort_cmp(b));
        let bits: Vec<u64> = all.iter().map(|k| k.ordered_bits()).collect();
        assert!(bits.windows(2).all(|w| w[0] < w[1]));
        assert_eq!((bits[0], bits[65535]), (0, 65535));
    }

    proptest! {
        #[test]
        fn ordered_bits_keep_order_f32(a in any::<u32>(), b in any::<u32>()) {
            bits_keep_order(&[f32::from_bits(a), f32::from_bits(b)]);
        }

        #[test]
        fn ordered_bits_keep_order_f64(a in any::<u64>(), b in any::<u64>()) {
            bits_keep_order(&[f64::from_bits(a), f64::from_bits(b)]);
        }

        #[test]
        fn ordered_bits_keep_order_i64(a in any::<i64>(), b in any::<i64>()) {
            bits_keep_order(&[a, b]);
        }

        #[test]
        fn descending_is_stable_and_reversed(keys in proptest::collection::vec(0u8..4, 0..64)) {
            let order = argsort(&keys, SortOptions::descending());
            for w in order.windows(2) {
                let (a, b) = (keys[w[0] as usize], keys[w[1] as usize]);
                prop_assert!(a > b || (a == b && w[0] < w[1]));
            }
        }

        #[test]
        fn a_bit_range_compares_only_those_bits(keys in proptest::collection::vec(any::<u32>(), 0..64)) {
            let sorted = sort_keys(&keys, SortOptions::ascending().bits(4..12));
            prop_assert!(sorted.windows(2).all(|w| (w[0] >> 4) & 0xff <= (w[1] >> 4) & 0xff));
        }
    }
}
