//! Tuning: the launch shapes a call takes, and the overrides a measurement puts in their place.
//!
//! **Tuned values.** The policies of `gpu_primitives_abi::tuning`, one a kernel family with a
//! value per architecture: a call takes those of the GPU it launches on ([`reduce`], [`scan`],
//! ...: its compute capability's, the same the kernels of the PTX module loaded for it were
//! built with).
//!
//! **Overrides** ([`TuningOverrides`]: block counts a multiprocessor, look-back delays in
//! nanoseconds, tiles, row groups; each field `None` or a value within its checked range) are
//! written over those fields, and come from two places:
//! - the call's own: [`CallOn::with_tuning`] (or [`WithTuning`] on `&gpu` or
//!   `gpu.on(&stream)?`), for that call only;
//! - the process default: [`set_tuning_overrides`], installed once before the first launch (the
//!   CLI and the GPU test harness build it from `GPU_PRIMITIVES_*` variables with
//!   [`TuningOverrides::from_vars`]); without it, none.
//!
//! **Precedence, field by field** (the one rule, [`CallOn::tuning`]: `call.or(process
//! default)`, [`TuningOverrides::or`]): the call's value where it sets one, else
//! the process default's, else the tuned value. So a call's `None` field never hides a process
//! default, and the policy getters here ([`reduce`], [`scan`], [`select`], ...) read only the
//! call's [`CallOn`].
//!
//! Overrides change launch shapes only, never what a call computes: integer results are the
//! same; float reductions and scans may differ in the last bits, as grouped otherwise (a
//! reduce's partition follows its blocks; a scan's look-back already varies with timing). The
//! library reads no environment variable.

use crate::{Error, Gpu, OnStream, Result, Stream};
use gpu_primitives_abi::tuning::{
    HistogramPolicy, NormGradPolicy, ReducePolicy, RowPolicy, ScanPolicy, SegmentedPolicy,
    SegmentedSortPolicy, SelectPolicy, SortPolicy, TopKPolicy,
};
use std::ops::RangeInclusive;
use std::sync::OnceLock;

/// One tunable value: its name (the variable `GPU_PRIMITIVES_<NAME>` in upper case), the
/// values it takes, what it sets, and its field.
struct Knob {
    name: &'static str,
    range: RangeInclusive<u32>,
    /// Whether the value must also be a power of two.
    power_of_two: bool,
    what: &'static str,
    field: fn(&mut TuningOverrides) -> &mut Option<u32>,
}

