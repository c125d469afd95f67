//! Compaction of an array sharded across the ranks, with global positions: each rank compacts
//! its shard with the single-GPU library (CUB's `DeviceSelect` / `DevicePartition` algorithms),
//! then the ranks' counts are gathered (an all-gather of two `u64` a rank), so each rank learns
//! where its items go in the whole array's result: the items stay on their rank, and
//! [`Placement`] says at which global index its part starts. The result is the single-GPU call's
//! on the concatenated shards, split by rank.
//!
//! [`unique`] also exchanges each shard's last item first: a shard's first item is dropped when
//! it repeats the last item of the nearest earlier non-empty shard.

use crate::collectives::gather_raw;
use crate::communicator::Communicator;
use crate::error::Result;
use gpu_primitives::device::{self, DeviceView, DeviceViewMut, DeviceWorkspace, Element, Predicate};
use gpu_primitives::{CallOn, DeviceBuffer};

/// Where one rank's part of a compaction's result is in the whole result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Items this rank kept: its output's first `kept` items.
    pub kept: usize,
    /// The whole result's index of this rank's first kept item.
    pub offset: usize,
    /// Items kept over every rank.
    pub total: usize,
}

/// Where one rank's parts of a partition's result are: its selected items come first in the
/// whole result (after the earlier ranks' selected ones), its rejected ones after every rank's
/// selected items (and the earlier ranks' rejected ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionPlacement {
    /// The selected items: the output's first `kept`.
    pub selected: Placement,
    /// The rejected items: the output's next `kept`; `offset` counts from the whole result's
    /// start (every rank's selected items first).
    pub rejected: Placement,
}

/// Rank `rank`'s placement among the ranks' `(kept, len)` counts (selected items' placement;
/// the rejected ones' where `rejected`; unit tests below).
fn placement(counts: &[(usize, usize)], rank: usize, rejected: bool) -> Placement {
    let part = |&(kept, len): &(usize, usize)| if rejected { len - kept } else { kept };
    let before: usize = counts[..rank].iter().map(part).sum();
    let total: usize = counts.iter().map(part).sum();
    let selected_total: usize = counts.iter().map(|c| c.0).sum();
    Placement {
        kept: part(&counts[rank]),
        offset: before + if rejected { selected_total } else { 0 },
        total,
    }
}

/// The counts' record of every rank: `records` holds two `u64` a rank (`kept`, written by the
/// local call into slot `2 * rank`; the shard's length, written here into `2 * rank + 1`), all
/// gathered; every rank's `(kept, len)`.
fn exchange_counts(
    comm: &mut Communicator,
    on: &CallOn<'_>,
    records: &DeviceBuffer<u64>,
    len: usize,
) -> Result<Vec<(usize, usize)>> {
    let rank = comm.rank();
    let base = records.as_device_ptr().as_raw();
    let slot = |i: usize| base + (i * size_of::<u64>()) as u64;
    // SAFETY: slot 2 * rank + 1 is one live u64 of `records`, of this stream's context; the
    // local call wrote only slot 2 * rank.
    unsafe { on.stream().copy_from_host(slot(2 * rank + 1), &[len as u64])? };
    if comm.world_size() > 1 {
        gather_raw::<u64>(comm, on, slot(2 * rank), base, 2)?;
    }
    let all = on.stream().download(records)?;
    Ok(all.chunks(2).map(|c| (c[0] as usize, c[1] as usize)).collect())
}

/// Check the output's length before anything runs (the single-GPU call checks it too, but
/// after [`unique`]'s exchange).
fn check_output(what: &'static str, shard: usize, output: usize) -> Result<()> {
    if output < shard {
        return Err(gpu_primitives::Error::LengthMismatch {
            what,
            expected: shard,
            found: output,
        }
        .into());
    }
    Ok(())
}

/// Keep the items of every rank's `shard` that pass `predicate`, in order (CUB's
/// `DeviceSelect::If` over the concatenated shards): this rank's kept items at the front of its
/// `output` (which holds at least the shard's length; the rest is left alone), and where they
/// are in the whole result. Returns once the items are in `output`.
///
/// # Errors
/// As [`device::select_if`] before any NCCL call (the other ranks then time out); an
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a stream of another GPU; as
/// [`Communicator`] says.
pub fn select_if<'a, 'o, 'g, T: Element>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'a, T>>,
    predicate: Predicate<T>,
    output: impl Into<DeviceViewMut<'o, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<Placement> {
    let (on, shard, output) = (on.into(), shard.into(), output.into());
    compacted(comm, &on, shard.len(), false, |count| {
        device::select_if(on, shard, predicate, output, count, workspace)
    })
    .map(|p| p.selected)
}

