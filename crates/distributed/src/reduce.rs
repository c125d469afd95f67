//! Reduce and argmin / argmax of an array sharded across the ranks: each rank reduces its shard
//! with the single-GPU library, the ranks' partials are gathered (one NCCL all-gather of a few
//! bytes a rank), and every rank combines them in rank order. So the result is the same on every
//! rank and from run to run (NCCL's all-reduce would not fix the order of a float sum, nor keep
//! the library's NaN rules of `Min` and `Max`), as CCCL's multi-GPU reduce does for operators
//! NCCL does not have.

use crate::collectives::gather_raw;
use crate::communicator::Communicator;
use crate::error::Result;
use crate::nccl::NcclType;
use gpu_primitives::CallOn;
use gpu_primitives::device::{self, DeviceView, DeviceViewMut, DeviceWorkspace, Element, Operator};

/// The reduction with `Op` of every rank's `shard` (any lengths, empty ones too: the identity),
/// on every rank: `Op`'s identity combined, in rank order, with each rank's reduce of its shard
/// (the single-GPU [`device::reduce`]: deterministic, NaN propagating through `Min` / `Max`).
///
/// # Errors
/// As [`device::reduce`] on this rank; [`Error::InvalidArgument`](crate::Error::InvalidArgument)
/// for a stream of another GPU; as [`Communicator`] says.
pub fn reduce<'a, 'g, T: Element, Op: Operator>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<T::Acc>
where
    T::Acc: NcclType,
{
    let (on, shard) = (on.into(), shard.into());
    comm.guarded(|comm| {
        comm.check_stream(&on, "reduce")?;
        if comm.world_size() == 1 {
            return Ok(device::reduce::<T, Op>(on, shard, workspace)?);
        }
        let (rank, world) = (comm.rank(), comm.world_size());
        // On the call's stream, so that its clearing is ordered before the gather that fills it.
        let mut partials = on.stream().alloc_zeroed::<T::Acc>(world)?;
        let address = partials.as_device_ptr().as_raw();
        let mut view = DeviceViewMut::from(&mut partials);
        device::reduce_into::<T, Op>(on, shard, view.slice(rank..rank + 1), workspace)?;
        let slot = address + (rank * size_of::<T::Acc>()) as u64;
        gather_raw::<T::Acc>(comm, &on, slot, address, 1)?;
        let partials = on.stream().download(&partials)?;
        Ok(partials
            .into_iter()
            .fold(Op::identity::<T::Acc>(), |a, p| Op::combine(a, p)))
    })
}

/// The smallest item of the whole array and its global index (its shard's rank-order offset plus
/// its index there), on every rank: the first index on ties, the first NaN if any, `None` if
/// every shard is empty (the single-GPU [`device::argmin`]'s rules over the concatenation).
///
/// # Errors
/// As [`reduce`].
pub fn argmin<'a, 'g, T: Element>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<Option<(T::Acc, usize)>> {
    let (on, shard) = (on.into(), shard.into());
    comm.guarded(|comm| {
        let local = device::argmin::<T>(on, shard, workspace)?;
        arg(comm, on, shard.len(), local, |v, best| v < best)
    })
}

/// The largest item of the whole array and its global index, as [`argmin`].
///
/// # Errors
/// As [`reduce`].
pub fn argmax<'a, 'g, T: Element>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<Option<(T::Acc, usize)>> {
    let (on, shard) = (on.into(), shard.into());
    comm.guarded(|comm| {
        let local = device::argmax::<T>(on, shard, workspace)?;
        arg(comm, on, shard.len(), local, |v, best| v > best)
    })
}

/// A rank's argmin / argmax as 4 words: whether it has one, the value's bits, its index in
/// the shard, the shard's length.
fn record<A: bytemuck::Pod>(local: Option<(A, usize)>, len: usize) -> [u64; 4] {
    let mut bits = [0u8; 8];
    match local {
        Some((value, index)) => {
            bits[..size_of::<A>()].copy_from_slice(bytemuck::bytes_of(&value));
            [1, u64::from_le_bytes(bits), index as u64, len as u64]
        }
        None => [0, 0, 0, len as u64],
    }
}

