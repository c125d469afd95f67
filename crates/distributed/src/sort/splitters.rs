//! Where each rank's sorted shard splits between the ranks' parts, found on the device data:
//! the rounds of [`select::step`] fed with strided samples of each shard ([`search`]), and the
//! refinement of splits found in the order of the keys' top digit only ([`refine`]).

use super::select::{Step, sampled, step};
use crate::collectives::gather_words;
use crate::communicator::Communicator;
use crate::error::{Error, Result};
use gpu_primitives::CallOn;
use gpu_primitives::device::SortKey;
use std::ops::Range;

/// Samples a rank takes of its window in each round (a round gathers `world * boundaries *
/// SAMPLES` words: 56 KiB from each of 8 ranks, 448 KiB in all; a window of 2^31 keys on 2
/// ranks is exact after 4 rounds).
pub(super) const SAMPLES: usize = 1024;

/// Rounds after which a search gives up (it needs about `log(shard) / log(SAMPLES / (2 *
/// world))`: 3 or 4 for any shard a GPU holds).
const MAX_ROUNDS: usize = 64;

/// How the sort compares keys, as `u64` compare keys whose order is the sort's: bits `bits` of
/// the ordered bits ([`SortKey::ordered_bits`]), complemented for a descending sort.
#[derive(Clone, Copy, Debug)]
pub(super) struct Compare {
    shift: u32,
    mask: u64,
    descending: bool,
}

impl Compare {
    pub(super) fn new(bits: Range<u32>, descending: bool) -> Self {
        let width = bits.end - bits.start;
        Self {
            shift: if width == 0 { 0 } else { bits.start },
            mask: if width >= 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            },
            descending,
        }
    }

    pub(super) fn key<K: SortKey>(&self, key: K) -> u64 {
        let bits = (key.ordered_bits() >> self.shift) & self.mask;
        if self.descending { bits ^ self.mask } else { bits }
    }
}

/// This rank's sorted shard: `len` stored keys of `K` at device address `address`, on the
/// stream's GPU, written by work queued before on the stream; and `staging`, room for
/// [`SAMPLES`] keys there, where the samples are gathered before they are downloaded.
#[derive(Clone, Copy)]
pub(super) struct Shard {
    pub(super) address: u64,
    pub(super) len: usize,
    pub(super) staging: u64,
}

impl Shard {
    /// The compare keys of `window`'s [`sampled`] items (at most [`SAMPLES`]), into `out` (as
    /// many as it holds); how many were sampled.
    fn sample<K: SortKey>(
        &self,
        on: &CallOn<'_>,
        window: &Range<usize>,
        compare: Compare,
        out: &mut [u64],
    ) -> Result<usize> {
        assert!(
            window.end <= self.len,
            "window {window:?} of a shard of {}",
            self.len
        );
        let plan = sampled(window, SAMPLES);
        let mut raw = vec![K::Raw::default(); plan.count];
        // SAFETY: items `start + i * gap` for `i < count` lie within the window (`sampled`),
        // within the shard's `len` keys (asserted), initialised by the sort queued before; the
        // staging room holds `SAMPLES >= count` keys, apart from the shard.
        unsafe {
            on.stream().copy_strided::<K::Raw>(
                self.address + (plan.start * size_of::<K::Raw>()) as u64,
                plan.gap,
                self.staging,
                plan.count,
            )?;
            on.stream().copy_to_host(self.staging, &mut raw)?;
        }
        for (slot, &key) in out.iter_mut().zip(K::from_raw(&raw)) {
            *slot = compare.key(key);
        }
        Ok(plan.count)
    }

    /// The compare key of item `at`.
    fn key_at<K: SortKey>(&self, on: &CallOn<'_>, at: usize, compare: Compare) -> Result<u64> {
        let mut out = [0u64];
        self.sample::<K>(on, &(at..at + 1), compare, &mut out)?;
        Ok(out[0])
    }