/// Every override, in one place: [`TuningOverrides`]'s fields, their names and ranges.
const KNOBS: [Knob; 15] = [
    Knob {
        name: "reduce_blocks_per_sm",
        range: 1..=32,
        power_of_two: false,
        what: "blocks a multiprocessor of the reduce's first pass",
        field: |t| &mut t.reduce_blocks_per_sm,
    },
    Knob {
        name: "histogram_blocks_per_sm",
        range: 1..=32,
        power_of_two: false,
        what: "blocks a multiprocessor of the histograms",
        field: |t| &mut t.histogram_blocks_per_sm,
    },
    Knob {
        name: "sort_histogram_blocks_per_sm",
        range: 1..=4,
        power_of_two: false,
        what: "blocks a multiprocessor of the sort's upfront digit count",
        field: |t| &mut t.sort_histogram_blocks_per_sm,
    },
    Knob {
        name: "sort_look_back_tiles",
        range: 1..=SortPolicy::SM90.look_back_tiles as u32,
        power_of_two: false,
        what: "tiles a onesweep pass's look-back reads at once",
        field: |t| &mut t.sort_look_back_tiles,
    },
    Knob {
        name: "sort_tiles",
        range: 1..=2,
        power_of_two: false,
        what: "the onesweep passes' tiles: 1 the large ones, 2 the small ones where the key has them",
        field: |t| &mut t.sort_tiles,
    },
    Knob {
        name: "scan_look_back_delay_ns",
        range: 0..=4000,
        power_of_two: false,
        what: "the scans' look-back delay (ns), of 4- and 8-byte accumulators alike",
        field: |t| &mut t.scan_look_back_delay_ns,
    },
    Knob {
        name: "select_look_back_delay_ns",
        range: 0..=4000,
        power_of_two: false,
        what: "the compaction's look-back delay (ns)",
        field: |t| &mut t.select_look_back_delay_ns,
    },
    Knob {
        name: "non_trivial_runs_look_back_delay_ns",
        range: 0..=4000,
        power_of_two: false,
        what: "the non-trivial runs' look-back delay (ns)",
        field: |t| &mut t.non_trivial_runs_look_back_delay_ns,
    },
    Knob {
        name: "segmented_look_back_delay_ns",
        range: 0..=4000,
        power_of_two: false,
        what: "the segmented reductions' look-back delay (ns)",
        field: |t| &mut t.segmented_look_back_delay_ns,
    },
    Knob {
        name: "segmented_scan_look_back_delay_ns",
        range: 0..=4000,
        power_of_two: false,
        what: "the segmented scans' look-back delay (ns)",
        field: |t| &mut t.segmented_scan_look_back_delay_ns,
    },
    Knob {
        name: "row_max_group",
        range: 64..=1024,
        power_of_two: true,
        what: "the most threads a row group of the row operations takes (a power of two)",
        field: |t| &mut t.row_max_group,
    },
    Knob {
        name: "row_cluster",
        range: 0..=2,
        power_of_two: false,
        what: "rows shared among a cluster's blocks: 0 never, 1 as the tuning decides, 2 the halves' one-input operations too",
        field: |t| &mut t.row_cluster,
    },
    Knob {
        name: "row_sums_chunks",
        range: 1..=4096,
        power_of_two: false,
        what: "the most chunks of rows the norms' cluster kernels summing the parameter gradients take",
        field: |t| &mut t.row_sums_chunks,
    },
    Knob {
        name: "row_sums_kept_tiles",
        range: 0..=64,
        power_of_two: false,
        what: "the most tiles of a row the norms' summing kernels keep in shared memory",
        field: |t| &mut t.row_sums_kept_tiles,
    },
    Knob {
        name: "row_shared_tiles",
        range: 0..=64,
        power_of_two: false,
        what: "the most tiles of a row kept in shared memory (0 reads every tile again)",
        field: |t| &mut t.row_shared_tiles,
    },
];

/// Values in place of the tuned launch shapes (the policies of `gpu_primitives_abi::tuning`,
/// of the GPU a call launches on), for measurements and for callers who tuned their own: blocks
/// a multiprocessor, look-back delays in nanoseconds, tiles, threads a row group, each field's
/// unit and range in its doc. Build one from [`default`](Self::default) (no override) and set
/// its fields; [`names`](Self::names) lists them with what they set.
///
/// **Where they apply, field by field:** a call's own ([`CallOn::with_tuning`]) where it sets
/// the field; else the process default's ([`set_tuning_overrides`]) where that sets it; else
/// the tuned value ([`CallOn::tuning`], [`or`](Self::or)). A call's `None` never hides the
/// process default.
///
/// **What they change:** how a call is launched, never what it computes: integer results are
/// the same; float reductions and scans may differ in the last bits, as grouped otherwise (a
/// reduce's partition follows its blocks; a float scan's grouping already varies with timing).
/// The workspace a call needs may change with them: ask [`TempStorage`](crate::device::TempStorage)
/// with the same call.
///
/// Every field's range is checked ([`check`](Self::check)) by [`set_tuning_overrides`],
/// [`CallOn::with_tuning`] and [`from_vars`](Self::from_vars).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TuningOverrides {
    /// Blocks a multiprocessor of the reduce's first pass (1 to 32).
    pub reduce_blocks_per_sm: Option<u32>,
    /// Blocks a multiprocessor of the histograms (1 to 32).
    pub histogram_blocks_per_sm: Option<u32>,
    /// Blocks a multiprocessor of the sort's upfront digit count (1 to 4).
    pub sort_histogram_blocks_per_sm: Option<u32>,
    /// Tiles a onesweep pass's look-back reads at once (1 to the sort policy's `look_back_tiles`).
    pub sort_look_back_tiles: Option<u32>,
    /// The onesweep passes' tiles: 1 the large ones, 2 the small ones where the key type and
    /// payload have them.
    pub sort_tiles: Option<u32>,
    /// The scan's look-back delay, ns (0 to 4000).
    pub scan_look_back_delay_ns: Option<u32>,
    /// The compaction's look-back delay, ns (0 to 4000).
    pub select_look_back_delay_ns: Option<u32>,
    /// The non-trivial runs' look-back delay, ns (0 to 4000).
    pub non_trivial_runs_look_back_delay_ns: Option<u32>,
    /// The segmented reductions' look-back delay, ns (0 to 4000).
    pub segmented_look_back_delay_ns: Option<u32>,
    /// The segmented scans' look-back delay, ns (0 to 4000).
    pub segmented_scan_look_back_delay_ns: Option<u32>,
    /// The most threads a row group of the row operations takes (a power of two, 64 to 1024).
    pub row_max_group: Option<u32>,
    /// Rows shared among a thread-block cluster's blocks (where the GPU has clusters): 0 never
    /// (one block a row), 1 as the tuning decides, 2 the halves' one-input operations too.
    pub row_cluster: Option<u32>,
    /// The most chunks of rows the norms' cluster kernels summing the parameter gradients take
    /// (1 to 4096; the tuned value is the clusters the device runs at once).
    pub row_sums_chunks: Option<u32>,
    /// The most tiles of a row the norms' summing kernels keep in shared memory past their
    /// column sums (0 to 64).
    pub row_sums_kept_tiles: Option<u32>,
    /// The most tiles of a row kept in shared memory (0 to 64; 0 reads every tile again; the
    /// tuned value is all that fit).
    pub row_shared_tiles: Option<u32>,
}