/// Keep the items of every rank's `shard` whose byte of `flags` (one a shard item) is not 0,
/// as [`select_if`] (CUB's `DeviceSelect::Flagged`).
///
/// # Errors
/// As [`select_if`], and for `flags` shorter than the shard.
pub fn select_flagged<'a, 'f, 'o, 'g, T: Element>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'a, T>>,
    flags: impl Into<DeviceView<'f, u8>>,
    output: impl Into<DeviceViewMut<'o, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<Placement> {
    let (on, shard, output) = (on.into(), shard.into(), output.into());
    let flags = flags.into();
    compacted(comm, &on, shard.len(), false, |count| {
        device::select_flagged(on, shard, flags, output, count, workspace)
    })
    .map(|p| p.selected)
}

/// Stable partition of the whole array (CUB's `DevicePartition::If` over the concatenated
/// shards, with the rejected items in input order): this rank's selected items then its
/// rejected ones fill its `output` (at least the shard's length), and the placement of each
/// part in the whole result, whose every selected item comes before every rejected one.
///
/// # Errors
/// As [`select_if`].
pub fn partition_if<'a, 'o, 'g, T: Element>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'a, T>>,
    predicate: Predicate<T>,
    output: impl Into<DeviceViewMut<'o, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<PartitionPlacement> {
    let (on, shard, output) = (on.into(), shard.into(), output.into());
    compacted(comm, &on, shard.len(), true, |count| {
        device::partition_if(on, shard, predicate, output, count, workspace)
    })
}

