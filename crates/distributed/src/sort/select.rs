//! The sort's exact splitters, a pure function of samples (unit-tested without a GPU): where
//! every rank's sorted shard splits so that exactly `target` items of the whole array come
//! before the split.
//!
//! The items are ordered by (compare key, rank, position in the rank's sorted shard): a total
//! order, the stable sort's. The split on rank `r` is known to lie in a window of its shard
//! (`start..=end`; at first the whole shard). A round samples each rank's window at an even gap,
//! gathers the samples, and narrows every window by what the samples bound: for a sample `x`,
//! each rank's count of items before `x` lies between the positions of its samples on either
//! side of `x` (exactly known for `x`'s own rank). The last sample that at most `target` items
//! can precede bounds the splits from below, the first that more than `target` items must
//! precede bounds them from above. A window shrinks by about `samples / (2 * world)` a round;
//! once every window is sampled whole, the split is read off the merged samples. This is a
//! multi-sequence selection (as in Varman et al., "Merging multiple lists on hierarchical-memory
//! multiprocessors", 1991) run on gathered samples, so a round costs one all-gather.

use std::ops::Range;

/// The items of one rank's window a round samples: `start + i * gap` for `i < count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sampled {
    pub(crate) start: usize,
    pub(crate) gap: usize,
    pub(crate) count: usize,
}

/// At most `samples` (at least 1) items of `window`, evenly spaced from its first.
pub(crate) fn sampled(window: &Range<usize>, samples: usize) -> Sampled {
    let len = window.len();
    let gap = len.div_ceil(samples.max(1)).max(1);
    Sampled {
        start: window.start,
        gap,
        count: len.div_ceil(gap),
    }
}

/// What one round found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The split: each rank's count of items that go before it (summing to the target).
    Found(Vec<usize>),
    /// Narrower windows for the next round.
    Narrowed(Vec<Range<usize>>),
}