impl TuningOverrides {
    /// Every override's name (its variable is `GPU_PRIMITIVES_` and the name in upper case),
    /// its range and what it sets, in field order.
    pub fn names() -> impl Iterator<Item = (&'static str, RangeInclusive<u32>, &'static str)> {
        KNOBS.iter().map(|k| (k.name, k.range.clone(), k.what))
    }

    /// The overrides named by the variables `GPU_PRIMITIVES_<NAME>` that `var` finds (for
    /// example `|name| std::env::var(name).ok()`), checked. Variables not set leave the tuned
    /// value.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the variable where a value is not a number or is outside
    /// its range.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let mut overrides = Self::default();
        for knob in &KNOBS {
            let variable = format!("GPU_PRIMITIVES_{}", knob.name.to_uppercase());
            if let Some(text) = var(&variable) {
                let value = text.trim().parse::<u32>().map_err(|_| {
                    Error::InvalidArgument(format!("{variable}={text:?}: not a whole number ({})", knob.what))
                })?;
                *(knob.field)(&mut overrides) = Some(value);
            }
        }
        overrides.check()?;
        Ok(overrides)
    }

    /// Field by field, `self`'s value where it has one, else `fallback`'s (as [`Option::or`]):
    /// how a call's overrides are written over the process default, and a later
    /// [`with_tuning`](CallOn::with_tuning)'s over an earlier one's.
    #[must_use]
    pub fn or(self, mut fallback: Self) -> Self {
        let mut merged = self;
        for knob in &KNOBS {
            let field = (knob.field)(&mut merged);
            if field.is_none() {
                *field = *(knob.field)(&mut fallback);
            }
        }
        merged
    }

    /// Every value set within its range.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the first value outside its range.
    pub fn check(&self) -> Result<()> {
        let mut copy = *self;
        for knob in &KNOBS {
            if let Some(value) = *(knob.field)(&mut copy) {
                let power_of_two = !knob.power_of_two || value.is_power_of_two();
                if !knob.range.contains(&value) || !power_of_two {
                    return Err(Error::InvalidArgument(format!(
                        "tuning override {} = {value}: outside {}..={}{} ({})",
                        knob.name,
                        knob.range.start(),
                        knob.range.end(),
                        if power_of_two {
                            ""
                        } else {
                            ", or not a power of two"
                        },
                        knob.what
                    )));
                }
            }
        }
        Ok(())
    }
}

static OVERRIDES: OnceLock<TuningOverrides> = OnceLock::new();

/// Install `overrides` as the process default for the rest of the process, before the first
/// launch that reads them (afterwards the default is fixed): the overrides of every call that
/// does not set the field itself ([`CallOn::with_tuning`]). Meant for the binaries of
/// measurement sweeps (the CLI, the GPU test harness); a library passes its tuning per call.
///
/// # Errors
/// [`Error::InvalidArgument`] where a value is outside its range
/// ([`TuningOverrides::check`]), or where a process default (or none, by a launch that read it)
/// is already in place with other values.
pub fn set_tuning_overrides(overrides: TuningOverrides) -> Result<()> {
    overrides.check()?;
    let installed = OVERRIDES.get_or_init(|| overrides);
    if *installed != overrides {
        return Err(Error::InvalidArgument(format!(
            "tuning overrides already in place ({installed:?}); they are set once, before the first launch"
        )));
    }
    Ok(())
}