    /// The first position of `window` whose compare key is not `below` (true up to some point
    /// and false after it there: the keys are in order), `window.end` if none.
    fn partition_point<K: SortKey>(
        &self,
        on: &CallOn<'_>,
        window: Range<usize>,
        compare: Compare,
        below: impl Fn(u64) -> bool,
    ) -> Result<usize> {
        // The point lies in start..=end.
        let (mut start, mut end) = (window.start, window.end);
        let mut keys = vec![0u64; SAMPLES];
        while start < end {
            let plan = sampled(&(start..end), SAMPLES);
            let count = self.sample::<K>(on, &(start..end), compare, &mut keys)?;
            let i = keys[..count].iter().position(|&k| !below(k)).unwrap_or(count);
            if i == 0 {
                return Ok(start);
            }
            if plan.gap == 1 {
                return Ok(start + i);
            }
            // Sample i - 1 is below, sample i (or the window's end) is not.
            let next_end = if i == count { end } else { start + i * plan.gap };
            start += (i - 1) * plan.gap + 1;
            end = next_end;
        }
        Ok(start)
    }
}

/// The splits of each boundary `j`, `targets[j]` items of the whole array before it, searched
/// from `windows[j]` (each rank's window: its split lies in `start..=end`, its keys before the
/// window go before the split and those after it after): `splits[j][r]` is how many of rank
/// `r`'s keys go before boundary `j`. Each round samples this rank's windows (a strided copy a
/// boundary) and gathers every rank's samples (one all-gather); every rank computes the same
/// splits.
pub(super) fn search<K: SortKey>(
    comm: &mut Communicator,
    on: &CallOn<'_>,
    shard: Shard,
    targets: &[usize],
    mut windows: Vec<Vec<Range<usize>>>,
    compare: Compare,
) -> Result<Vec<Vec<usize>>> {
    let (rank, world) = (comm.rank(), comm.world_size());
    let boundaries = targets.len();
    let mut found: Vec<Option<Vec<usize>>> = vec![None; boundaries];
    for _ in 0..MAX_ROUNDS {
        if found.iter().all(Option::is_some) {
            return Ok(found.into_iter().map(|f| f.expect("checked")).collect());
        }
        let mut mine = vec![0u64; boundaries * SAMPLES];
        for j in (0..boundaries).filter(|&j| found[j].is_none()) {
            shard.sample::<K>(on, &windows[j][rank], compare, &mut mine[j * SAMPLES..])?;
        }
        let all = gather_words(comm, on, &mine)?;
        for j in 0..boundaries {
            if found[j].is_some() {
                continue;
            }
            let keys: Vec<&[u64]> = (0..world)
                .map(|r| {
                    let at = (r * boundaries + j) * SAMPLES;
                    &all[at..at + sampled(&windows[j][r], SAMPLES).count]
                })
                .collect();
            match step(targets[j], &windows[j], SAMPLES, &keys) {
                Step::Found(splits) => found[j] = Some(splits),
                Step::Narrowed(next) => windows[j] = next,
            }
        }
    }
    Err(Error::InvalidArgument(format!(
        "sort: the splitter search did not end in {MAX_ROUNDS} rounds (a bug: please report it)"
    )))
}

