//! Histograms of an array sharded across the ranks: each rank counts its shard with the
//! single-GPU library into its histogram, then an NCCL all-reduce (sum) of the counters gives
//! every rank the whole array's counts. Counts are integers, so the result is exact and the same
//! on every rank and run.

use crate::collectives::{ReduceOp, all_reduce};
use crate::communicator::Communicator;
use crate::error::Result;
use crate::nccl::NcclType;
use gpu_primitives::CallOn;
use gpu_primitives::device::{
    self, DeviceView, DeviceViewMut, DeviceWorkspace, HistogramCounter, HistogramSample,
};

/// The whole array's [`device::histogram_even`] on every rank: `bins` even bins over
/// `[lower, upper)` (the same arguments on every rank), counted into `histogram[0..bins]`
/// (overwritten; entries past `bins` left alone). Returns once the counts are in `histogram`.
///
/// Counters are summed across ranks by NCCL and wrap as the counter type does (`u32` past
/// 2^32 - 1 samples in one bin over every rank: use `u64` for more).
///
/// # Errors
/// As [`device::histogram_even`] (bad bins, a short histogram) before any NCCL call; an
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a stream of another GPU; as
/// [`Communicator`] says. A rank whose arguments are refused returns at once; the others then
/// time out (give every rank the same bins).
pub fn histogram_even<'s, 'o, 'g, S: HistogramSample, C: HistogramCounter + NcclType>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'s, S>>,
    bins: u32,
    lower: S::Level,
    upper: S::Level,
    histogram: impl Into<DeviceViewMut<'o, C>>,
) -> Result<()> {
    let (on, mut histogram) = (on.into(), histogram.into());
    comm.guarded(|comm| {
        comm.check_stream(&on, "histogram_even")?;
        let all = histogram.len();
        device::histogram_even::<S, C>(on, shard, bins, lower, upper, histogram.slice(0..all))?;
        // `bins <= histogram.len()`: the call above checked it.
        all_reduce(comm, on, histogram.slice(0..bins as usize), ReduceOp::Sum)
    })
}

/// The whole array's [`device::histogram_range`] on every rank: the `levels.len() - 1` bins
/// between the sorted `levels` (the same on every rank), into `histogram[0..bins]`, as
/// [`histogram_even`] says.
///
/// # Errors
/// As [`device::histogram_range`] and [`histogram_even`].
pub fn histogram_range<'s, 'o, 'g, S: HistogramSample, C: HistogramCounter + NcclType>(
    comm: &mut Communicator,
    on: impl Into<CallOn<'g>>,
    shard: impl Into<DeviceView<'s, S>>,
    levels: &[S::Level],
    histogram: impl Into<DeviceViewMut<'o, C>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, mut histogram) = (on.into(), histogram.into());
    comm.guarded(|comm| {
        comm.check_stream(&on, "histogram_range")?;
        let all = histogram.len();
        device::histogram_range::<S, C>(on, shard, levels, histogram.slice(0..all), workspace)?;
        // At least one bin, and no more than the histogram holds: the call above checked both.
        let bins = levels.len() - 1;
        all_reduce(comm, on, histogram.slice(0..bins), ReduceOp::Sum)
    })
}