/// The process default: the overrides installed, or none (fixed by the first call that reads
/// it). Read only by [`CallOn::tuning`].
pub(crate) fn process_default() -> &'static TuningOverrides {
    OVERRIDES.get_or_init(TuningOverrides::default)
}

/// What every call takes first: the [`Gpu`] and stream its work is queued on ([`OnStream`]),
/// and the call's own [`TuningOverrides`] of its launch shapes (none unless given).
///
/// `&gpu` (its own stream) and `gpu.on(&stream)?` (another) convert to it, taking the process
/// default's tuning ([`set_tuning_overrides`](crate::set_tuning_overrides), none unless
/// installed). [`with_tuning`](Self::with_tuning) (or [`WithTuning`] on `&gpu` and
/// `gpu.on(&stream)?`) gives one call its own: field by field they win over the process
/// default, which wins over the tuned values ([`tuning`](Self::tuning)). Overrides change how a
/// call is launched (blocks, look-back delays, tiles), not what it computes (integers exactly;
/// floats within the rounding of another grouping).
///
/// ```no_run
/// use gpu_primitives::{TuningOverrides, WithTuning};
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[1u32, 2, 3, 4])?;
/// let mut y = gpu.alloc_zeroed::<u32>(4)?;
/// let mut workspace = DeviceWorkspace::new();
/// let mut tuning = TuningOverrides::default();
/// tuning.scan_look_back_delay_ns = Some(0); // no look-back delay, this call only
/// device::inclusive_scan::<u32, Sum>(gpu.with_tuning(tuning)?, &x, &mut y, &mut workspace)?;
/// assert_eq!(gpu.download(&y)?, [1, 3, 6, 10]);
/// // Another stream, the same overrides:
/// let stream = gpu.create_stream()?;
/// let on = gpu.on(&stream)?.with_tuning(tuning)?;
/// device::inclusive_scan::<u32, Sum>(on, &x, &mut y, &mut workspace)?;
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct CallOn<'a> {
    on: OnStream<'a>,
    /// The call's own overrides (not yet written over the process default).
    overrides: TuningOverrides,
}

/// `&gpu`, `gpu.on(&stream)?`, and anything else that converts to an [`OnStream`] (so that code
/// passing an `impl Into<OnStream>` along still compiles): no overrides of its own.
impl<'a, T: Into<OnStream<'a>>> From<T> for CallOn<'a> {
    fn from(on: T) -> Self {
        Self {
            on: on.into(),
            overrides: TuningOverrides::default(),
        }
    }
}

impl<'a> CallOn<'a> {
    /// The GPU (its context and modules).
    pub fn gpu(&self) -> &'a Gpu {
        self.on.gpu()
    }

    /// The stream the work is queued on, of the GPU's context.
    pub fn stream(&self) -> &'a Stream {
        self.on.stream()
    }

    /// The GPU and stream, without the tuning.
    pub fn on_stream(&self) -> OnStream<'a> {
        self.on
    }

    /// The same call with `overrides` written over its own overrides so far, field by field
    /// (where `overrides` sets a value; [`TuningOverrides::or`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the first value outside
    /// its range ([`TuningOverrides::check`]).
    pub fn with_tuning(mut self, overrides: TuningOverrides) -> Result<Self> {
        overrides.check()?;
        self.overrides = overrides.or(self.overrides);
        Ok(self)
    }

    /// The overrides this call's launch shapes take: field by field its own where set, else
    /// the process default's ([`set_tuning_overrides`](crate::set_tuning_overrides)); a field
    /// `None` in both takes the tuned value of the GPU's policy. The one place the two meet.
    pub fn tuning(&self) -> TuningOverrides {
        self.overrides.or(*process_default())
    }
}

/// [`CallOn::with_tuning`] on anything a call takes (`&gpu`, `gpu.on(&stream)?`): a call with
/// its own [`TuningOverrides`].
pub trait WithTuning<'a>: Into<CallOn<'a>> {
    /// The call on `self` with `overrides` ([`CallOn::with_tuning`]).
    ///
    /// # Errors
    /// As [`CallOn::with_tuning`].
    fn with_tuning(self, overrides: TuningOverrides) -> Result<CallOn<'a>>;
}

