//! Sort of an array sharded across the ranks: every rank ends with an equal part of the whole
//! array in order (the ranks' parts in rank order), stable across ranks (equal keys keep the
//! order of the whole array: rank 0's first, each rank's in its shard's order).
//!
//! An MSB-first partition with exact splitters (the exchange of RMG sort, Ilic et al., BTW 2023,
//! and of Maltenberger et al., SIGMOD 2022; the splitters by exact multi-sequence selection, as
//! in Varman et al., 1991, on gathered samples as PSRS, Shi and Schaeffer, 1992, gathers them):
//!
//! 1. each rank sorts its shard by the top digit of the compared bits (8 bits: the single-GPU
//!    radix sort's histogram and one pass), stably, into scratch memory;
//! 2. the ranks find, for each boundary between two ranks' parts, where every shard splits so
//!    that exactly the items before the boundary come before it, in the digit's order
//!    ([`splitters::search`]): a few rounds of evenly spaced samples of each shard (one strided
//!    copy to the host a boundary), each round one all-gather of `u64` compare keys. Where a
//!    boundary falls inside one digit's items, each rank sorts its run of that digit by the
//!    remaining bits and the search runs again among those runs in the full order
//!    ([`splitters::refine`]);
//! 3. every rank sends each peer its run of items that falls in the peer's part (NCCL's grouped
//!    `ncclSend` / `ncclRecv`, as [`rebalance`](crate::rebalance));
//! 4. each rank sorts what it received (the runs, in rank order) with the single-GPU sort.
//!
//! A rank reads and writes its shard in about one and a quarter sorts of 32-bit keys (the digit
//! pass, the straddled runs, the final sort), and each item crosses NVLink or the network at
//! most once. Keys of 8 compared bits or fewer are sorted whole in step 1.

mod select;
mod splitters;

use crate::collectives::gather_verdicts;
use crate::communicator::Communicator;
use crate::error::{Error, Result};
use crate::exchange::{Moved, Run, exchange};
use crate::rebalance::balanced;
use gpu_primitives::CallOn;
use gpu_primitives::device::{self, DeviceView, DeviceViewMut, DeviceWorkspace, SortKey, SortOptions};
use gpu_primitives::runtime::DeviceCopy;
use splitters::{Compare, Shard, refine, search};
use std::ops::Range;

/// Bits of the top digit the shards are first sorted by (one pass of the radix sort).
const DIGIT_BITS: u32 = 8;

/// Sort the keys of every rank's `keys` (its shard of the whole array: any length, empty too)
/// across the ranks, as the single-GPU [`device::sort_keys`] sorts the concatenated shards:
/// returns this rank's part of the sorted whole array, `[rank * total / world, (rank + 1) *
/// total / world)` (parts differ by at most one key), written to `output[..part.len()]`; the
/// rest of `output` is left alone. `output` must hold this rank's part: `ceil(total / world)`
/// keys always suffice. Stable across ranks: keys equal in the compared bits keep their order
/// in the whole array (rank 0's shard first). Deterministic. `keys` is left unchanged. Returns
/// once `output` is written.
///
/// Device memory on each rank: a copy of the shard (keys and values), which the communicator
/// keeps for its next calls ([`Communicator::release_memory`] frees it), and what the
/// single-GPU sort needs for the shard and for the part (a copy of the part, through
/// `workspace`).
///
/// # Errors
/// [`gpu_primitives::Error`] (as [`Error::Gpu`]) for a bit range past the key's width, a shard
/// or part of more than `SORT_MAX_KEYS` (2^32 - 1) keys, memory of another GPU, or out of
/// device memory; [`Error::InvalidArgument`] for a stream of another GPU or an `output` shorter
/// than this rank's part. Every rank learns of each rank's verdict on its own arguments and
/// output room from the first all-gather: a refusal anywhere is an error on every rank at once
/// (the refusing rank's own, [`Error::InvalidArgument`] on the others), and leaves the
/// communicator usable. A stream of another GPU cannot take part in that all-gather: it is
/// refused on its rank alone, which aborts its communicator, and the other ranks time out.
/// Other errors are as [`Communicator`] says.
pub fn sort_keys<'a, 'o, 'g, K: SortKey>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceView<'a, K>>,
    output: impl Into<DeviceViewMut<'o, K>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<Range<usize>> {
    sort::<K, u32>(
        comm,
        on.into(),
        (keys.into(), None),
        (output.into(), None),
        options,
        workspace,
    )
}

