//! [`top_k`]: the `k` best keys of an array sharded across the ranks, on every rank.
//!
//! Each rank finds its shard's best `min(k, n_r)` with the single-GPU radix select
//! ([`device::top_k_of_all`], its indices counted from the shard's first global position), every
//! rank receives every rank's candidates (grouped sends and receives, each rank's block in rank
//! order), and each sorts the candidates stably by key and keeps the first `k`. The candidates
//! arrive in the order of the whole array's stable sort within each block, and the blocks in
//! rank order: a stable sort of them gives ties to the lower global index, as one GPU does.

use crate::collectives::gather_verdicts;
use crate::communicator::Communicator;
use crate::error::{Error, Result};
use crate::exchange::{Moved, Run, exchange};
use gpu_primitives::CallOn;
use gpu_primitives::device::{self, DeviceView, DeviceViewMut, DeviceWorkspace, SortKey, SortOptions};

/// The `k` largest (or smallest) keys of the whole array whose shard each rank holds in
/// `keys`, best first, and their global indices (a key's position in the ranks' shards laid end
/// to end in rank order), written on every rank to `values_out[..k]` and `indices_out[..k]`:
/// CUB's `DeviceTopK` over the whole array, the same on every rank. Ties go to the lower global
/// index and NaNs sort as the single-GPU sort's ([`SortKey`]): the first `k` of the whole
/// array's stable sort, deterministic. `keys` is not modified. Returns once the outputs are
/// written (the stream is synchronised).
///
/// Every rank passes the same `k` (at most the whole array's length, and with the ranks'
/// candidates, `min(k, n_r)` summed, at most [`device::SORT_MAX_KEYS`]); a shard holds at most
/// [`device::SORT_MAX_KEYS`] keys. Traffic: one all-gather of three words a rank, then each
/// rank's `min(k, n_r)` keys and 8-byte indices sent to every other rank. Device memory: the
/// communicator's scratch holds every rank's candidates (`world * k` at most) twice over.
///
/// # Errors
/// On every rank, from the same all-gather of each rank's shard length, `k` and verdict on its
/// own arguments: [`Error::InvalidArgument`] where ranks pass different `k`, where `k` is past
/// the whole array, or where a rank refused its arguments (that rank returns its own error:
/// memory of another GPU, an output shorter than `k`, a shard past
/// [`device::SORT_MAX_KEYS`]); these leave the communicator usable. A stream of another GPU is
/// refused on its rank alone (it cannot take part in the all-gather), which aborts its
/// communicator. Errors of NCCL or of the device, as [`Communicator`] says.
#[allow(clippy::too_many_arguments)] // the single-GPU top_k_of_all's, with the communicator.
pub fn top_k<'a, 'o, 'i, 'g, K: SortKey>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    keys: impl Into<DeviceView<'a, K>>,
    k: usize,
    largest: bool,
    values_out: impl Into<DeviceViewMut<'o, K>>,
    indices_out: impl Into<DeviceViewMut<'i, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, keys, mut values_out, mut indices_out) =
        (on.into(), keys.into(), values_out.into(), indices_out.into());
    // A refusal every rank learns of from the all-gather leaves the communicator as it was
    // (the inner error); any other error aborts it.
    comm.guarded(|comm| {
        // A stream of another GPU cannot take part in the all-gather: refused on this rank alone.
        comm.check_stream(&on, "top_k")?;
        let n = keys.len();
        let mine = check_arguments(&on, &keys, k, &values_out, &indices_out);
        let words = match gather_verdicts(comm, &on, "top_k", mine, &[n as u64, k as u64])? {
            Ok(((), words)) => words,
            Err(refused) => return Ok(Err(refused)),
        };
        let rank = comm.rank();
        let shards: Vec<usize> = words.iter().map(|w| w[0] as usize).collect();
        let total: usize = shards.iter().sum();
        if let Some(r) = words.iter().position(|w| w[1] != k as u64) {
            return Ok(Err(Error::InvalidArgument(format!(
                "top_k: rank {r} asks for k = {}, rank {rank} for {k}",
                words[r][1]
            ))));
        }
        if k > total {
            return Ok(Err(Error::InvalidArgument(format!(
                "top_k: k = {k} is past the whole array's {total} keys"
            ))));
        }
        // Every rank's candidates, `min(k, n_r)` each, are sorted together on every rank.
        let candidates: usize = shards.iter().map(|&n| n.min(k)).sum();
        if candidates > device::SORT_MAX_KEYS {
            return Ok(Err(Error::InvalidArgument(format!(
                "top_k: k = {k} makes {candidates} candidates from {} ranks, past the {} one GPU sorts",
                shards.len(),
                device::SORT_MAX_KEYS
            ))));
        }
        if k == 0 {
            return Ok(Ok(()));
        }
        select(
            comm,
            on,
            keys,
            k,
            largest,
            (&mut values_out, &mut indices_out),
            &shards,
            workspace,
        )?;
        Ok(Ok(()))
    })?
}