impl<'a, T: Into<CallOn<'a>>> WithTuning<'a> for T {
    fn with_tuning(self, overrides: TuningOverrides) -> Result<CallOn<'a>> {
        let call: CallOn<'a> = self.into();
        call.with_tuning(overrides)
    }
}

/// The architecture whose policies give the tile shapes (items a tile, shared bytes) of a
/// workspace size asked without a GPU (`TempStorage`'s queries) and of the launches themselves
/// (the scan's, compaction's, run-length's, segmented and by-key grids), while the block comes
/// from the GPU's policy: the shapes are those of every architecture, which the abi's registry
/// test (`every_architecture_launches_the_registry_s_blocks_and_bounds`) checks, and of every
/// device (`ScanPolicy::H200` and `SegmentedPolicy::H200` may differ in delays only: tests here
/// check it).
pub(crate) const SHAPES_ARCH: u32 = 90;

/// The reduce's policy for a GPU of compute capability `arch` (x 10) under `overrides`.
pub(crate) fn reduce_for(arch: u32, overrides: &TuningOverrides) -> ReducePolicy {
    let mut policy = ReducePolicy::for_arch(arch);
    policy.blocks_per_sm = overrides.reduce_blocks_per_sm.unwrap_or(policy.blocks_per_sm);
    policy
}

/// The reduce's policy of `call` (its GPU's, its overrides in place).
pub(crate) fn reduce(call: &CallOn<'_>) -> ReducePolicy {
    reduce_for(call.gpu().info().arch, &call.tuning())
}

/// The scan's policy of `call` (its GPU's, its overrides in place).
pub(crate) fn scan(call: &CallOn<'_>) -> ScanPolicy {
    let info = call.gpu().info();
    scan_for(info.arch, &info.name, &call.tuning())
}

/// The scan's policy for a GPU of compute capability `arch` (x 10) named `name` under
/// `overrides` (its delay override sets both the 4-byte and the 8-byte scans').
pub(crate) fn scan_for(arch: u32, name: &str, overrides: &TuningOverrides) -> ScanPolicy {
    let mut policy = ScanPolicy::for_device(arch, name);
    if let Some(ns) = overrides.scan_look_back_delay_ns {
        policy.look_back_delay_ns = ns;
        policy.wide_look_back_delay_ns = ns;
    }
    policy
}

/// The compaction's and the run-length encoding's policy of `call`.
pub(crate) fn select(call: &CallOn<'_>) -> SelectPolicy {
    select_for(call.gpu().info().arch, &call.tuning())
}

/// The compaction's and the run-length encoding's policy for a GPU of compute capability
/// `arch` (x 10) under `overrides`.
pub(crate) fn select_for(arch: u32, overrides: &TuningOverrides) -> SelectPolicy {
    let mut policy = SelectPolicy::for_arch(arch);
    policy.look_back_delay_ns = overrides
        .select_look_back_delay_ns
        .unwrap_or(policy.look_back_delay_ns);
    policy.non_trivial_runs_look_back_delay_ns = overrides
        .non_trivial_runs_look_back_delay_ns
        .unwrap_or(policy.non_trivial_runs_look_back_delay_ns);
    policy
}

/// The segmented scans', segmented reduce's and reduce by key's policy of `call`.
pub(crate) fn segmented(call: &CallOn<'_>) -> SegmentedPolicy {
    let info = call.gpu().info();
    segmented_for(info.arch, &info.name, &call.tuning())
}

/// The segmented scans', segmented reduce's and reduce by key's policy for a GPU of compute
/// capability `arch` (x 10) named `name` under `overrides`.
pub(crate) fn segmented_for(arch: u32, name: &str, overrides: &TuningOverrides) -> SegmentedPolicy {
    let mut policy = SegmentedPolicy::for_device(arch, name);
    policy.reduce_look_back_delay_ns = overrides
        .segmented_look_back_delay_ns
        .unwrap_or(policy.reduce_look_back_delay_ns);
    policy.scan_look_back_delay_ns = overrides
        .segmented_scan_look_back_delay_ns
        .unwrap_or(policy.scan_look_back_delay_ns);
    policy
}

/// The histograms' policy of `call`.
pub(crate) fn histogram(call: &CallOn<'_>) -> HistogramPolicy {
    histogram_for(call.gpu().info().arch, &call.tuning())
}

