//! Rebalancing: the items the ranks hold (any counts, in rank order: the whole array is rank 0's
//! items, then rank 1's, ...) moved so that every rank holds an equal part of the whole, in the
//! same order: rank `r` ends with the items `[r * total / world, (r + 1) * total / world)`. One
//! all-gather of each rank's count, then NCCL's grouped point-to-point sends and receives (an
//! all-to-all of variable sizes: each rank sends each peer the part of its items that falls in
//! the peer's range). The step after a compaction ([`select_if`](crate::select_if), ...) whose
//! parts came out uneven, and the exchange of a sample sort.

use crate::collectives::gather_raw;
use crate::communicator::Communicator;
use crate::error::{Error, Result};
use cudarc::nccl::sys;
use gpu_primitives::OnStream;
use gpu_primitives::device::{DeviceView, DeviceViewMut};
use gpu_primitives::runtime::DeviceCopy;
use std::ops::Range;

/// One rank's part of a rebalancing: what it sends each peer and receives from each, in items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Exchange {
    /// The global range of items this rank holds afterwards.
    pub(crate) range: Range<usize>,
    /// `(peer, first item of this rank's input, count)`, for each peer with a count.
    pub(crate) sends: Vec<(usize, usize, usize)>,
    /// `(peer, first slot of this rank's output, count)`, for each peer with a count.
    pub(crate) receives: Vec<(usize, usize, usize)>,
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
            (o.start < o.end).then(|| (peer, o.start - mine.start, o.len()))
        })
        .collect();
    let receives = (0..world)
        .filter_map(|peer| {
            let o = overlap(&held(peer), &range);
            (o.start < o.end).then(|| (peer, o.start - range.start, o.len()))
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
    on: impl Into<OnStream<'g>>,
    items: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T>>,
) -> Result<Range<usize>> {
    let (on, items, output) = (on.into(), items.into(), output.into());
    comm.guarded(|comm| {
        comm.check_stream(&on, "rebalance")?;
        items.check_usable_on(&on, "rebalance: items")?;
        output.check_usable_on(&on, "rebalance: output")?;
        let (rank, world) = (comm.rank(), comm.world_size());
        let mut counts = vec![0u64; world];
        counts[rank] = items.len() as u64;
        if world > 1 {
            let buffer = on.stream().upload(&counts)?;
            let base = buffer.as_device_ptr().as_raw();
            gather_raw::<u64>(comm, &on, base + (rank * size_of::<u64>()) as u64, base, 1)?;
            counts = on.stream().download(&buffer)?;
        }
        let counts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
        let exchange = plan(&counts, rank);
        if output.len() < exchange.range.len() {
            return Err(Error::InvalidArgument(format!(
                "rebalance: output holds {} items, rank {rank}'s part is {}",
                output.len(),
                exchange.range.len()
            )));
        }
        let bytes = size_of::<T>();
        let (src, dst) = (items.address(), output.address());
        // This rank's own part: a copy on the stream.
        for &(peer, first, count) in &exchange.sends {
            if peer == rank {
                let slot = exchange.receives.iter().find(|r| r.0 == rank).map_or(0, |r| r.1);
                // SAFETY: `first + count <= items.len()` and `slot + count <= range.len() <=
                // output.len()` (the plan's ranges, checked above), both of this GPU (checked);
                // they do not overlap (the caller's contract); the stream orders the copy.
                unsafe {
                    on.stream().copy_address(
                        src + (first * bytes) as u64,
                        dst + (slot * bytes) as u64,
                        count * bytes,
                    )?
                };
            }
        }
        let remote = |list: &[(usize, usize, usize)]| list.iter().any(|x| x.0 != rank);
        if world > 1 && (remote(&exchange.sends) || remote(&exchange.receives)) {
            comm.collective(&on, "ncclSend / ncclRecv", |raw, stream| {
                // SAFETY: no arguments; the group is ended below whatever the calls returned.
                let started = unsafe { sys::ncclGroupStart() };
                if started != sys::ncclResult_t::ncclSuccess {
                    return started;
                }
                let mut first_error = sys::ncclResult_t::ncclSuccess;
                let mut note = |code: sys::ncclResult_t| {
                    if first_error == sys::ncclResult_t::ncclSuccess && code != sys::ncclResult_t::ncclSuccess
                    {
                        first_error = code;
                    }
                };
                for &(peer, first, count) in exchange.sends.iter().filter(|s| s.0 != rank) {
                    // SAFETY: `count` items from `first` of `items` (within it: the plan),
                    // alive and unchanged until the call has waited for the group.
                    note(unsafe {
                        sys::ncclSend(
                            (src + (first * bytes) as u64) as *const _,
                            count * bytes,
                            sys::ncclDataType_t::ncclUint8,
                            peer as i32,
                            raw,
                            stream,
                        )
                    });
                }
                for &(peer, slot, count) in exchange.receives.iter().filter(|r| r.0 != rank) {
                    // SAFETY: `count` slots from `slot` of `output` (within this rank's part,
                    // which `output` holds: checked), borrowed until the call has waited.
                    note(unsafe {
                        sys::ncclRecv(
                            (dst + (slot * bytes) as u64) as *mut _,
                            count * bytes,
                            sys::ncclDataType_t::ncclUint8,
                            peer as i32,
                            raw,
                            stream,
                        )
                    });
                }
                // SAFETY: ends the group started above.
                let ended = unsafe { sys::ncclGroupEnd() };
                if first_error != sys::ncclResult_t::ncclSuccess {
                    first_error
                } else {
                    ended
                }
            })?;
        }
        on.stream().synchronize()?;
        Ok(exchange.range)
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
            for &(peer, first, count) in &p.sends {
                // The peer's receive from r says where these land.
                let &(_, slot, n) = plans[peer]
                    .receives
                    .iter()
                    .find(|x| x.0 == r)
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