/// Exact splits from `coarse`, the splits of the same `targets` in the order of the keys' top
/// digit alone (`digit`: each shard sorted by it, stably). A boundary whose split falls between
/// two digits is exact already; one that falls inside a digit's items (a straddled digit) is
/// searched again in the full order (`full`) among every rank's items of that digit, after
/// `sort_run` has sorted this rank's run of them by the remaining bits (once a run). Costs two
/// all-gathers of two words a boundary, and a search where a digit is straddled.
#[allow(clippy::too_many_arguments)]
pub(super) fn refine<K: SortKey>(
    comm: &mut Communicator,
    on: &CallOn<'_>,
    shard: Shard,
    targets: &[usize],
    coarse: Vec<Vec<usize>>,
    digit: Compare,
    full: Compare,
    mut sort_run: impl FnMut(Range<usize>) -> Result<()>,
) -> Result<Vec<Vec<usize>>> {
    let (rank, world) = (comm.rank(), comm.world_size());
    let boundaries = targets.len();
    // The digits either side of each split on this rank (left + 1, 0 for none; right, MAX for
    // none), gathered: a digit is straddled when the largest left equals the smallest right.
    let mut mine = vec![0u64; 2 * boundaries];
    for j in 0..boundaries {
        let c = coarse[j][rank];
        mine[2 * j] = if c > 0 {
            shard.key_at::<K>(on, c - 1, digit)? + 1
        } else {
            0
        };
        mine[2 * j + 1] = if c < shard.len {
            shard.key_at::<K>(on, c, digit)?
        } else {
            u64::MAX
        };
    }
    let sides = gather_words(comm, on, &mine)?;
    let word = |all: &[u64], r: usize, i: usize| all[r * 2 * boundaries + i];
    let straddled: Vec<Option<u64>> = (0..boundaries)
        .map(|j| {
            let left = (0..world).map(|r| word(&sides, r, 2 * j)).max().unwrap_or(0);
            let right = (0..world)
                .map(|r| word(&sides, r, 2 * j + 1))
                .min()
                .unwrap_or(u64::MAX);
            (left > 0 && right != u64::MAX && left - 1 == right).then_some(right)
        })
        .collect();
    if straddled.iter().all(Option::is_none) {
        return Ok(coarse);
    }
    // Each rank's run of each straddled digit (it holds the coarse split), gathered.
    for j in 0..boundaries {
        let c = coarse[j][rank];
        let (start, end) = match straddled[j] {
            Some(d) => (
                shard.partition_point::<K>(on, 0..c, digit, |k| k < d)?,
                shard.partition_point::<K>(on, c..shard.len, digit, |k| k <= d)?,
            ),
            None => (c, c),
        };
        mine[2 * j] = start as u64;
        mine[2 * j + 1] = end as u64;
    }
    let runs = gather_words(comm, on, &mine)?;
    let mut sorted: Vec<Range<usize>> = Vec::new();
    for j in (0..boundaries).filter(|&j| straddled[j].is_some()) {
        let run = mine[2 * j] as usize..mine[2 * j + 1] as usize;
        if run.len() > 1 && !sorted.contains(&run) {
            sort_run(run.clone())?;
            sorted.push(run);
        }
    }
    let straddling: Vec<usize> = (0..boundaries).filter(|&j| straddled[j].is_some()).collect();
    let windows = straddling
        .iter()
        .map(|&j| {
            (0..world)
                .map(|r| word(&runs, r, 2 * j) as usize..word(&runs, r, 2 * j + 1) as usize)
                .collect()
        })
        .collect();
    let fine_targets: Vec<usize> = straddling.iter().map(|&j| targets[j]).collect();
    let fine = search::<K>(comm, on, shard, &fine_targets, windows, full)?;
    let mut splits = coarse;
    for (&j, f) in straddling.iter().zip(fine) {
        splits[j] = f;
    }
    Ok(splits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_primitives::device::SortOptions;
    use gpu_primitives::half::{bf16, f16};
    use gpu_primitives::reference::sort::argsort;

    /// The stable order of `keys` by their compare keys is the reference's (which, over all bits,
    /// is written from the order's definition, not from the ordered bits).
    fn same_order<K: SortKey>(keys: &[K], options: SortOptions) {
        let bits = options.compared_bits::<K>().expect("a valid range");
        let compare = Compare::new(bits, options.is_descending());
        let mut by_compare: Vec<u32> = (0..keys.len() as u32).collect();
        by_compare.sort_by_key(|&i| compare.key(keys[i as usize]));
        assert_eq!(by_compare, argsort(keys, options), "{} {options:?}", K::NAME);
    }

    fn every_order<K: SortKey>(keys: &[K], range: (u32, u32)) {
        let (a, b) = (range.0 % (K::BITS + 1), range.1 % (K::BITS + 1));
        for options in [SortOptions::ascending(), SortOptions::descending()] {
            same_order(keys, options);
            same_order(keys, options.bits(a.min(b)..a.max(b)));
        }
    }

    proptest::proptest! {
        #[test]
        fn compare_keys_order_as_the_sort(
            bits in proptest::collection::vec(proptest::num::u64::ANY, 0..300),
            range in (0u32..65, 0u32..65),
        ) {
            // Raw bit patterns: every NaN payload and sign, both zeros, infinities, subnormals.
            every_order(&bits.iter().map(|&b| f32::from_bits(b as u32)).collect::<Vec<_>>(), range);
            every_order(&bits.iter().map(|&b| f64::from_bits(b)).collect::<Vec<_>>(), range);
            every_order(&bits.iter().map(|&b| f16::from_bits(b as u16)).collect::<Vec<_>>(), range);
            every_order(&bits.iter().map(|&b| bf16::from_bits(b as u16)).collect::<Vec<_>>(), range);
            every_order(&bits.iter().map(|&b| b as i32).collect::<Vec<_>>(), range);
            every_order(&bits.iter().map(|&b| b as i64).collect::<Vec<_>>(), range);
            every_order(&bits.iter().map(|&b| b as u8).collect::<Vec<_>>(), range);
            every_order(&bits.iter().map(|&b| (b % 7) as u16).collect::<Vec<_>>(), range);
        }
    }
}