/// The histograms' policy for a GPU of compute capability `arch` (x 10) under `overrides`.
pub(crate) fn histogram_for(arch: u32, overrides: &TuningOverrides) -> HistogramPolicy {
    let mut policy = HistogramPolicy::for_arch(arch);
    policy.blocks_per_sm = overrides.histogram_blocks_per_sm.unwrap_or(policy.blocks_per_sm);
    policy
}

/// The row operations' policy on `gpu` (a call's row overrides change its shape, in `rows`).
pub(crate) fn rows(gpu: &Gpu) -> RowPolicy {
    RowPolicy::for_arch(gpu.info().arch)
}

/// The norms' weight and bias gradients' policy on `gpu`.
pub(crate) fn norm_grad(gpu: &Gpu) -> NormGradPolicy {
    NormGradPolicy::for_arch(gpu.info().arch)
}

/// The radix sort's policy for a GPU of compute capability `arch` (x 10) under `overrides` (a
/// call's, [`CallOn::tuning`]; the look-back's override is the plan's, which picks it per pass).
pub(crate) fn sort_for(arch: u32, overrides: &TuningOverrides) -> SortPolicy {
    let mut policy = SortPolicy::for_arch(arch);
    policy.histogram_blocks_per_sm = overrides
        .sort_histogram_blocks_per_sm
        .unwrap_or(policy.histogram_blocks_per_sm);
    policy
}

/// The segmented sort's policy on a GPU of compute capability `arch` (x 10).
pub(crate) fn segmented_sort_for(arch: u32) -> SegmentedSortPolicy {
    SegmentedSortPolicy::for_arch(arch)
}

/// The top-k's policy on `gpu`.
pub(crate) fn top_k(gpu: &Gpu) -> TopKPolicy {
    TopKPolicy::for_arch(gpu.info().arch)
}

#[cfg(test)]
mod tests {
    use super::{KNOBS, TuningOverrides};

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn variables_set_their_fields_and_the_others_stay_tuned() {
        let got = TuningOverrides::from_vars(vars(&[
            ("GPU_PRIMITIVES_SORT_TILES", "2"),
            ("GPU_PRIMITIVES_ROW_CLUSTER", "0"),
            ("GPU_PRIMITIVES_SCAN_LOOK_BACK_DELAY_NS", " 350 "),
            ("GPU_PRIMITIVES_UNKNOWN", "7"),
        ]))
        .unwrap();
        let expected = TuningOverrides {
            sort_tiles: Some(2),
            row_cluster: Some(0),
            scan_look_back_delay_ns: Some(350),
            ..TuningOverrides::default()
        };
        assert_eq!(got, expected);
        assert_eq!(
            TuningOverrides::from_vars(|_| None).unwrap(),
            TuningOverrides::default()
        );
    }

    #[test]
    fn values_outside_their_range_or_not_numbers_are_refused_by_name() {
        for (pairs, named) in [
            (&[("GPU_PRIMITIVES_SORT_TILES", "3")][..], "sort_tiles"),
            (
                &[("GPU_PRIMITIVES_REDUCE_BLOCKS_PER_SM", "0")][..],
                "reduce_blocks_per_sm",
            ),
            (&[("GPU_PRIMITIVES_ROW_MAX_GROUP", "96")][..], "row_max_group"),
            (&[("GPU_PRIMITIVES_ROW_MAX_GROUP", "2048")][..], "row_max_group"),
            (
                &[("GPU_PRIMITIVES_ROW_SUMS_CHUNKS", "many")][..],
                "ROW_SUMS_CHUNKS",
            ),
            (
                &[("GPU_PRIMITIVES_SELECT_LOOK_BACK_DELAY_NS", "-1")][..],
                "SELECT_LOOK_BACK_DELAY_NS",
            ),
        ] {
            let pairs: &'static [(&str, &str)] = pairs;
            let error = TuningOverrides::from_vars(vars(pairs)).unwrap_err().to_string();
            assert!(error.contains(named), "{pairs:?}: {error}");
        }
        assert!(
            TuningOverrides::from_vars(vars(&[("GPU_PRIMITIVES_ROW_MAX_GROUP", "256")]))
                .unwrap()
                .row_max_group
                == Some(256)
        );
    }