/// One round of the search for the split with `target` items before it, given each rank's
/// window (its split lies in `start..=end`; `target` is at least the starts' sum and at most
/// the ends') and the compare keys of its window's [`sampled`] items (`keys[r][i]`, in order:
/// the shard is sorted). Every rank computes the same step from the same gathered keys.
pub(crate) fn step(target: usize, windows: &[Range<usize>], samples: usize, keys: &[&[u64]]) -> Step {
    let world = windows.len();
    let starts: Vec<usize> = windows.iter().map(|w| w.start).collect();
    let ends: Vec<usize> = windows.iter().map(|w| w.end).collect();
    let (before, through) = (starts.iter().sum::<usize>(), ends.iter().sum::<usize>());
    debug_assert!(
        before <= target && target <= through,
        "{target} not in {before}..={through}"
    );
    if target <= before {
        return Step::Found(starts);
    }
    if target >= through {
        return Step::Found(ends);
    }
    let plans: Vec<Sampled> = windows.iter().map(|w| sampled(w, samples)).collect();
    let mut merged: Vec<(u64, usize, usize)> = keys
        .iter()
        .enumerate()
        .flat_map(|(r, k)| k.iter().enumerate().map(move |(i, &key)| (key, r, i)))
        .collect();
    merged.sort_unstable();
    if plans.iter().all(|p| p.gap == 1) {
        // Every item of every window is here, in order: the first `target - before` go before.
        let mut splits = starts;
        for &(_, r, _) in &merged[..target - before] {
            splits[r] += 1;
        }
        return Step::Found(splits);
    }
    // `seen[q]`: rank q's samples before the current one.
    let mut seen = vec![0usize; world];
    let mut low = starts;
    let mut high = ends;
    for &(_, r, i) in &merged {
        // Bounds on rank q's count of (windowed) items before the sample (r, i), as positions.
        let bound = |q: usize, upper: bool| {
            let p = &plans[q];
            if q == r {
                p.start + i * p.gap
            } else if upper {
                if seen[q] == p.count {
                    windows[q].end
                } else {
                    p.start + seen[q] * p.gap
                }
            } else if seen[q] == 0 {
                windows[q].start
            } else {
                p.start + (seen[q] - 1) * p.gap + 1
            }
        };
        let upper: usize = (0..world).map(|q| bound(q, true)).sum();
        let lower: usize = (0..world).map(|q| bound(q, false)).sum();
        if upper <= target {
            // At most `target` items precede it: it is at or before the split's item.
            low = (0..world).map(|q| bound(q, false)).collect();
        }
        if lower > target {
            // More than `target` items precede it: it is after the split's item.
            high = (0..world).map(|q| bound(q, true)).collect();
            break;
        }
        seen[r] += 1;
    }
    Step::Narrowed(low.into_iter().zip(high).map(|(s, e)| s..e).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search on sorted shards held on the host, to the end: the splits and the rounds.
    fn search(shards: &[Vec<u64>], target: usize, samples: usize) -> (Vec<usize>, usize) {
        let mut windows: Vec<Range<usize>> = shards.iter().map(|s| 0..s.len()).collect();
        for round in 1..=64 {
            let keys: Vec<Vec<u64>> = shards
                .iter()
                .zip(&windows)
                .map(|(s, w)| {
                    let p = sampled(w, samples);
                    (0..p.count).map(|i| s[p.start + i * p.gap]).collect()
                })
                .collect();
            let refs: Vec<&[u64]> = keys.iter().map(|k| k.as_slice()).collect();
            match step(target, &windows, samples, &refs) {
                Step::Found(splits) => return (splits, round),
                Step::Narrowed(next) => {
                    let (old, new) = (
                        windows.iter().map(|w| w.len()).sum::<usize>(),
                        next.iter().map(|w| w.len()).sum::<usize>(),
                    );
                    assert!(new < old, "no progress: {windows:?} -> {next:?}");
                    for (r, w) in next.iter().enumerate() {
                        assert!(w.start <= w.end && w.end <= shards[r].len(), "{next:?}");
                    }
                    windows = next;
                }
            }
        }
        panic!("no split after 64 rounds");
    }

    /// The stable sort's splits: each rank's count among the first `target` of every item
    /// ordered by (key, rank, position).
    fn expected(shards: &[Vec<u64>], target: usize) -> Vec<usize> {
        let mut all: Vec<(u64, usize, usize)> = shards
            .iter()
            .enumerate()
            .flat_map(|(r, s)| s.iter().enumerate().map(move |(i, &k)| (k, r, i)))
            .collect();
        all.sort_unstable();
        let mut splits = vec![0; shards.len()];
        for &(_, r, _) in &all[..target] {
            splits[r] += 1;
        }
        splits
    }

    fn check(mut shards: Vec<Vec<u64>>, samples: usize) {
        shards.iter_mut().for_each(|s| s.sort_unstable());
        let total: usize = shards.iter().map(|s| s.len()).sum();
        for target in [0, 1, total / 3, total / 2, total.saturating_sub(1), total] {
            let target = target.min(total);
            let (splits, _) = search(&shards, target, samples);
            assert_eq!(splits, expected(&shards, target), "target {target} of {shards:?}");
        }
    }

    #[test]
    fn equal_keys_split_by_rank_then_position() {
        check(vec![vec![5; 100], vec![5; 37], vec![], vec![5; 64]], 4);
        check(vec![vec![0; 1000], vec![0; 1000]], 2);
    }

    #[test]
    fn large_shards_take_few_rounds() {
        let mut next = 0x9e37_79b9_7f4a_7c15u64;
        let mut shards = vec![Vec::new(); 4];
        for (r, s) in shards.iter_mut().enumerate() {
            for _ in 0..(1 << 18) + r * 1000 {
                next = next
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                s.push(next >> 40);
            }
            s.sort_unstable();
        }
        let total: usize = shards.iter().map(|s| s.len()).sum();
        let (splits, rounds) = search(&shards, total / 2, 4096);
        assert_eq!(splits, expected(&shards, total / 2));
        assert!(rounds <= 3, "{rounds} rounds");
    }

    proptest::proptest! {
        #[test]
        fn any_shards_split_exactly(
            shards in proptest::collection::vec(proptest::collection::vec(0u64..20, 0..200), 1..6),
            samples in 2usize..12,
        ) {
            check(shards, samples);
        }
    }
}