/// The ranks' records combined in rank order: each candidate at its global index, kept where
/// `better` than the best so far, a NaN kept from its first appearance on.
fn combine_records<A: gpu_primitives::device::Accumulator + bytemuck::Pod>(
    records: &[[u64; 4]],
    better: fn(A, A) -> bool,
) -> Option<(A, usize)> {
    let mut offset = 0usize;
    let mut best: Option<(A, usize)> = None;
    for r in records {
        if r[0] == 1 {
            let value: A = bytemuck::pod_read_unaligned(&r[1].to_le_bytes()[..size_of::<A>()]);
            let candidate = (value, offset + r[2] as usize);
            best = match best {
                None => Some(candidate),
                Some((b, _)) if b.is_nan() => best,
                Some(_) if value.is_nan() => Some(candidate),
                Some((b, _)) if better(value, b) => Some(candidate),
                keep => keep,
            };
        }
        offset += r[3] as usize;
    }
    best
}

fn arg<
    A: gpu_primitives::device::Accumulator + bytemuck::Pod + gpu_primitives::runtime::DeviceCopy + Default,
>(
    comm: &mut Communicator,
    on: CallOn<'_>,
    len: usize,
    local: Option<(A, usize)>,
    better: fn(A, A) -> bool,
) -> Result<Option<(A, usize)>> {
    comm.check_stream(&on, "argmin / argmax")?;
    if comm.world_size() == 1 {
        return Ok(local);
    }
    let (rank, world) = (comm.rank(), comm.world_size());
    let mut records = vec![[0u64; 4]; world];
    records[rank] = record(local, len);
    let words: Vec<u64> = records.iter().flatten().copied().collect();
    // Uploaded and downloaded on the call's stream, in order with the gather.
    let buffer = on.stream().upload(&words)?;
    let address = buffer.as_device_ptr().as_raw();
    gather_raw::<u64>(comm, &on, address + (rank * 32) as u64, address, 4)?;
    let words = on.stream().download(&buffer)?;
    let records: Vec<[u64; 4]> = words.chunks_exact(4).map(|w| [w[0], w[1], w[2], w[3]]).collect();
    Ok(combine_records(&records, better))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The concatenation's argmin by the library's CPU reference, against the ranks' records.
    fn check(shards: &[Vec<f32>]) {
        let all: Vec<f32> = shards.concat();
        let records: Vec<[u64; 4]> = shards
            .iter()
            .map(|s| record(gpu_primitives::reference::argmin(s), s.len()))
            .collect();
        let got = combine_records::<f32>(&records, |v, b| v < b);
        let expected = gpu_primitives::reference::argmin(&all);
        assert_eq!(
            got.map(|(v, i)| (v.to_bits(), i)),
            expected.map(|(v, i)| (v.to_bits(), i)),
            "{shards:?}"
        );
        let records: Vec<[u64; 4]> = shards
            .iter()
            .map(|s| record(gpu_primitives::reference::argmax(s), s.len()))
            .collect();
        let got = combine_records::<f32>(&records, |v, b| v > b);
        let expected = gpu_primitives::reference::argmax(&all);
        assert_eq!(
            got.map(|(v, i)| (v.to_bits(), i)),
            expected.map(|(v, i)| (v.to_bits(), i))
        );
    }

    #[test]
    fn ranks_combine_as_the_concatenation_would() {
        check(&[vec![3.0, 1.0], vec![], vec![1.0, 0.5, 0.5], vec![0.5]]);
        check(&[vec![], vec![], vec![]]);
        check(&[vec![2.0], vec![f32::NAN, -1.0], vec![f32::NAN], vec![-5.0]]);
        check(&[vec![-0.0], vec![0.0, -0.0]]);
        check(&[vec![7.0, 7.0], vec![7.0]]);
    }

    proptest::proptest! {
        #[test]
        fn any_shards_combine_as_their_concatenation(
            // Values -4..4, with -5 standing for a NaN.
            shards in proptest::collection::vec(proptest::collection::vec(-5i8..4, 0..6), 1..6)
        ) {
            let shards: Vec<Vec<f32>> = shards
                .iter()
                .map(|s| s.iter().map(|&v| if v == -5 { f32::NAN } else { f32::from(v) }).collect())
                .collect();
            check(&shards);
        }
    }

    #[test]
    fn integer_records_keep_their_bits() {
        let records = [record(Some((-3i64, 2)), 5), record(Some((i64::MIN, 0)), 1)];
        assert_eq!(
            combine_records::<i64>(&records, |v, b| v < b),
            Some((i64::MIN, 5))
        );
        let records = [
            record(Some((u32::MAX, 1)), 2),
            record::<u32>(None, 0),
            record(Some((9u32, 0)), 1),
        ];
        assert_eq!(
            combine_records::<u32>(&records, |v, b| v > b),
            Some((u32::MAX, 1))
        );
    }
}