    #[test]
    fn overrides_are_written_over_the_architecture_s_policy() {
        use gpu_primitives_abi::tuning::{ReducePolicy, SortPolicy};
        let none = TuningOverrides::default();
        assert_eq!(super::reduce_for(90, &none), ReducePolicy::SM90);
        assert_eq!(super::reduce_for(80, &none), ReducePolicy::SM80);
        assert_eq!(super::sort_for(100, &none), SortPolicy::SM90);
        let some = TuningOverrides {
            reduce_blocks_per_sm: Some(7),
            sort_histogram_blocks_per_sm: Some(2),
            ..TuningOverrides::default()
        };
        assert_eq!(super::reduce_for(86, &some).blocks_per_sm, 7);
        assert_eq!(
            super::reduce_for(86, &some).block_threads,
            ReducePolicy::SM80.block_threads
        );
        assert_eq!(super::sort_for(90, &some).histogram_blocks_per_sm, 2);
    }

    #[test]
    fn the_h200_s_8_byte_scans_look_back_sooner_and_the_override_sets_both_delays() {
        use gpu_primitives_abi::tuning::ScanPolicy;
        let none = TuningOverrides::default();
        let h200 = super::scan_for(90, "NVIDIA H200", &none);
        let h100 = super::scan_for(90, "NVIDIA H100 80GB HBM3", &none);
        assert_eq!(h200, ScanPolicy::H200);
        assert_eq!(h100, ScanPolicy::SM90);
        assert!(h200.wide_look_back_delay_ns < h100.wide_look_back_delay_ns);
        assert_eq!(h200.look_back_delay_ns, h100.look_back_delay_ns);
        assert_eq!(super::scan_for(80, "NVIDIA H200", &none), ScanPolicy::SM80);
        assert_eq!(super::scan_for(90, "NVIDIA H200 NVL", &none), ScanPolicy::H200);
        assert_eq!(super::scan_for(90, "NVIDIA GH200 480GB", &none), ScanPolicy::SM90);
        // The tiles (`SHAPES_ARCH`'s) and the grid's block must agree on every device.
        assert_eq!(
            (
                ScanPolicy::H200.block_threads,
                ScanPolicy::H200.look_back_delay_min_tiles
            ),
            (
                ScanPolicy::SM90.block_threads,
                ScanPolicy::SM90.look_back_delay_min_tiles
            )
        );
        let some = TuningOverrides {
            scan_look_back_delay_ns: Some(500),
            ..TuningOverrides::default()
        };
        let overridden = super::scan_for(90, "NVIDIA H200", &some);
        assert_eq!(
            (overridden.look_back_delay_ns, overridden.wide_look_back_delay_ns),
            (500, 500)
        );
    }

    #[test]
    fn the_h200_s_scans_by_key_look_back_sooner_and_only_delays_differ() {
        use gpu_primitives_abi::tuning::SegmentedPolicy;
        let none = TuningOverrides::default();
        let h200 = super::segmented_for(90, "NVIDIA H200", &none);
        assert_eq!(h200, SegmentedPolicy::H200);
        assert_eq!(
            super::segmented_for(90, "NVIDIA H100 80GB HBM3", &none),
            SegmentedPolicy::SM90
        );
        assert_eq!(
            super::segmented_for(90, "NVIDIA GH200 480GB", &none),
            SegmentedPolicy::SM90
        );
        assert_eq!(
            super::segmented_for(80, "NVIDIA H200", &none),
            SegmentedPolicy::SM80
        );
        assert!(h200.scan_look_back_delay_ns < SegmentedPolicy::SM90.scan_look_back_delay_ns);
        // Every field but the delays is the architecture's: the tiles and grids agree.
        let delays_of_sm90 = SegmentedPolicy {
            scan_look_back_delay_ns: SegmentedPolicy::SM90.scan_look_back_delay_ns,
            reduce_look_back_delay_ns: SegmentedPolicy::SM90.reduce_look_back_delay_ns,
            ..h200
        };
        assert_eq!(delays_of_sm90, SegmentedPolicy::SM90);
        let some = TuningOverrides {
            segmented_scan_look_back_delay_ns: Some(300),
            ..TuningOverrides::default()
        };
        assert_eq!(
            super::segmented_for(90, "NVIDIA H200", &some).scan_look_back_delay_ns,
            300
        );
    }

