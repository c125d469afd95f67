//! Sort of an array sharded across the ranks: every rank ends with an equal part of the whole
//! array in order (the ranks' parts in rank order), stable across ranks (equal keys keep the
//! order of the whole array: rank 0's first, each rank's in its shard's order).
//!
//! A sample sort with exact splitters (the design of Sanders and Winkel's super scalar sample
//! sort and of PSRS, Shi and Schaeffer, 1992, with exact multi-sequence selection as in
//! Varman et al., 1991, and the MSB-first exchange of RMG sort, Ilic et al., BTW 2023):
//!
//! 1. each rank sorts its shard with the single-GPU radix sort;
//! 2. the ranks find, for each boundary between two ranks' parts, where every sorted shard
//!    splits so that exactly the items before the boundary come before it ([`select`]): a few
//!    rounds of evenly spaced samples of each shard (one strided copy to the host a boundary),
//!    each round one all-gather of `u64` compare keys;
//! 3. every rank sends each peer its run of items that falls in the peer's part (NCCL's grouped
//!    `ncclSend` / `ncclRecv`, as [`rebalance`](crate::rebalance));
//! 4. each rank sorts what it received (the runs, in rank order) with the single-GPU sort.
//!
//! The shard is sorted twice (steps 1 and 4) and each item crosses NVLink or the network at most
//! once.

mod select;

use crate::collectives::gather_words;
use crate::communicator::Communicator;
use crate::error::{Error, Result};
use crate::exchange::{Moved, Run, exchange};
use crate::rebalance::balanced;
use gpu_primitives::OnStream;
use gpu_primitives::device::{self, DeviceView, DeviceViewMut, DeviceWorkspace, SortKey, SortOptions};
use gpu_primitives::runtime::DeviceCopy;
use select::{Step, sampled, step};
use std::ops::Range;

/// Samples a rank takes of its window in each round of the splitter search (a round gathers
/// `world * (world - 1) * SAMPLES` words, 224 KiB on 8 ranks; 2^31 items a shard take 3 rounds).
const SAMPLES: usize = 4096;

/// Rounds after which the splitter search gives up (it needs about `log(shard) / log(SAMPLES /
/// (2 * world))`: 3 or 4 for any shard a GPU holds).
const MAX_ROUNDS: usize = 64;

/// Sort the keys of every rank's `keys` (its shard of the whole array: any length, empty too)
/// across the ranks, as the single-GPU [`device::sort_keys`] sorts the concatenated shards:
/// returns this rank's part of the sorted whole array, `[rank * total / world, (rank + 1) *
/// total / world)` (parts differ by at most one key), written to `output[..part.len()]`; the
/// rest of `output` is left alone. `output` must hold this rank's part: `ceil(total / world)`
/// keys always suffice. Stable across ranks: keys equal in the compared bits keep their order
/// in the whole array (rank 0's shard first). Deterministic. `keys` is left unchanged. Returns
/// once `output` is written.
///
/// Device memory on each rank: a sorted copy of the shard and what the single-GPU sort needs
/// for the shard and for the part (a copy of the part, through `workspace`).
///
/// # Errors
/// [`gpu_primitives::Error`] (as [`Error::Gpu`]) for a bit range past the key's width, a shard
/// or part of more than `SORT_MAX_KEYS` (2^32 - 1) keys, memory of another GPU, or out of
/// device memory; [`Error::InvalidArgument`] for a stream of another GPU or an `output` shorter
/// than this rank's part (found after the first exchange: the other ranks then fail); as
/// [`Communicator`] says.
pub fn sort_keys<'a, 'o, 'g, K: SortKey>(
    comm: &mut Communicator,
    on: impl Into<OnStream<'g>>,
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
    on: impl Into<OnStream<'g>>,
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

/// How the sort compares keys, as `u64` compare keys whose order is the sort's: the compared
/// bits of the ordered bits ([`SortKey::ordered_bits`]), complemented for a descending sort.
#[derive(Clone, Copy, Debug)]
struct Compare {
    shift: u32,
    mask: u64,
    descending: bool,
}

