//! Rebalancing: the items the ranks hold (any counts, in rank order: the whole array is rank 0's
//! items, then rank 1's, ...) moved so that every rank holds an equal part of the whole, in the
//! same order: rank `r` ends with the items `[r * total / world, (r + 1) * total / world)`. One
//! all-gather of each rank's count, then NCCL's grouped point-to-point sends and receives (an
//! all-to-all of variable sizes: each rank sends each peer the part of its items that falls in
//! the peer's range). The step after a compaction ([`select_if`](crate::select_if), ...) whose
//! parts came out uneven, and the exchange of a sample sort.

use crate::collectives::gather_words;
use crate::communicator::Communicator;
use crate::error::{Error, Result};
use crate::exchange::{Moved, Run, exchange};
use gpu_primitives::CallOn;
use gpu_primitives::device::{DeviceView, DeviceViewMut};
use gpu_primitives::runtime::DeviceCopy;
use std::ops::Range;

/// One rank's part of a rebalancing: what it sends each peer and receives from each, in items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Exchange {
    /// The global range of items this rank holds afterwards.
    pub(crate) range: Range<usize>,
    /// From this rank's input, a run for each peer with a count.
    pub(crate) sends: Vec<Run>,
    /// Into this rank's output, a run for each peer with a count.
    pub(crate) receives: Vec<Run>,
}

/// The global range rank `r` of `world` holds after rebalancing `total` items: `[r * total /
/// world, (r + 1) * total / world)` (sizes differ by at most one item).
pub(crate) fn balanced(r: usize, world: usize, total: usize) -> Range<usize> {
    // u128: `r * total` may pass usize on a 64-bit machine only past 2^64 / world items, but
    // costs nothing to rule out.
    let at = |r: usize| (r as u128 * total as u128 / world as u128) as usize;
    at(r)..at(r + 1)
}

/// Rank `rank`'s exchange given every rank's count of items held (in rank order).
pub(crate) fn plan(counts: &[usize], rank: usize) -> Exchange {
    let world = counts.len();
    let total: usize = counts.iter().sum();
    let starts: Vec<usize> = counts
        .iter()
        .scan(0, |at, &c| {
            let start = *at;
            *at += c;
            Some(start)
        })
        .collect();
    let held = |r: usize| starts[r]..starts[r] + counts[r];
    let overlap = |a: &Range<usize>, b: &Range<usize>| a.start.max(b.start)..a.end.min(b.end);
    let mine = held(rank);
    let range = balanced(rank, world, total);
    let sends = (0..world)
        .filter_map(|peer| {
            let o = overlap(&mine, &balanced(peer, world, total));
            (o.start < o.end).then(|| Run {
                peer,
                at: o.start - mine.start,
                count: o.len(),
            })
        })
        .collect();
    let receives = (0..world)
        .filter_map(|peer| {
            let o = overlap(&held(peer), &range);
            (o.start < o.end).then(|| Run {
                peer,
                at: o.start - range.start,
                count: o.len(),
            })
        })
        .collect();
    Exchange {
        range,
        sends,
        receives,
    }
}