    #[test]
    fn or_takes_each_field_from_the_first_that_sets_it() {
        // Every knob: set in the call only, in the default only, in both, in neither.
        for knob in &KNOBS {
            let set = |value: u32| {
                let mut overrides = TuningOverrides::default();
                *(knob.field)(&mut overrides) = Some(value);
                overrides
            };
            let (call, process) = (set(*knob.range.start()), set(*knob.range.end()));
            let none = TuningOverrides::default();
            assert_eq!(call.or(process), call, "{}: both set", knob.name);
            assert_eq!(none.or(process), process, "{}: the default's", knob.name);
            assert_eq!(call.or(none), call, "{}: the call's", knob.name);
            assert_eq!(none.or(none), none, "{}: neither", knob.name);
        }
    }

    #[test]
    fn a_call_s_overrides_win_field_by_field_over_the_process_default_then_the_tuned() {
        use gpu_primitives_abi::tuning::{
            HistogramPolicy, ReducePolicy, ScanPolicy, SegmentedPolicy, SelectPolicy, SortPolicy,
        };
        let process = TuningOverrides {
            reduce_blocks_per_sm: Some(3),
            scan_look_back_delay_ns: Some(900),
            select_look_back_delay_ns: Some(50),
            sort_histogram_blocks_per_sm: Some(2),
            ..TuningOverrides::default()
        };
        let call = TuningOverrides {
            scan_look_back_delay_ns: Some(0), // 0 is a value: no delay, not "unset"
            histogram_blocks_per_sm: Some(5),
            sort_histogram_blocks_per_sm: Some(1),
            ..TuningOverrides::default()
        };
        // What `CallOn::tuning` gives such a call under such a process default.
        let took = call.or(process);
        let h100 = "NVIDIA H100 80GB HBM3";
        // The call's: its scan delay (both widths), histogram blocks and sort counts.
        let scan = super::scan_for(90, h100, &took);
        assert_eq!((scan.look_back_delay_ns, scan.wide_look_back_delay_ns), (0, 0));
        assert_eq!(super::histogram_for(90, &took).blocks_per_sm, 5);
        assert_eq!(super::sort_for(90, &took).histogram_blocks_per_sm, 1);
        // The process default's, where the call sets none.
        assert_eq!(super::reduce_for(90, &took).blocks_per_sm, 3);
        assert_eq!(super::select_for(90, &took).look_back_delay_ns, 50);
        // The tuned values, where neither does; every other field of the policies too.
        assert_eq!(super::segmented_for(90, h100, &took), SegmentedPolicy::SM90);
        assert_eq!(
            super::select_for(90, &took).non_trivial_runs_look_back_delay_ns,
            SelectPolicy::SM90.non_trivial_runs_look_back_delay_ns
        );
        assert_eq!(
            super::reduce_for(90, &took),
            ReducePolicy {
                blocks_per_sm: 3,
                ..ReducePolicy::SM90
            }
        );
        assert_eq!(
            super::scan_for(90, h100, &took),
            ScanPolicy {
                look_back_delay_ns: 0,
                wide_look_back_delay_ns: 0,
                ..ScanPolicy::SM90
            }
        );
        assert_eq!(
            super::histogram_for(80, &took),
            HistogramPolicy {
                blocks_per_sm: 5,
                ..HistogramPolicy::SM80
            }
        );
        assert_eq!(
            super::sort_for(90, &took),
            SortPolicy {
                histogram_blocks_per_sm: 1,
                ..SortPolicy::SM90
            }
        );
        // Another call without overrides of its own takes the process default's.
        let other = TuningOverrides::default().or(process);
        assert_eq!(super::scan_for(90, h100, &other).look_back_delay_ns, 900);
        assert_eq!(super::sort_for(90, &other).histogram_blocks_per_sm, 2);
        assert_eq!(super::histogram_for(90, &other), HistogramPolicy::SM90);
    }

    #[test]
    fn every_field_has_one_knob_and_every_knob_its_own_field() {
        // Each knob set alone to its range's start sets exactly one field, not another's.
        let mut seen = Vec::new();
        for knob in &KNOBS {
            let mut overrides = TuningOverrides::default();
            *(knob.field)(&mut overrides) = Some(*knob.range.start());
            assert_ne!(overrides, TuningOverrides::default(), "{}", knob.name);
            assert!(
                !seen.contains(&overrides),
                "{} sets another knob's field",
                knob.name
            );
            seen.push(overrides);
        }
        // The struct has as many fields as there are knobs (15 `Option<u32>`).
        assert_eq!(
            size_of::<TuningOverrides>(),
            KNOBS.len() * size_of::<Option<u32>>()
        );
    }
}
