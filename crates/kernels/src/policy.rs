//! The tuning policies this build of the kernels is compiled for: the value of each family's
//! policy (`gpu_primitives_abi::tuning`) for the architecture of the PTX being built, chosen here
//! and nowhere else by `cfg(target_feature = "sm_90")` (sm_90 and later take `SM90`, the sm_80
//! build `SM80`). The kernels read them in const contexts (`SCAN.block_threads`); the host reads
//! the same values from the GPU it launches on.

use gpu_primitives_abi::tuning::{
    HistogramPolicy, NormGradPolicy, RowPolicy, SegmentedPolicy, SegmentedSortPolicy, SelectPolicy,
    SortPolicy, TopKPolicy,
};

/// The compute capability (x 10) of the PTX being built: 90 with `sm_90`, else 80.
pub const BUILT_ARCH: u32 = if cfg!(target_feature = "sm_90") { 90 } else { 80 };

/// The compaction's and the run-length encoding's policy.
pub const SELECT: SelectPolicy = SelectPolicy::for_arch(BUILT_ARCH);
/// The segmented scans', segmented reduce's and reduce by key's policy.
pub const SEGMENTED: SegmentedPolicy = SegmentedPolicy::for_arch(BUILT_ARCH);
/// The histograms' policy.
pub const HISTOGRAM: HistogramPolicy = HistogramPolicy::for_arch(BUILT_ARCH);
/// The row operations' policy.
pub const ROWS: RowPolicy = RowPolicy::for_arch(BUILT_ARCH);
/// The norms' weight and bias gradients' policy.
pub const NORM_GRAD: NormGradPolicy = NormGradPolicy::for_arch(BUILT_ARCH);
/// The device-wide radix sort's policy.
pub const SORT: SortPolicy = SortPolicy::for_arch(BUILT_ARCH);
/// The segmented sort's policy.
pub const SEGMENTED_SORT: SegmentedSortPolicy = SegmentedSortPolicy::for_arch(BUILT_ARCH);
/// The top-k's policy.
pub const TOP_K: TopKPolicy = TopKPolicy::for_arch(BUILT_ARCH);