/// Run `local` (a single-GPU compaction writing its count to the view it is given), then
/// exchange the counts.
fn compacted(
    comm: &mut Communicator,
    on: &CallOn<'_>,
    len: usize,
    partition: bool,
    local: impl FnOnce(DeviceViewMut<'_, u64>) -> gpu_primitives::Result<()>,
) -> Result<PartitionPlacement> {
    comm.guarded(|comm| {
        comm.check_stream(on, "compaction")?;
        let (rank, world) = (comm.rank(), comm.world_size());
        // On the call's stream, so that its clearing is ordered before the writes.
        let mut records = on.stream().alloc_zeroed::<u64>(2 * world)?;
        local(DeviceViewMut::from(&mut records).slice(2 * rank..2 * rank + 1))?;
        let counts = exchange_counts(comm, on, &records, len)?;
        Ok(PartitionPlacement {
            selected: placement(&counts, rank, false),
            rejected: if partition {
                placement(&counts, rank, true)
            } else {
                Placement {
                    kept: 0,
                    offset: 0,
                    total: 0,
                }
            },
        })
    })
}

/// Drop the consecutive duplicates of the whole array (CUB's `DeviceSelect::Unique` over the
/// concatenated shards: an item is kept where it differs, `!=` in its accumulator type, from the
/// item before it in the whole array; -0.0 and +0.0 are duplicates, every NaN is kept): this
/// rank's kept items at the front of its `output` (at least the shard's length), and where they
/// are in the whole result.
///
/// Two exchanges: each shard's length and last item (to know whether this shard's first item
/// repeats the nearest earlier non-empty shard's last), then the counts. Where it does, the
/// shard's unique items are made in a temporary buffer and all but the first copied to `output`.
///
/// # Errors
/// As [`select_if`].
pub fn unique<'a, 'o, 'g, T: Element>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<Placement> {
    let (on, shard, mut output) = (on.into(), shard.into(), output.into());
    comm.guarded(|comm| {
        comm.check_stream(&on, "unique")?;
        check_output("unique: output shorter than the shard", shard.len(), output.len())?;
        shard.check_usable_on(on, "unique: shard")?;
        output.check_usable_on(on, "unique: output")?;
        let (rank, world) = (comm.rank(), comm.world_size());
        let n = shard.len();
        let item_bytes = size_of::<T::Raw>();
        // This shard's first and last items, as the device stores them.
        let mut ends = [T::Raw::default(); 2];
        if n > 0 {
            let last = shard.address() + ((n - 1) * item_bytes) as u64;
            // SAFETY: the shard's first and last items, live device memory of this stream's GPU
            // (checked above), read into host slots of their size.
            unsafe {
                on.stream().copy_to_host(shard.address(), &mut ends[..1])?;
                on.stream().copy_to_host(last, &mut ends[1..])?;
            }
        }
        let as_acc = |raw: T::Raw| T::from_raw(&[raw])[0].to_acc();
        let mut last_bits = [0u8; 8];
        last_bits[..item_bytes].copy_from_slice(bytemuck::bytes_of(&ends[1]));
        // Slot 2r: the shard's length; 2r + 1: its last item's bytes.
        let mut boundary = vec![0u64; 2 * world];
        boundary[2 * rank] = n as u64;
        boundary[2 * rank + 1] = u64::from_le_bytes(last_bits);
        if world > 1 {
            let records = on.stream().upload(&boundary)?;
            let base = records.as_device_ptr().as_raw();
            gather_raw::<u64>(comm, &on, base + (2 * rank * size_of::<u64>()) as u64, base, 2)?;
            boundary = on.stream().download(&records)?;
        }
        let previous = (0..rank).rev().find(|&r| boundary[2 * r] > 0).map(|r| {
            let bytes = boundary[2 * r + 1].to_le_bytes();
            as_acc(bytemuck::pod_read_unaligned(&bytes[..item_bytes]))
        });
        let repeats = n > 0 && previous.is_some_and(|p| !(as_acc(ends[0]) != p));
        let mut records = on.stream().alloc_zeroed::<u64>(2 * world)?;
        let count_slot = records.as_device_ptr().as_raw() + (2 * rank * size_of::<u64>()) as u64;
        if repeats {
            // SAFETY: nothing reads the scratch's items before the unique call below writes them.
            let scratch = unsafe { on.stream().alloc::<T::Raw>(n)? };
            // SAFETY: `scratch` holds n items of T as the device stores them and nothing else
            // uses it; it is dropped at the end of this block, after the stream is synchronised.
            let scratch_view =
                unsafe { DeviceViewMut::<T>::from_raw_parts(scratch.as_device_ptr().as_raw(), n) };
            let mut all_counts = DeviceViewMut::from(&mut records);
            device::unique(
                on,
                shard,
                scratch_view,
                all_counts.slice(2 * rank..2 * rank + 1),
                workspace,
            )?;
            let mut kept = [0u64];
            // SAFETY: the count slot of `records`, written by the unique call on this stream.
            unsafe { on.stream().copy_to_host(count_slot, &mut kept)? };
            let kept = kept[0] as usize; // at least 1: the shard is not empty
            // SAFETY: `scratch` holds `kept` items written by the call above; `output` holds at
            // least n >= kept items of this GPU (checked); they do not overlap (scratch is new).
            unsafe {
                on.stream().copy_address(
                    scratch.as_device_ptr().as_raw() + item_bytes as u64,
                    output.address(),
                    (kept - 1) * item_bytes,
                )?;
                on.stream().copy_from_host(count_slot, &[kept as u64 - 1])?;
            }
            // The copy out of `scratch` has run before it is freed, also where the copy of the
            // count failed.
            on.stream().synchronize()?;
        } else {
            let mut all_counts = DeviceViewMut::from(&mut records);
            device::unique(
                on,
                shard,
                output.slice(0..n),
                all_counts.slice(2 * rank..2 * rank + 1),
                workspace,
            )?;
        }
        let counts = exchange_counts(comm, &on, &records, n)?;
        Ok(placement(&counts, rank, false))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_count_the_earlier_ranks() {
        let counts = [(2, 5), (0, 0), (3, 4)];
        assert_eq!(
            placement(&counts, 0, false),
            Placement {
                kept: 2,
                offset: 0,
                total: 5
            }
        );
        assert_eq!(
            placement(&counts, 1, false),
            Placement {
                kept: 0,
                offset: 2,
                total: 5
            }
        );
        assert_eq!(
            placement(&counts, 2, false),
            Placement {
                kept: 3,
                offset: 2,
                total: 5
            }
        );
        // Rejected: 3, 0 and 1 items, after the 5 selected ones.
        assert_eq!(
            placement(&counts, 0, true),
            Placement {
                kept: 3,
                offset: 5,
                total: 4
            }
        );
        assert_eq!(
            placement(&counts, 2, true),
            Placement {
                kept: 1,
                offset: 8,
                total: 4
            }
        );
    }

    #[test]
    fn too_short_outputs_are_refused() {
        assert!(check_output("x", 10, 9).is_err());
        assert!(check_output("x", 10, 10).is_ok());
        assert!(check_output("x", 0, 0).is_ok());
    }
}