/// Sort `(key, value)` pairs across the ranks, each value moving with its key: as
/// [`sort_keys`], for `values` of 4 or 8 bytes (a compile-time check) beside each rank's
/// `keys`, the part's values written to `values_out[..part.len()]`.
///
/// # Errors
/// As [`sort_keys`], and [`gpu_primitives::Error::LengthMismatch`] (as [`Error::Gpu`]) for
/// `values` of another length than `keys`, or `values_out` shorter than this rank's part.
#[allow(clippy::too_many_arguments)]
pub fn sort_pairs<'a, 'b, 'o, 'p, 'g, K: SortKey, V: DeviceCopy>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceView<'a, K>>,
    values: impl Into<DeviceView<'b, V>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    values_out: impl Into<DeviceViewMut<'p, V>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<Range<usize>> {
    sort::<K, V>(
        comm,
        on.into(),
        (keys.into(), Some(values.into())),
        (keys_out.into(), Some(values_out.into())),
        options,
        workspace,
    )
}

fn sort<K: SortKey, V: DeviceCopy>(
    comm: &mut Communicator,
    on: CallOn<'_>,
    (keys, values): (DeviceView<'_, K>, Option<DeviceView<'_, V>>),
    (mut keys_out, mut values_out): (DeviceViewMut<'_, K>, Option<DeviceViewMut<'_, V>>),
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<Range<usize>> {
    // A refusal every rank learns of from the first all-gather leaves the communicator as it
    // was (the inner error); any other error aborts it.
    comm.guarded(|comm| {
        // A stream of another GPU cannot take part in the all-gather: refused on this rank alone.
        comm.check_stream(&on, "sort")?;
        let n = keys.len();
        let mine = check_arguments(&on, (&keys, &values), (&keys_out, &values_out), &options);
        // The room of this rank's outputs: the shorter's.
        let room = values_out
            .as_ref()
            .map_or(keys_out.len(), |v| v.len().min(keys_out.len()));
        comm.phases_begin();
        let verdicts = gather_verdicts(comm, &on, "sort", mine, &[n as u64, room as u64])?;
        let (bits, words) = match verdicts {
            Ok(agreed) => agreed,
            Err(refused) => return Ok(Err(refused)),
        };
        let (rank, world) = (comm.rank(), comm.world_size());
        let counts: Vec<usize> = words.iter().map(|w| w[0] as usize).collect();
        let total: usize = counts.iter().sum();
        let part = balanced(rank, world, total);
        comm.phase_end(&on, "counts")?;
        // Every rank's part against the limit and that rank's outputs: the same verdict on
        // every rank.
        for (r, w) in words.iter().enumerate() {
            let part = balanced(r, world, total);
            if let Err(e) = check_limit(&format!("rank {r}'s part"), part.len()) {
                return Ok(Err(e));
            }
            if (w[1] as usize) < part.len() {
                return Ok(Err(Error::InvalidArgument(format!(
                    "sort: rank {r}'s output holds {} keys (or values), its part is {}",
                    w[1],
                    part.len()
                ))));
            }
        }
        if world == 1 {
            local_sort(
                on,
                keys,
                values,
                &mut keys_out,
                &mut values_out,
                options,
                workspace,
            )?;
            return Ok(Ok(on.stream().synchronize().map(|()| part)?));
        }
        // 1. The shard sorted into scratch memory (the input stays as it was) by its top digit
        // (the compared bits' top 8: one pass of the radix sort), or by every compared bit where
        // they are 8 or fewer.
        let digit_bits = bits.end.saturating_sub(DIGIT_BITS).max(bits.start)..bits.end;
        let by_digit = digit_bits.start > bits.start;
        let first = if by_digit {
            options.bits(digit_bits.clone())
        } else {
            options
        };
        // The sorted shard in the communicator's scratch memory, kept between calls: its keys,
        // then (from a 256-byte boundary) its values, each padded to 16 bytes (NCCL's send
        // kernels load whole words past the end of a run of bytes).
        let keys_bytes = (n * size_of::<K::Raw>()).next_multiple_of(256);
        let values_bytes = if values.is_some() {
            (n * size_of::<V>()).next_multiple_of(16)
        } else {
            0
        };
        let address = comm.scratch(&on, keys_bytes + values_bytes)?;
        let values_address = values.map(|_| address + keys_bytes as u64);
        {
            // SAFETY: `n` stored keys and `n` values of the scratch memory (it holds both),
            // which nothing else uses during the call, each written by the sort below before
            // anything reads it (the sort is queued first on this stream).
            let mut sorted = unsafe { DeviceViewMut::<K>::from_raw_parts(address, n) };
            // SAFETY: as the keys.
            let mut sorted_v = values_address.map(|a| unsafe { DeviceViewMut::<V>::from_raw_parts(a, n) });
            local_sort(on, keys, values, &mut sorted, &mut sorted_v, first, workspace)?;
        }
        comm.phase_end(&on, "digit sort")?;
        // 2. Where each sorted shard splits between the ranks' parts: in the digit's order,
        // then exactly where a digit's keys straddle a boundary.
        let staging = comm.samples(&on, splitters::SAMPLES * size_of::<K::Raw>())?;
        let shard = Shard {
            address,
            len: n,
            staging,
        };
        let targets: Vec<usize> = (1..world).map(|j| balanced(j, world, total).start).collect();
        let whole: Vec<Range<usize>> = counts.iter().map(|&c| 0..c).collect();
        let windows = vec![whole; world - 1];
        let full = Compare::new(bits.clone(), options.is_descending());
        let inner = if by_digit {
            let digit = Compare::new(digit_bits.clone(), options.is_descending());
            let coarse = search::<K>(comm, &on, shard, &targets, windows, digit)?;
            let rest = options.bits(bits.start..digit_bits.start);
            refine::<K>(comm, &on, shard, &targets, coarse, digit, full, |run| {
                // SAFETY: `run` lies within the sorted shard's `n` keys (and values), this
                // call's scratch buffers, which nothing else uses meanwhile.
                let mut keys = unsafe {
                    DeviceViewMut::<K>::from_raw_parts(
                        address + (run.start * size_of::<K::Raw>()) as u64,
                        run.len(),
                    )
                };
                let mut values = values_address.map(|a| {
                    // SAFETY: as the keys.
                    unsafe {
                        DeviceViewMut::<V>::from_raw_parts(a + (run.start * size_of::<V>()) as u64, run.len())
                    }
                });
                local_sort_in_place(on, &mut keys, &mut values, rest, workspace)
            })?
        } else {
            search::<K>(comm, &on, shard, &targets, windows, full)?
        };
        let mut splits = vec![vec![0; world]];
        splits.extend(inner);
        splits.push(counts.clone());
        comm.phase_end(&on, "splitters")?;
        // 3. The exchange: this rank's run for rank j is [splits[j][rank], splits[j + 1][rank]).
        let run = |j: usize, r: usize| splits[j][r]..splits[j + 1][r];
        let sends: Vec<Run> = (0..world)
            .map(|j| Run {
                peer: j,
                at: run(j, rank).start,
                count: run(j, rank).len(),
            })
            .collect();
        let receives: Vec<Run> = (0..world)
            .scan(0, |at, r| {
                let count = run(rank, r).len();
                *at += count;
                Some(Run {
                    peer: r,
                    at: *at - count,
                    count,
                })
            })
            .collect();
        debug_assert_eq!(receives.iter().map(|r| r.count).sum::<usize>(), part.len());
        let mut moved = vec![Moved {
            source: address,
            target: keys_out.address(),
            item_bytes: size_of::<K::Raw>(),
        }];
        if let (Some(values_address), Some(values_out)) = (values_address, &values_out) {
            moved.push(Moved {
                source: values_address,
                target: values_out.address(),
                item_bytes: size_of::<V>(),
            });
        }
        // SAFETY: the sends lie within the sorted shard (`splits` are positions of it, from 0
        // to `n`) and the receives within this rank's part, which the outputs hold (checked);
        // the scratch memory is the communicator's (this call's alone), the outputs borrowed
        // mutably, all of this GPU (checked); every rank computed the same splits from the same
        // gathered samples.
        unsafe { exchange(comm, &on, &sends, &receives, &moved)? };
        comm.phase_end(&on, "exchange")?;
        // 4. The received runs (in rank order, each sorted) sorted in place.
        let len = part.len();
        let mut part_keys = keys_out.slice(0..len);
        let mut part_values = values_out.as_mut().map(|v| v.slice(0..len));
        local_sort_in_place(on, &mut part_keys, &mut part_values, options, workspace)?;
        // The call returns with `output` written.
        on.stream().synchronize()?;
        comm.phase_end(&on, "final sort")?;
        Ok(Ok(part))
    })?
}

/// This rank's own arguments: the views usable on the stream, values as long as the keys, the
/// bit range within the key, the shard within one GPU's sort. Returns the compared bits.
fn check_arguments<K: SortKey, V: DeviceCopy>(
    on: &CallOn<'_>,
    (keys, values): (&DeviceView<'_, K>, &Option<DeviceView<'_, V>>),
    (keys_out, values_out): (&DeviceViewMut<'_, K>, &Option<DeviceViewMut<'_, V>>),
    options: &SortOptions,
) -> Result<Range<u32>> {
    keys.check_usable_on(*on, "sort: keys")?;
    keys_out.check_usable_on(*on, "sort: keys_out")?;
    if let (Some(values), Some(values_out)) = (values, values_out) {
        values.check_usable_on(*on, "sort: values")?;
        values_out.check_usable_on(*on, "sort: values_out")?;
        if values.len() != keys.len() {
            return Err(gpu_primitives::Error::LengthMismatch {
                what: "sort_pairs: values",
                expected: keys.len(),
                found: values.len(),
            }
            .into());
        }
    }
    let bits = options.compared_bits::<K>()?;
    check_limit("a shard", keys.len())?;
    Ok(bits)
}

/// Refuse more keys than one single-GPU sort takes.
fn check_limit(what: &str, keys: usize) -> Result<()> {
    if keys > device::SORT_MAX_KEYS {
        return Err(Error::InvalidArgument(format!(
            "sort: {what} of {keys} keys, past the {} one GPU sorts in one call",
            device::SORT_MAX_KEYS
        )));
    }
    Ok(())
}

/// The single-GPU sort of a shard (and its values) into `keys_out[..n]`.
fn local_sort<K: SortKey, V: DeviceCopy>(
    on: CallOn<'_>,
    keys: DeviceView<'_, K>,
    values: Option<DeviceView<'_, V>>,
    keys_out: &mut DeviceViewMut<'_, K>,
    values_out: &mut Option<DeviceViewMut<'_, V>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let n = keys.len();
    let out = keys_out.slice(0..n);
    match (values, values_out) {
        (Some(values), Some(values_out)) => {
            device::sort_pairs(on, keys, values, out, values_out.slice(0..n), options, workspace)?
        }
        _ => device::sort_keys(on, keys, out, options, workspace)?,
    }
    Ok(())
}

/// The single-GPU sort of a part (and its values) in place.
fn local_sort_in_place<K: SortKey, V: DeviceCopy>(
    on: CallOn<'_>,
    keys: &mut DeviceViewMut<'_, K>,
    values: &mut Option<DeviceViewMut<'_, V>>,
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let n = keys.len();
    match values {
        Some(values) => {
            device::sort_pairs_in_place(on, keys.slice(0..n), values.slice(0..n), options, workspace)?
        }
        None => device::sort_keys_in_place(on, keys.slice(0..n), options, workspace)?,
    }
    Ok(())
}