impl Compare {
    fn new(bits: Range<u32>, descending: bool) -> Self {
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

    fn key<K: SortKey>(&self, key: K) -> u64 {
        let bits = (key.ordered_bits() >> self.shift) & self.mask;
        if self.descending { bits ^ self.mask } else { bits }
    }
}

fn sort<K: SortKey, V: DeviceCopy>(
    comm: &mut Communicator,
    on: OnStream<'_>,
    (keys, values): (DeviceView<'_, K>, Option<DeviceView<'_, V>>),
    (mut keys_out, mut values_out): (DeviceViewMut<'_, K>, Option<DeviceViewMut<'_, V>>),
    options: SortOptions,
    workspace: &mut DeviceWorkspace,
) -> Result<Range<usize>> {
    comm.guarded(|comm| {
        comm.check_stream(&on, "sort")?;
        keys.check_usable_on(&on, "sort: keys")?;
        keys_out.check_usable_on(&on, "sort: keys_out")?;
        if let (Some(values), Some(values_out)) = (&values, &values_out) {
            values.check_usable_on(&on, "sort: values")?;
            values_out.check_usable_on(&on, "sort: values_out")?;
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
        let n = keys.len();
        check_limit("a shard", n)?;
        let (rank, world) = (comm.rank(), comm.world_size());
        let counts: Vec<usize> = gather_words(comm, &on, &[n as u64])?
            .into_iter()
            .map(|c| c as usize)
            .collect();
        let total: usize = counts.iter().sum();
        let part = balanced(rank, world, total);
        check_limit("this rank's part", part.len())?;
        if keys_out.len() < part.len() {
            return Err(Error::InvalidArgument(format!(
                "sort: keys_out holds {} keys, rank {rank}'s part is {}",
                keys_out.len(),
                part.len()
            )));
        }
        if let Some(values_out) = &values_out
            && values_out.len() < part.len()
        {
            return Err(gpu_primitives::Error::LengthMismatch {
                what: "sort_pairs: values_out shorter than this rank's part",
                expected: part.len(),
                found: values_out.len(),
            }
            .into());
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
            return Ok(on.stream().synchronize().map(|()| part)?);
        }
        // 1. The shard sorted into scratch memory (the input stays as it was).
        // SAFETY: `n` stored keys, every one written by the sort below before anything reads
        // them (the sort is queued first on this stream).
        let sorted_keys = unsafe { on.stream().alloc::<K::Raw>(n)? };
        let mut sorted_values = match values {
            // SAFETY: `n` values, each written by the sort below (as the keys above).
            Some(_) => Some(unsafe { on.stream().alloc::<V>(n)? }),
            None => None,
        };
        {
            // SAFETY: a live buffer of `n` stored keys, borrowed mutably for this block.
            let mut sorted =
                unsafe { DeviceViewMut::<K>::from_raw_parts(sorted_keys.as_device_ptr().as_raw(), n) };
            let mut sorted_v = sorted_values.as_mut().map(DeviceViewMut::from);
            local_sort(on, keys, values, &mut sorted, &mut sorted_v, options, workspace)?;
        }
        // 2. Where each sorted shard splits between the ranks' parts.
        let compare = Compare::new(bits, options.is_descending());
        let address = sorted_keys.as_device_ptr().as_raw();
        let splits = splits::<K>(comm, &on, address, &counts, compare)?;
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
        if let (Some(sorted_values), Some(values_out)) = (&sorted_values, &values_out) {
            moved.push(Moved {
                source: sorted_values.as_device_ptr().as_raw(),
                target: values_out.address(),
                item_bytes: size_of::<V>(),
            });
        }
        // SAFETY: the sends lie within the sorted shard (`splits` are positions of it, from 0
        // to `n`) and the receives within this rank's part, which the outputs hold (checked);
        // the scratch buffers are this call's, the outputs borrowed mutably, all of this GPU
        // (checked); every rank computed the same splits from the same gathered samples.
        unsafe { exchange(comm, &on, &sends, &receives, &moved)? };
        // 4. The received runs (in rank order, each sorted) sorted in place.
        let len = part.len();
        let mut part_keys = keys_out.slice(0..len);
        let mut part_values = values_out.as_mut().map(|v| v.slice(0..len));
        local_sort_in_place(on, &mut part_keys, &mut part_values, options, workspace)?;
        // The sort has run before the scratch buffers are freed, and `output` is written.
        on.stream().synchronize()?;
        drop((sorted_keys, sorted_values));
        Ok(part)
    })
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
    on: OnStream<'_>,
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
    on: OnStream<'_>,
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

/// Every boundary's splits: `splits[j][r]` is how many items of rank `r`'s sorted shard (at
/// device address `sorted` on this rank) go to ranks before `j` (`splits[0]` all 0,
/// `splits[world]` the shards' lengths). The same on every rank.
fn splits<K: SortKey>(
    comm: &mut Communicator,
    on: &OnStream<'_>,
    sorted: u64,
    counts: &[usize],
    compare: Compare,
) -> Result<Vec<Vec<usize>>> {
    let (rank, world) = (comm.rank(), comm.world_size());
    let total: usize = counts.iter().sum();
    let boundaries = world - 1;
    // Per boundary: its target, the windows, or the splits once found.
    let targets: Vec<usize> = (1..world).map(|j| balanced(j, world, total).start).collect();
    let mut windows: Vec<Vec<Range<usize>>> = vec![counts.iter().map(|&c| 0..c).collect(); boundaries];
    let mut found: Vec<Option<Vec<usize>>> = vec![None; boundaries];
    for _ in 0..MAX_ROUNDS {
        if found.iter().all(Option::is_some) {
            let mut splits = vec![vec![0; world]];
            splits.extend(found.into_iter().map(|f| f.expect("checked")));
            splits.push(counts.to_vec());
            return Ok(splits);
        }
        let mut mine = vec![0u64; boundaries * SAMPLES];
        for j in (0..boundaries).filter(|&j| found[j].is_none()) {
            let plan = sampled(&windows[j][rank], SAMPLES);
            let mut raw = vec![K::Raw::default(); plan.count];
            // SAFETY: items `start + i * gap` for `i < count` lie within the window, within the
            // shard's `n` sorted keys at `sorted` (written by the sort queued before on this
            // stream), of this GPU.
            unsafe {
                on.stream().copy_strided_to_host(
                    sorted + (plan.start * size_of::<K::Raw>()) as u64,
                    plan.gap,
                    &mut raw,
                )?
            };
            for (slot, &key) in mine[j * SAMPLES..].iter_mut().zip(K::from_raw(&raw)) {
                *slot = compare.key(key);
            }
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