/// The top-k once every rank's arguments are known good: `shards` are the ranks' lengths, `k`
/// at most their sum.
#[allow(clippy::too_many_arguments)]
fn select<K: SortKey>(
    comm: &mut Communicator,
    on: CallOn<'_>,
    keys: DeviceView<'_, K>,
    k: usize,
    largest: bool,
    (values_out, indices_out): (&mut DeviceViewMut<'_, K>, &mut DeviceViewMut<'_, u64>),
    shards: &[usize],
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (rank, world) = (comm.rank(), comm.world_size());
    let first_index: u64 = shards[..rank].iter().map(|&s| s as u64).sum();
    if world == 1 {
        device::top_k_of_all(
            on,
            keys,
            k,
            largest,
            0,
            values_out.slice(0..k),
            indices_out.slice(0..k),
            workspace,
        )?;
        return Ok(on.stream().synchronize()?);
    }
    // Every rank's candidates: `min(k, n_r)` each, laid end to end in rank order.
    let candidates: Vec<usize> = shards.iter().map(|&s| s.min(k)).collect();
    let starts: Vec<usize> = candidates
        .iter()
        .scan(0, |at, &c| {
            let start = *at;
            *at += c;
            Some(start)
        })
        .collect();
    let all: usize = candidates.iter().sum();
    let own = candidates[rank];
    // The scratch: this rank's candidates (keys, then indices), then everyone's, each region
    // from a 256-byte boundary (NCCL's send kernels load whole words past a run's end).
    let key_bytes = size_of::<K::Raw>();
    let region = |items: usize, bytes: usize| (items * bytes).next_multiple_of(256);
    let own_keys = 0;
    let own_indices = own_keys + region(own, key_bytes);
    let all_keys = own_indices + region(own, 8);
    let all_indices = all_keys + region(all, key_bytes);
    let base = comm.scratch(&on, all_indices + region(all, 8))?;
    if own > 0 {
        // SAFETY: `own` keys and `own` indices of the scratch, which nothing else uses
        // during the call.
        let (own_values, own_positions) = unsafe {
            (
                DeviceViewMut::<K>::from_raw_parts(base + own_keys as u64, own),
                DeviceViewMut::<u64>::from_raw_parts(base + own_indices as u64, own),
            )
        };
        device::top_k_of_all(
            on,
            keys,
            own,
            largest,
            first_index,
            own_values,
            own_positions,
            workspace,
        )?;
    }
    let sends: Vec<Run> = (0..world)
        .map(|peer| Run {
            peer,
            at: 0,
            count: own,
        })
        .collect();
    let receives: Vec<Run> = (0..world)
        .map(|peer| Run {
            peer,
            at: starts[peer],
            count: candidates[peer],
        })
        .collect();
    let moved = [
        Moved {
            source: base + own_keys as u64,
            target: base + all_keys as u64,
            item_bytes: key_bytes,
        },
        Moved {
            source: base + own_indices as u64,
            target: base + all_indices as u64,
            item_bytes: 8,
        },
    ];
    // SAFETY: each send is this rank's `own` candidates, within its regions; each receive
    // is a peer's block within the regions of everyone's, which do not overlap this rank's;
    // every rank computes the same runs from the same gathered lengths; the scratch is used
    // by nothing else during the call.
    unsafe { exchange(comm, &on, &sends, &receives, &moved)? };
    // SAFETY: `all` keys and indices of the scratch, written by the exchange.
    let (all_values, all_positions) = unsafe {
        (
            DeviceViewMut::<K>::from_raw_parts(base + all_keys as u64, all),
            DeviceViewMut::<u64>::from_raw_parts(base + all_indices as u64, all),
        )
    };
    let by_key = SortOptions::descending_if(largest);
    device::sort_pairs_in_place::<K, u64>(on, all_values, all_positions, by_key, workspace)?;
    let stream = on.stream();
    // SAFETY: the first k of the sorted candidates (k <= all: every rank gives min(k, n_r)
    // and k <= the total) into the outputs' first k places (checked), queued after the
    // sort on the same stream.
    unsafe {
        stream.copy_address(
            base + all_keys as u64,
            values_out.slice(0..k).address(),
            k * key_bytes,
        )?;
        stream.copy_address(
            base + all_indices as u64,
            indices_out.slice(0..k).address(),
            k * 8,
        )?;
    }
    Ok(stream.synchronize()?)
}

/// This rank's own arguments: the views usable on the stream, the outputs long enough, the
/// shard within one GPU's top-k.
fn check_arguments<K: SortKey>(
    on: &CallOn<'_>,
    keys: &DeviceView<'_, K>,
    k: usize,
    values_out: &DeviceViewMut<'_, K>,
    indices_out: &DeviceViewMut<'_, u64>,
) -> Result<()> {
    keys.check_usable_on(*on, "top_k: keys")?;
    values_out.check_usable_on(*on, "top_k: values_out")?;
    indices_out.check_usable_on(*on, "top_k: indices_out")?;
    if keys.len() > device::SORT_MAX_KEYS {
        return Err(Error::InvalidArgument(format!(
            "top_k: a shard of {} keys, past the {} one GPU takes in one call",
            keys.len(),
            device::SORT_MAX_KEYS
        )));
    }
    for (what, len) in [
        ("values_out", values_out.len()),
        ("indices_out", indices_out.len()),
    ] {
        if len < k {
            return Err(Error::InvalidArgument(format!(
                "top_k: {what} holds {len} places, k is {k}"
            )));
        }
    }
    Ok(())
}