/// Move every rank's `items` (this rank's part of the whole array, in rank order) so that each
/// rank holds an equal part, in order: this rank's part is written to `output[..len]` and its
/// global range returned (`len` = its length, at most `ceil(total / world)`; `output` must hold
/// that many: a rank's `output` may be too short only by its own fault). Returns once the items
/// are in `output`; `items` is left unchanged. `output` must not overlap `items`.
///
/// # Errors
/// [`Error::InvalidArgument`] for an `output` shorter than this rank's part (found after the
/// count exchange: the other ranks then time out), or a stream of another GPU;
/// [`gpu_primitives::Error::WrongContext`] (as [`Error::Gpu`]) for memory of another GPU; as
/// [`Communicator`] says.
pub fn rebalance<'a, 'o, 'g, T: DeviceCopy + bytemuck::Pod>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    items: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T>>,
) -> Result<Range<usize>> {
    let (on, items, output) = (on.into(), items.into(), output.into());
    comm.guarded(|comm| {
        comm.check_stream(&on, "rebalance")?;
        items.check_usable_on(on, "rebalance: items")?;
        output.check_usable_on(on, "rebalance: output")?;
        let rank = comm.rank();
        let counts = gather_words(comm, &on, &[items.len() as u64])?;
        let counts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
        let mine = plan(&counts, rank);
        if output.len() < mine.range.len() {
            return Err(Error::InvalidArgument(format!(
                "rebalance: output holds {} items, rank {rank}'s part is {}",
                output.len(),
                mine.range.len()
            )));
        }
        let moved = Moved {
            source: items.address(),
            target: output.address(),
            item_bytes: size_of::<T>(),
        };
        // SAFETY: the plan's sends lie within `items` and its receives within this rank's
        // part, which `output` holds (checked above), both of this GPU (checked) and borrowed
        // until the exchange has returned; they do not overlap (the caller's contract); every
        // rank's plan is computed from the same gathered counts, so the runs match.
        unsafe { exchange(comm, &on, &mine.sends, &mine.receives, &[moved])? };
        Ok(mine.range)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item's move, simulated: each rank's output from the plans of all ranks.
    fn simulate(counts: &[usize]) -> Vec<Vec<usize>> {
        let world = counts.len();
        let mut start = 0;
        let inputs: Vec<Vec<usize>> = counts
            .iter()
            .map(|&c| {
                let v: Vec<usize> = (start..start + c).collect();
                start += c;
                v
            })
            .collect();
        let plans: Vec<Exchange> = (0..world).map(|r| plan(counts, r)).collect();
        let mut outputs: Vec<Vec<Option<usize>>> = plans.iter().map(|p| vec![None; p.range.len()]).collect();
        for (r, p) in plans.iter().enumerate() {
            for &Run {
                peer,
                at: first,
                count,
            } in &p.sends
            {
                // The peer's receive from r says where these land.
                let &Run {
                    at: slot, count: n, ..
                } = plans[peer]
                    .receives
                    .iter()
                    .find(|x| x.peer == r)
                    .expect("a matching receive");
                assert_eq!(n, count, "send and receive sizes of {r} -> {peer}");
                for i in 0..count {
                    assert!(
                        outputs[peer][slot + i].replace(inputs[r][first + i]).is_none(),
                        "a slot written twice"
                    );
                }
            }
        }
        outputs
            .into_iter()
            .map(|o| o.into_iter().map(|x| x.expect("a slot never written")).collect())
            .collect()
    }

    #[test]
    fn every_item_lands_once_in_order_in_equal_parts() {
        for counts in [
            vec![10, 0, 3],
            vec![0, 0, 0],
            vec![7],
            vec![0, 13],
            vec![1, 1, 1, 1, 9],
            vec![100, 1, 0, 57],
        ] {
            let outputs = simulate(&counts);
            let total: usize = counts.iter().sum();
            let flat: Vec<usize> = outputs.concat();
            assert_eq!(flat, (0..total).collect::<Vec<_>>(), "{counts:?}");
            let (lo, hi) = outputs
                .iter()
                .fold((usize::MAX, 0), |(lo, hi), o| (lo.min(o.len()), hi.max(o.len())));
            assert!(hi - lo <= 1, "{counts:?}: parts of {lo} to {hi} items");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_counts_rebalance(counts in proptest::collection::vec(0usize..50, 1..9)) {
            let outputs = simulate(&counts);
            let total: usize = counts.iter().sum();
            proptest::prop_assert_eq!(outputs.concat(), (0..total).collect::<Vec<_>>());
        }
    }

    #[test]
    fn balanced_ranges_tile_the_whole() {
        assert_eq!(
            (0..3).map(|r| balanced(r, 3, 10)).collect::<Vec<_>>(),
            [0..3, 3..6, 6..10]
        );
        assert_eq!(balanced(1, 2, usize::MAX), usize::MAX / 2..usize::MAX);
    }
}
