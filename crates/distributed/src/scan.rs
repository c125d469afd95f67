//! Inclusive and exclusive scans of an array sharded across the ranks, the array being the
//! shards in rank order: each rank reduces its shard (the single-GPU reduce), the ranks' totals
//! are gathered (an all-gather of one accumulator a rank), and each rank scans its shard starting
//! from the totals of the ranks before it, combined in rank order (the single-GPU scan with an
//! initial value, CUB's `FutureValue`). The shard is read twice (the reduce, the scan) and the
//! output written once; NCCL moves a few bytes. The design is CCCL's multi-GPU scan's (NVIDIA/cccl,
//! `cudax`): a local pass for the totals, one small exchange, the local scan seeded with the
//! rank's prefix.

use crate::collectives::gather_raw;
use crate::communicator::Communicator;
use crate::error::Result;
use crate::nccl::NcclType;
use gpu_primitives::CallOn;
use gpu_primitives::device::{self, DeviceView, DeviceViewMut, DeviceWorkspace, Element, Operator, ScanKind};

/// `output[i]` = the `Op`-combination of every item of the whole array up to and including this
/// shard's item `i` (ranks before this one first, in rank order), for `i < shard.len()`; the
/// rest of `output` is left alone. f16 / bf16 scan into f32, as the single-GPU
/// [`device::inclusive_scan`]. Returns once `output` is written.
///
/// Integer results are exact (sums wrap); float sums are grouped differently from a sequential
/// sum (by tile and by rank) and may differ in the last bits from run to run.
///
/// # Errors
/// [`gpu_primitives::Error::LengthMismatch`] (as [`Error::Gpu`](crate::Error::Gpu)) for an
/// `output` shorter than the shard, and memory of another GPU, before any NCCL call (the other
/// ranks then time out);
/// an [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a stream of another GPU;
/// device errors; as [`Communicator`] says.
pub fn inclusive_scan<'a, 'o, 'g, T: Element, Op: Operator>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()>
where
    T::Acc: NcclType,
{
    scan::<T, Op>(
        comm,
        on.into(),
        shard.into(),
        output.into(),
        ScanKind::Inclusive,
        workspace,
    )
}

/// `output[i]` = the `Op`-combination of every item of the whole array before this shard's item
/// `i` (`Op`'s identity for the array's first item). As [`inclusive_scan`].
///
/// # Errors
/// As [`inclusive_scan`].
pub fn exclusive_scan<'a, 'o, 'g, T: Element, Op: Operator>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()>
where
    T::Acc: NcclType,
{
    scan::<T, Op>(
        comm,
        on.into(),
        shard.into(),
        output.into(),
        ScanKind::Exclusive,
        workspace,
    )
}

fn scan<T: Element, Op: Operator>(
    comm: &mut Communicator,
    on: CallOn<'_>,
    shard: DeviceView<'_, T>,
    output: DeviceViewMut<'_, T::Acc>,
    kind: ScanKind,
    workspace: &mut DeviceWorkspace,
) -> Result<()>
where
    T::Acc: NcclType,
{
    comm.guarded(|comm| {
        comm.check_stream(&on, "scan")?;
        shard.check_usable_on(on, "scan: shard")?;
        output.check_usable_on(on, "scan: output")?;
        if output.len() < shard.len() {
            return Err(gpu_primitives::Error::LengthMismatch {
                what: "scan: output shorter than the shard",
                expected: shard.len(),
                found: output.len(),
            }
            .into());
        }
        let (rank, world) = (comm.rank(), comm.world_size());
        if world == 1 {
            match kind {
                ScanKind::Inclusive => device::inclusive_scan::<T, Op>(on, shard, output, workspace)?,
                ScanKind::Exclusive => device::exclusive_scan::<T, Op>(on, shard, output, workspace)?,
            }
            return Ok(on.stream().synchronize()?);
        }
        // Slots 0..world: the ranks' totals; slot world: this rank's start. On the call's stream, so
        // that its clearing is ordered before the gather that fills it.
        let mut totals = on.stream().alloc_zeroed::<T::Acc>(world + 1)?;
        let base = totals.as_device_ptr().as_raw();
        let slot = |r: usize| base + (r * size_of::<T::Acc>()) as u64;
        device::reduce_into::<T, Op>(
            on,
            shard,
            DeviceViewMut::from(&mut totals).slice(rank..rank + 1),
            workspace,
        )?;
        gather_raw::<T::Acc>(comm, &on, slot(rank), base, 1)?;
        let gathered = on.stream().download(&totals)?;
        let start = gathered[..rank]
            .iter()
            .fold(Op::identity::<T::Acc>(), |a, &t| Op::combine(a, t));
        // SAFETY: slot `world` is one live value of `totals`, of this stream's context; nothing else
        // uses it (the gather wrote slots 0..world and has run).
        unsafe { on.stream().copy_from_host(slot(world), &[start])? };
        let initial = DeviceView::from(&totals).slice(world..world + 1);
        match kind {
            ScanKind::Inclusive => {
                device::inclusive_scan_init::<T, Op>(on, shard, output, initial, workspace)?
            }
            ScanKind::Exclusive => {
                device::exclusive_scan_init::<T, Op>(on, shard, output, initial, workspace)?
            }
        }
        // The scan has run before `totals` is freed, and the call returns with `output` written.
        Ok(on.stream().synchronize()?)
    })
}
