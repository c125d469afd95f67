//! Row operations over a row-major `rows x cols` matrix, the reductions models spend their time
//! in: [`softmax`], [`log_softmax`] and their backward, [`rms_norm`], [`layer_norm`] and their
//! backward ([`rms_norm_backward`], [`layer_norm_backward`]), [`cross_entropy`] fused with its
//! gradient. Each is one fused kernel (crates/kernels `device::rows`): the row's statistics (a
//! maximum and a sum of exponentials, a mean and a variance, ...) and its output in one launch,
//! the row read once and written once while it fits the registers of the threads that hold it.
//! The norms' parameter gradients (sums over rows) and cross-entropy's mean or sum add a
//! reduction after it.
//!
//! Each thread holds up to 16 items of each row input in registers, and at most 16 words of all
//! of them (8 for LayerNorm); `gpu_primitives_abi::planning::rows::row_plan` decides the mapping:
//!
//! | operation, type | in a warp or less up to (cols) | in one block's registers up to | past it |
//! |---|---|---|---|
//! | softmax, log-softmax, RMSNorm: f32 | 512 | 16384 (1024 threads) | a block of 1024 threads reads the row in tiles, keeps the first in shared memory and reads the others again (the last tile once) |
//! | the same: f16, bf16 | 512 | 4096 (256 threads) | as above (256 threads up to 4 tiles) |
//! | LayerNorm: f32 / halves | 256 / 512 | 2048 / 4096 (256 threads) | as above |
//! | the backward: f32 / halves | 256 / 512 | 8192 / 16384 (1024 threads) | as above |
//! | the norms' backward: f32 / halves | 128 / 256 | 1024 / 2048 (256 threads) | as above |
//! | cross-entropy: f32 / halves | 256 / 512 | 2048 / 4096 (256 threads) | as above |
//!
//! Rows read in tiles keep every tile but the last in shared memory between the reduction and the
//! output while the device's shared memory per block holds them
//! ([`DeviceInfo::max_shared_per_block`](crate::DeviceInfo::max_shared_per_block), split among
//! the blocks a multiprocessor holds, less 768 bytes; `planning::rows::row_shared_tiles`), so they are
//! read once while the row's inputs take at most 256 KiB on an H100 (227 KiB of shared memory
//! beside the tile in a block of 1024 threads' registers): 65536 `f32` or 131072 halves for the
//! forward operations, half that for the backward. Longer rows keep as many tiles as fit and
//! read the rest again. Rows of several tiles that a block keeps all but the last of go to
//! blocks of fewer threads (down to 256) while those still do, so that a multiprocessor runs
//! more of them at once (`planning::rows::row_plan_fewer_threads`: 65536 halves in 8 tiles of 512
//! threads, 2 blocks a multiprocessor). The cross-entropy's rows, of one tile too, go down to
//! tiles of 64 threads while its rows, a block each, hold half the threads the device runs at
//! once (`RowPolicy::small_tile_ops`); its loss alone, which writes no output and keeps no
//! tile, to the fewest.
//!
//! **Thread-block clusters** (sm_90 and later: H100, H200): a row that one block of 1024 threads
//! would read partly twice (past 65536 `f32` forward on an H100, past 16384 for the backward) is
//! shared among the `RowPolicy::cluster_blocks` (4) blocks of a cluster, on 4
//! multiprocessors: each block reads a quarter of the tiles (`planning::rows::row_block_tiles`),
//! keeping them in its registers and shared memory as above, and the blocks exchange only their
//! statistics, through distributed shared memory. Rows of up to 1 MiB (262144 `f32`) are then
//! read once on an H100. Not for the halves' forward operations and cross-entropy's loss alone,
//! which measured slower so (`planning::rows::row_cluster` has the figures). The blocks' statistics are combined in
//! rank order, so results are still the same from run to run, though not bitwise the same as on
//! a GPU without clusters (or with the `row_cluster` override 0, which keeps one block a row
//! for comparisons). Source: CUDA C++ Programming Guide, "Thread Block Clusters" and
//! "Distributed Shared Memory".
//!
//! Every call:
//! - takes a matrix as a flat device view of `rows * cols` elements (`rows = len / cols`);
//!   `cols` is `1 .. 2^31`, the matrix may pass 2^31 elements;
//! - reads and writes `f32`, `half::f16` or `half::bf16` ([`RowElement`]), computing in `f32`
//!   (halves widen exactly, outputs round to nearest even);
//! - is stream-ordered and never synchronises, and never modifies its inputs;
//! - is deterministic: the order of every combination depends only on the shape, the type and
//!   the GPU (whether it has clusters; the norms' parameter gradients summed in the `dx` kernel
//!   also on its multiprocessor count, or the clusters it runs at once), so results are bitwise
//!   identical from run to run;
//! - checks its arguments before any launch: [`Error::NotWholeRows`] for `cols` 0 (with a
//!   non-empty input) or an input that is not a whole number of rows, [`Error::PastLimit`] for
//!   `cols` past 2^31 - 1, [`Error::OutputOverlapsInput`] for an output overlapping an input,
//!   [`Error::ScalarOutOfRange`] for a norm's `eps` that is NaN, infinite or negative,
//!   [`Error::UnsupportedArgument`] for an RMSNorm bias, [`Error::PastAddressSpace`] for a view
//!   past the end of the address space; [`Error::LengthMismatch`] for an output, gradient, weight, bias or saved statistic of the
//!   wrong length; [`Error::WrongContext`] for a view of another context's memory and
//!   [`Error::InvalidArgument`] for a cudarc slice borrowed for another stream (as the
//!   [device-wide calls](crate::device)). An empty input launches nothing.
//!
//! **Numerics** (`f32` arithmetic; the GPU tests compare with `f64` references): `exp`, `ln` and
//! `1/sqrt` use PTX's approximate instructions (`ex2.approx`, `lg2.approx`, `rsqrt.approx`,
//! relative errors near 2^-22; `exp(d)` adds about `|d| * 2^-24` for `d = x - max`, and an
//! `exp` below 2^-126, the smallest normal `f32`, is 0 (`ex2.approx.ftz`): a softmax output or
//! cross-entropy probability below about 1.2e-38 is 0 where PyTorch keeps a subnormal). NaN
//! propagates to its whole row; `+inf` in a softmax row gives NaN (as PyTorch); a row of all
//! `-inf` gives NaN from softmax and log-softmax (as PyTorch). LayerNorm's variance is the biased
//! one (divided by `cols`), as PyTorch's.

use crate::device::{
    Bound, DeviceView, DeviceViewMut, DeviceWorkspace, Element, InUse, Region, TempStorage, check_bound,
};
use crate::{CallOn, DeviceInfo, Error, LaunchConfig, Result, TuningOverrides};
use gpu_primitives_abi::families::{self, Family, row_words_part};
use gpu_primitives_abi::layout::{
    MAX_BLOCK_THREADS, ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES, row_staged_tiles_bytes,
};
use gpu_primitives_abi::params::{NormGradParams, RowParams, TargetCountParams};
use gpu_primitives_abi::planning::rows::{
    RowPlan, RowSumsLaunch, norm_grad_chunks, row_block_tiles, row_cluster, row_plan, row_plan_fewer_threads,
    row_shared_tiles, row_sums_cluster_chunks, row_sums_kept_tiles, row_sums_launch, row_sums_room_tiles,
};
use gpu_primitives_abi::tuning::{NormGradPolicy, RowPolicy};

/// The norms' parameter gradients, summed per chunk of rows (`device_rows_norm_grads_partial_<element>`).
const NORM_GRADS_PARTIAL: &Family = families::family("device_rows_norm_grads_partial");
/// The norms' parameter gradients, each column's chunks in order (`device_rows_norm_grads_finish_<element>`).
const NORM_GRADS_FINISH: &Family = families::family("device_rows_norm_grads_finish");
/// Cross-entropy's count of the targets not ignored.
const CROSS_ENTROPY_COUNT: &Family =
    families::family(gpu_primitives_abi::kernel_name!(rows_cross_entropy, count));
/// Cross-entropy's mean of the losses.
const CROSS_ENTROPY_MEAN: &Family =
    families::family(gpu_primitives_abi::kernel_name!(rows_cross_entropy, mean));

mod sealed {
    pub trait Sealed {}
}

/// Threads a multiprocessor runs at once (sm_80 and sm_90: 2048), for the rows' grids.
const RESIDENT_THREADS_PER_MULTIPROCESSOR: usize = 2048;

/// An element type of the row operations: `f32`, `half::f16`, `half::bf16` (the table
/// `gpu_primitives_abi::row_table!`), computed in `f32`.
pub trait RowElement: Element<Acc = f32> + sealed::Sealed {
    /// Elements per 16 bytes (the kernels' vector loads).
    const ROW_VECTOR: usize;
    /// The words per thread it has kernels for.
    const ROW_WORDS: &'static [u32];
}

macro_rules! row_elements {
    ([] $($name:ident => $device:ty, $stored:ty, $vec:literal: $($words:literal),*;)*) => {
        $(
            impl sealed::Sealed for crate::host_type!($name) {}
            impl RowElement for crate::host_type!($name) {
                const ROW_VECTOR: usize = {
                    assert!($vec * size_of::<$stored>() == 16, "a vector is 16 bytes");
                    $vec
                };
                const ROW_WORDS: &'static [u32] = &[$($words),*];
            }
        )*
    };
}
gpu_primitives_abi::row_table!(row_elements);

/// The row operations' kernel names (from `gpu_primitives_abi::row_op_table!`).
mod kernels {
    use gpu_primitives_abi::families::{self, Family};
    use gpu_primitives_abi::planning::rows::RowShape;

    #[derive(Clone, Copy)]
    pub(super) struct RowKernel {
        pub name: &'static str,
        /// Its family of kernels (`device_rows_<name>`).
        pub family: &'static Family,
        /// Row inputs: 1, or 2 for the backward.
        pub inputs: usize,
        /// Most words of all its inputs a thread holds where one tile holds the row.
        pub words: u32,
        /// Most words of all its inputs a thread holds in rows of several tiles.
        pub tiled_words: u32,
        /// Rows of several tiles go to its `_tiled` kernel (a `split` operation).
        pub split: bool,
    }
    impl RowKernel {
        /// The row planner's shape of this operation over rows of `cols` elements of
        /// `vector` elements per 16 bytes, in groups of at most `max_group` threads.
        pub(super) const fn shape(&self, cols: usize, vector: usize, max_group: u32) -> RowShape {
            RowShape {
                cols,
                vector,
                inputs: self.inputs,
                op_words: self.words,
                tiled_words: self.tiled_words,
                max_group,
            }
        }
    }
    macro_rules! row_kernels {
        ([] $($op:ident => $ty:ident, $inputs:literal, $words:literal, $tiled_words:literal, $paths:ident;)*) => {
            $(
                #[allow(non_upper_case_globals)]
                pub(super) const $op: RowKernel = RowKernel {
                    name: stringify!($op),
                    family: families::family(gpu_primitives_abi::row_family_name!($op)),
                    inputs: $inputs,
                    words: $words,
                    tiled_words: $tiled_words,
                    split: matches!(stringify!($paths).as_bytes(), b"split" | b"sums"),
                };
            )*
        };
    }
    gpu_primitives_abi::row_op_table!(row_kernels);
}
use kernels::RowKernel;

/// The weight and bias of a norm, and its epsilon (PyTorch's `weight`, `bias`, `eps`).
#[derive(Clone, Copy)]
pub struct Norm<'w, T> {
    /// `cols` values the normalised row is multiplied by, or none (1).
    pub weight: Option<DeviceView<'w, T>>,
    /// `cols` values added after the weight, or none (0). [`layer_norm`] only.
    pub bias: Option<DeviceView<'w, T>>,
    /// Added to the variance (LayerNorm) or the mean square (RMSNorm) before its square root:
    /// finite and not negative (else [`Error::ScalarOutOfRange`]).
    pub eps: f32,
}

impl<'w, T> Norm<'w, T> {
    /// No weight, no bias, this `eps`.
    pub fn new(eps: f32) -> Self {
        Self {
            weight: None,
            bias: None,
            eps,
        }
    }

    /// With this weight (`cols` values).
    pub fn weight(self, weight: impl Into<DeviceView<'w, T>>) -> Self {
        Self {
            weight: Some(weight.into()),
            ..self
        }
    }

    /// With this bias (`cols` values).
    pub fn bias(self, bias: impl Into<DeviceView<'w, T>>) -> Self {
        Self {
            bias: Some(bias.into()),
            ..self
        }
    }
}

/// A view as a launch uses it: its device address, its length and its bound.
type Span = (u64, usize, Bound);

/// What one launch reads and writes, as device addresses (0 for none), with their lengths and
/// bounds.
struct RowCall {
    kernel: RowKernel,
    input: Span,
    grad: Option<Span>,
    weight: Option<Span>,
    bias: Option<Span>,
    output: Option<Span>,
    mean: Option<Span>,
    rstd: Option<Span>,
    eps: f32,
    /// Cross-entropy: the targets, the per-row loss, the count of valid targets (0: none).
    targets: Option<Span>,
    loss: Option<Span>,
    valid_targets: u64,
    ignore_index: i64,
    smoothing: f32,
}

impl RowCall {
    /// `kernel` from `input` into `output`, with nothing else.
    fn new<T>(kernel: RowKernel, input: &DeviceView<'_, T>, output: &DeviceViewMut<'_, T>) -> Self {
        RowCall {
            output: Some(view_mut(output)),
            ..Self::reading(kernel, input)
        }
    }

    /// `kernel` reading `input`, writing nothing yet.
    fn reading<T>(kernel: RowKernel, input: &DeviceView<'_, T>) -> Self {
        RowCall {
            kernel,
            input: view(input),
            grad: None,
            weight: None,
            bias: None,
            output: None,
            mean: None,
            rstd: None,
            eps: 0.0,
            targets: None,
            loss: None,
            valid_targets: 0,
            ignore_index: 0,
            smoothing: 0.0,
        }
    }

    /// Check the bound of every view of the call, and of the call's `others`, against `on`'s
    /// stream (before the workspace is used or anything is queued).
    fn check_bounds(&self, on: &CallOn<'_>, others: &[Bound]) -> Result<()> {
        let spans = [
            Some(self.input),
            self.grad,
            self.weight,
            self.bias,
            self.output,
            self.mean,
            self.rstd,
            self.targets,
            self.loss,
        ];
        let bounds: Vec<Bound> = spans
            .into_iter()
            .flatten()
            .map(|(.., bound)| bound)
            .chain(others.iter().copied())
            .collect();
        check_bound(on, self.kernel.name, &bounds)
    }
}

/// Whether the byte ranges `[a.0, a.1)` and `[b.0, b.1)` share a byte.
fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// `output` (its address and elements) against each of `inputs`, elements of `size` bytes,
/// checked: [`Error::OutputOverlapsInput`] naming `output_name` where it shares a byte with one;
/// [`Error::PastAddressSpace`] for a range past the end of the address space.
fn check_overlaps(
    k: &RowKernel,
    output_name: &'static str,
    output: (u64, usize),
    inputs: &[(u64, usize)],
    size: usize,
) -> Result<()> {
    let out = byte_range(k, output.0, output.1, size)?;
    for &(address, len) in inputs {
        if overlaps(out, byte_range(k, address, len, size)?) {
            return Err(Error::OutputOverlapsInput {
                what: k.name,
                output: output_name,
            });
        }
    }
    Ok(())
}

fn length(what: &'static str, expected: usize, found: usize) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            expected,
            found,
        })
    }
}

/// The rows of `n` elements in rows of `cols` (0 for an empty input with `cols` 0), checked:
/// [`Error::NotWholeRows`] for `cols` 0 with a non-empty input or `n` not a whole number of
/// rows; [`Error::PastLimit`] for `cols` past 2^31 - 1.
fn row_count(k: &RowKernel, n: usize, cols: usize) -> Result<usize> {
    let not_whole = Error::NotWholeRows {
        what: k.name,
        len: n,
        row_len: cols,
    };
    if cols == 0 {
        return if n == 0 { Ok(0) } else { Err(not_whole) };
    }
    if cols > i32::MAX as usize {
        return Err(Error::PastLimit {
            what: k.name,
            count: cols,
            unit: "elements a row",
            max: i32::MAX as usize,
        });
    }
    if !n.is_multiple_of(cols) {
        return Err(not_whole);
    }
    Ok(n / cols)
}

/// A norm's `eps`, checked: [`Error::ScalarOutOfRange`] unless it is finite and not negative (a
/// NaN or infinite `eps` makes every row NaN or 0, a negative one the square root of a negative
/// variance).
fn check_eps(k: &RowKernel, eps: f32) -> Result<()> {
    if eps.is_finite() && eps >= 0.0 {
        Ok(())
    } else {
        Err(Error::ScalarOutOfRange {
            what: k.name,
            argument: "eps",
            value: eps,
            valid: "a finite number >= 0",
        })
    }
}

/// The bytes of `len` elements of `size` bytes from `address`, `[address, end)`, checked:
/// [`Error::PastAddressSpace`] where they pass the end of the address space.
fn byte_range(k: &RowKernel, address: u64, len: usize, size: usize) -> Result<(u64, u64)> {
    len.checked_mul(size)
        .and_then(|bytes| u64::try_from(bytes).ok())
        .and_then(|bytes| address.checked_add(bytes))
        .map(|end| (address, end))
        .ok_or(Error::PastAddressSpace {
            what: k.name,
            buffer: "a view",
            items: len,
            item_bytes: size,
            start: address,
        })
}

/// [`cross_entropy`]'s arguments, checked before anything is allocated or queued: the label
/// smoothing (finite, in `[0, 1]`), the logits' shape (as [`row_count`]), the lengths of
/// `targets` (`rows`), `loss` (1, or `rows` for [`Reduction::None`]) and `grad` (as the logits),
/// and for [`Reduction::Mean`] at most `u32::MAX` rows: the device counts the valid targets in a
/// `u32`, which would wrap past it and make the mean and gradient wrong. Returns the rows.
fn check_cross_entropy(
    logits: usize,
    classes: usize,
    targets: usize,
    loss: usize,
    grad: Option<usize>,
    options: &CrossEntropy,
) -> Result<usize> {
    let k = &kernels::cross_entropy;
    let smoothing = options.label_smoothing;
    if !(smoothing.is_finite() && (0.0..=1.0).contains(&smoothing)) {
        return Err(Error::ScalarOutOfRange {
            what: k.name,
            argument: "label smoothing",
            value: smoothing,
            valid: "finite and in [0, 1]",
        });
    }
    let rows = row_count(k, logits, classes)?;
    let per_row = options.reduction == Reduction::None;
    length("cross_entropy: loss", if per_row { rows } else { 1 }, loss)?;
    length("rows: targets", rows, targets)?;
    if let Some(grad) = grad {
        length("rows: output", logits, grad)?;
    }
    if options.reduction == Reduction::Mean && u32::try_from(rows).is_err() {
        return Err(Error::PastLimit {
            what: k.name,
            count: rows,
            unit: "rows for the mean (the device counts the valid targets in a u32; Reduction::Sum has no limit)",
            max: u32::MAX as usize,
        });
    }
    Ok(rows)
}

/// Check `call` against `cols` and launch it. See the [module docs](self) for the errors.
fn launch<T: RowElement>(on: CallOn<'_>, cols: usize, call: RowCall) -> Result<()> {
    launch_summing::<T>(on, cols, call, None).map(|_| ())
}

/// What [`launch_summing`] did with the norms' workspace: the workspace in use (begun once the
/// call's arguments are checked, before anything is queued; `None` where it was not given or
/// `cols` is 0), and where the summing kernel wrote its partial sums (their address and number
/// of chunks), if it ran.
struct Summing<'w, 's> {
    workspace: Option<InUse<'w, 's>>,
    partials: Option<(u64, u32)>,
}

/// As [`launch`]; with `column_sums` (the norms' backward), where the sums of a block's tiles
/// fit its shared memory, one block or a cluster a row (`row_sums_plan`, `row_sums_launch`),
/// its kernel (the `_sums` one) also writes the weight's and bias's gradients summed over a
/// chunk of rows into the workspace's partials (a chunk a block, the grid capped at the blocks
/// the GPU holds at once; or a chunk a cluster, `row_sums_cluster_chunks` of them): returns
/// their address and number of chunks, or `None` where it did not.
fn launch_summing<'w, 's, T: RowElement>(
    on: CallOn<'s>,
    cols: usize,
    mut call: RowCall,
    column_sums: Option<(&'w mut DeviceWorkspace, &NormScratch, RowKernel)>,
) -> Result<Summing<'w, 's>> {
    let none = Summing {
        workspace: None,
        partials: None,
    };
    call.check_bounds(&on, &[])?;
    let k = &call.kernel;
    let (input, n, _) = call.input;
    let rows = row_count(k, n, cols)?;
    if cols == 0 {
        return Ok(none);
    }
    if let Some((_, len, _)) = call.output {
        length("rows: output", n, len)?;
    }
    if let Some((_, len, _)) = call.grad {
        length("rows: gradient (dy)", n, len)?;
    }
    for (what, given) in [("rows: weight", call.weight), ("rows: bias", call.bias)] {
        if let Some((_, len, _)) = given {
            length(what, cols, len)?;
        }
    }
    for (what, given) in [
        ("rows: saved mean", call.mean),
        ("rows: saved rstd", call.rstd),
        ("rows: targets", call.targets),
        ("rows: loss per row", call.loss),
    ] {
        if let Some((_, len, _)) = given {
            length(what, rows, len)?;
        }
    }
    if let Some((output, _, _)) = call.output {
        let inputs: Vec<(u64, usize)> = [Some(call.input), call.grad, call.weight, call.bias]
            .into_iter()
            .flatten()
            .filter(|&(_, len, _)| len > 0)
            .map(|(address, len, _)| (address, len))
            .collect();
        check_overlaps(k, "the output", (output, n), &inputs, size_of::<T>())?;
    }
    // The workspace in use on this stream, grown to the norm's need, until the launches that
    // use it are queued (here and by the caller).
    let (workspace, column_sums) = match column_sums {
        Some((workspace, need, summing)) => (
            Some(workspace.begin(on.stream(), &need.need)?),
            Some((need.partials, summing)),
        ),
        None => (None, None),
    };
    if n == 0 {
        return Ok(Summing {
            workspace,
            partials: None,
        });
    }
    let limit = on.gpu().info().max_shared_per_block;
    let module = crate::module(on.gpu())?;
    let tuning = on.tuning();
    let has_clusters = uses_clusters(&module, &tuning);
    let policy = crate::tuning::rows(on.gpu());
    let shape = k.shape(cols, T::ROW_VECTOR, max_group(policy, &tuning));
    let plan: RowPlan = row_plan(policy, shape);
    // Rows of several tiles (the cross-entropy's of one tile too) in blocks of fewer threads
    // where none is read twice for it.
    let small_tiles = policy.small_tile_ops.contains(&k.name);
    let plan = row_plan_fewer_threads(
        policy,
        plan,
        shape,
        small_tiles,
        call.output.is_some(),
        rows,
        on.gpu().info().multiprocessors as usize * RESIDENT_THREADS_PER_MULTIPROCESSOR,
        u64::from(limit),
    );
    // Summing the parameters' gradients (the `_sums` kernels) where their sums fit a block's
    // shared memory, one block or a cluster a row (row_sums_launch); else the dx kernel alone,
    // and the caller sums them apart.
    let summing = column_sums
        .as_ref()
        .and_then(|(_, s)| summing_launch::<T>(policy, &tuning, s, cols, limit, has_clusters));
    let (plan, sums, column_sums) = match summing {
        Some(sums) => (sums.plan, Some(sums), column_sums),
        None => (plan, None, None),
    };
    if !T::ROW_WORDS.contains(&plan.words) {
        // The plan's choice, not the caller's: a defect of the library's planning.
        return Err(Error::InvalidLaunch(format!(
            "{}: no {} kernel of {} words per thread",
            k.name,
            T::NAME,
            plan.words
        )));
    }
    if let Some((_, summing)) = &column_sums {
        call.kernel = *summing;
    }
    let k = &call.kernel;
    // Rows of several tiles keep what the device's shared memory holds of them past the column
    // sums (none where no output is written). Rows one block would read partly twice go to the
    // blocks of a cluster where the module has cluster kernels (sm_90 and later) and
    // planning::rows::row_cluster found it faster (row_sums_launch for the sums).
    let alone = if call.output.is_some() {
        row_shared_tiles(plan, k.inputs, u64::from(limit))
    } else {
        0
    };
    let cluster = match sums {
        Some(sums) => sums.cluster,
        None => {
            // Mode 2 measures the halves' one-input operations in clusters too (as f32's rule).
            let vector = if cluster_mode(&tuning) == 2 {
                4
            } else {
                T::ROW_VECTOR
            };
            call.output.is_some() && row_cluster(policy, plan, k.inputs, vector, alone) && has_clusters
        }
    };
    let words = row_words_part(plan.words).unwrap_or_default();
    let path = if cluster {
        Some("cluster")
    } else if k.split && plan.tiles > 1 {
        Some("tiled")
    } else {
        None
    };
    // The kernel's name parts, without a heap allocation a launch.
    let all = [T::NAME, words, path.unwrap_or_default()];
    let parts = if path.is_some() { &all[..] } else { &all[..2] };
    let kernel = module.kernel::<RowParams<T::Raw>>(crate::registered(k.family, parts)?.name)?;
    let rows_per_block = rows_per_block(plan);
    let wave = wave_blocks(on.gpu().info(), plan);
    let mut grid = rows.div_ceil(rows_per_block).min(wave * 16) as u32;
    if cluster {
        // A cluster a row (a whole number of clusters, each looping over rows as a block does).
        let clusters = rows.min(wave * 16 / policy.cluster_blocks as usize);
        grid = (clusters * policy.cluster_blocks as usize) as u32;
    }
    // A block of a cluster keeps its own share of the tiles (at most the first block's), within
    // the limit less the cluster kernel's static slots.
    let shared_tiles = match sums {
        // The summing kernels: in halves their tiles but the last where they fit past the sums,
        // in f32 none (planning::rows::row_sums_kept_tiles).
        Some(sums) => match sums_kept_tiles(&tuning) {
            None => row_sums_kept_tiles(policy, sums, T::ROW_VECTOR, k.inputs, u64::from(limit)),
            Some(most) => row_sums_room_tiles(policy, sums, k.inputs, u64::from(limit)).min(most),
        },
        None if cluster => {
            let (_, tiles) = row_block_tiles(plan.tiles as u32, 0, policy.cluster_blocks);
            let block_plan = RowPlan {
                tiles: tiles as usize,
                ..plan
            };
            row_shared_tiles(block_plan, k.inputs, u64::from(limit - ROW_CLUSTER_SLOTS_BYTES))
        }
        None => alone,
    }
    .min(max_shared_tiles(&tuning));
    let sums_bytes = sums.map_or(0, |sums| sums.sums_bytes);
    let staged_bytes = row_staged_tiles_bytes(shared_tiles, plan.words, k.inputs as u32, plan.block) as u32;
    let shared = ROW_SHARED_BYTES + sums_bytes as u32 + staged_bytes;
    let mut column_partials = None;
    if let (Some(workspace), Some((region, _))) = (&workspace, &column_sums) {
        let chunks = if cluster {
            // A chunk of rows a cluster, as many clusters as the device runs at once.
            let active = kernel.max_active_clusters(policy.cluster_blocks, plan.block, shared)?;
            let chunks = cluster_sum_chunks(on.gpu().info(), &tuning, plan, rows, active);
            grid = chunks as u32 * policy.cluster_blocks;
            chunks as u32
        } else {
            grid = grid.min(resident_blocks(on.gpu().info(), plan));
            grid * rows_per_block as u32
        };
        // 8-byte slots (two f32) a column a chunk, at most the TempStorage's.
        let partials = workspace
            .arena()
            .carve(*region, (chunks as usize * cols).saturating_mul(8))?;
        column_partials = Some((partials, chunks));
    }
    let config = LaunchConfig::new(grid, plan.block).with_shared_mem(shared);
    let pointer = |given: Option<Span>| given.map_or(0, |(address, ..)| address);
    let params = RowParams {
        input: input as *const T::Raw,
        grad: pointer(call.grad) as *const T::Raw,
        weight: pointer(call.weight) as *const T::Raw,
        bias: pointer(call.bias) as *const T::Raw,
        output: pointer(call.output) as *mut T::Raw,
        mean: pointer(call.mean) as *mut f32,
        rstd: pointer(call.rstd) as *mut f32,
        targets: pointer(call.targets) as *const i64,
        loss: pointer(call.loss) as *mut f32,
        valid_targets: call.valid_targets as *const u32,
        column_partials: column_partials.map_or(0, |(address, _)| address) as *mut f32,
        rows,
        cols,
        ignore_index: call.ignore_index,
        group: plan.group,
        shared_tiles,
        eps: call.eps,
        smoothing: call.smoothing,
    };
    // SAFETY: every pointer holds the elements RowParams requires (lengths checked above), the
    // output overlaps no input, and the launch shape is the plan's (group divides the block, at
    // most a warp or the whole block; ROW_SHARED_BYTES of shared memory); the column partials
    // hold 2 f32 per column for each of the grid's groups (or clusters), and their sums have
    // their shared memory, as have the kept tiles (within the device's limit: row_shared_tiles,
    // row_sums_launch); a cluster kernel gets a whole number of clusters and rows of at least
    // `cluster_blocks` tiles of whole blocks (row_cluster, row_sums_launch).
    unsafe { on.stream().launch(&kernel, config, &params)? };
    Ok(Summing {
        workspace,
        partials: column_partials,
    })
}

/// The launch of the kernel `summing` (a norm's backward summing its parameters' gradients)
/// over rows of `cols` elements of `T`, where their sums fit shared memory (`limit` bytes a
/// block; clusters where the module has them) under the row `policy` and a call's `tuning`;
/// `None` where they do not.
fn summing_launch<T: RowElement>(
    policy: RowPolicy,
    tuning: &TuningOverrides,
    summing: &RowKernel,
    cols: usize,
    limit: u32,
    has_clusters: bool,
) -> Option<RowSumsLaunch> {
    row_sums_launch(
        policy,
        summing.shape(cols, T::ROW_VECTOR, max_group(policy, tuning)),
        u64::from(limit),
        has_clusters,
    )
}

/// Whether the row operations may share a row among a cluster's blocks: the module has
/// cluster kernels (sm_90 and later) and [`cluster_mode`] allows them.
fn uses_clusters(module: &crate::runtime::Module, tuning: &TuningOverrides) -> bool {
    module.ptx_arch() >= 90 && cluster_mode(tuning) != 0
}

/// Blocks of `plan`'s threads the device's multiprocessors run at once (a wave), by threads.
fn wave_blocks(info: &DeviceInfo, plan: RowPlan) -> usize {
    info.multiprocessors as usize * (RESIDENT_THREADS_PER_MULTIPROCESSOR / plan.block as usize)
}

/// Rows a block of `plan` takes at once: several groups of a warp or less, else one.
fn rows_per_block(plan: RowPlan) -> usize {
    if plan.group <= 32 {
        (plan.block / plan.group) as usize
    } else {
        1
    }
}

/// The blocks of `plan` a device holds at once (the row kernels are built for
/// MAX_BLOCK_THREADS threads of 64 registers each): a summing launch of one block a row takes
/// that many, each looping over rows and adding a chunk of partial sums for the finish to read
/// (H100, 262144 x 1024 `f32`: 2112 chunks, the finish 37 µs).
fn resident_blocks(info: &DeviceInfo, plan: RowPlan) -> u32 {
    info.multiprocessors * (MAX_BLOCK_THREADS / plan.block)
}

/// The chunks of rows of a summing launch in clusters over `rows` rows, one a cluster: as many
/// as the device runs at once (`active`, the driver's count), at most as many as its
/// multiprocessors hold blocks of `plan`'s threads (so that [`TempStorage`] can say the most
/// without asking the driver); at most `row_sums_chunks` where `tuning` sets it.
fn cluster_sum_chunks(
    info: &DeviceInfo,
    tuning: &TuningOverrides,
    plan: RowPlan,
    rows: usize,
    active: u32,
) -> usize {
    let most = wave_blocks(info, plan) / RowPolicy::for_arch(info.arch).cluster_blocks as usize;
    row_sums_cluster_chunks(
        NormGradPolicy::for_arch(info.arch),
        rows,
        sums_cluster_chunks((active as usize).clamp(1, most.max(1)), tuning),
    )
}

/// A norm's backward's need of the workspace and the scratch region of its partial column
/// sums ([`norm_backward_scratch`]).
#[derive(Default)]
struct NormScratch {
    need: TempStorage,
    partials: Region,
}

/// The partial column sums (8-byte slots) the backward `kernels` (dx, then dx summing the
/// parameters' gradients) of a norm over `rows` rows of `cols` elements of `T` need on `gpu`,
/// at most: where the summing kernel takes the rows, a chunk of `cols` sums a block (or
/// cluster) the device holds at once; else the separate sums' chunks (one chunk, of zeros,
/// for no rows). On `on`'s GPU, under its tuning.
fn norm_backward_scratch<T: RowElement>(
    on: &CallOn<'_>,
    summing: &RowKernel,
    rows: usize,
    cols: usize,
) -> Result<NormScratch> {
    if cols == 0 {
        return Ok(NormScratch::default());
    }
    let gpu = on.gpu();
    let tuning = on.tuning();
    let grad_policy = crate::tuning::norm_grad(gpu);
    let chunks = if rows == 0 {
        norm_grad_chunks(grad_policy, rows, cols).0 as usize
    } else {
        let module = crate::module(gpu)?;
        let has_clusters = uses_clusters(&module, &tuning);
        let info = gpu.info();
        let policy = crate::tuning::rows(gpu);
        match summing_launch::<T>(
            policy,
            &tuning,
            summing,
            cols,
            info.max_shared_per_block,
            has_clusters,
        ) {
            Some(sums) if sums.cluster => cluster_sum_chunks(info, &tuning, sums.plan, rows, u32::MAX),
            Some(sums) => {
                let per_block = rows_per_block(sums.plan);
                let wave = wave_blocks(info, sums.plan);
                let grid = rows
                    .div_ceil(per_block)
                    .min(wave * 16)
                    .min(resident_blocks(info, sums.plan) as usize);
                grid * per_block
            }
            None => norm_grad_chunks(grad_policy, rows, cols).0 as usize,
        }
    };
    let (need, partials) = TempStorage::region(chunks.saturating_mul(cols).saturating_mul(8));
    Ok(NormScratch { need, partials })
}

impl TempStorage {
    /// [`layer_norm_backward`] of `rows` rows of `cols` elements of `T` on `on` (`&gpu`, or a
    /// call with its tuning), with `dweight`
    /// or `dbias` asked for (without them it needs nothing): 8 bytes a column for each chunk of
    /// rows summed apart (a block or cluster the device holds at once, or the separate sums'
    /// chunks), at most. Loads the library's module (to know whether it has cluster kernels).
    ///
    /// # Errors
    /// Errors of loading the module.
    pub fn layer_norm_backward<'g, T: RowElement>(
        on: impl Into<CallOn<'g>>,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        Ok(norm_backward_scratch::<T>(&on.into(), &kernels::layer_norm_backward_sums, rows, cols)?.need)
    }

    /// [`rms_norm_backward`] with `dweight`: as [`layer_norm_backward`](Self::layer_norm_backward).
    ///
    /// # Errors
    /// Errors of loading the module.
    pub fn rms_norm_backward<'g, T: RowElement>(
        on: impl Into<CallOn<'g>>,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        Ok(norm_backward_scratch::<T>(&on.into(), &kernels::rms_norm_backward_sums, rows, cols)?.need)
    }

    /// [`cross_entropy`] of `rows` rows on `on` (`&gpu`, or a call with its tuning) with a mean
    /// or sum reduction (with none it
    /// needs nothing): the count of valid targets and each row's loss, 4 bytes each, and the
    /// [`reduce`](crate::device::reduce) of the rows' losses.
    pub fn cross_entropy<'g>(on: impl Into<CallOn<'g>>, rows: usize) -> Self {
        cross_entropy_scratch(on.into(), rows).need
    }
}

/// A cross-entropy mean's or sum's need of the workspace over `rows` rows, and its scratch
/// regions: the count of valid targets (a `u32`), the per-row losses (an `f32` each) and,
/// used at the same time (it reads the losses), the reduce of the losses.
struct CrossEntropyScratch {
    need: TempStorage,
    count: Region,
    losses: Region,
    reduce: Region,
}

/// The [`CrossEntropyScratch`] of `rows` rows on `on`.
fn cross_entropy_scratch(on: CallOn<'_>, rows: usize) -> CrossEntropyScratch {
    let mut need = TempStorage::default();
    let count = need.scratch.push(size_of::<u32>());
    let losses = need.scratch.push(rows.saturating_mul(size_of::<f32>()));
    let reduce = need.nest(TempStorage::reduce::<f32>(on, rows));
    CrossEntropyScratch {
        need,
        count,
        losses,
        reduce,
    }
}

/// The row `policy`'s `max_group`, or a call's override (`tuning`'s `row_max_group`: a power of
/// two, 64 to 1024) for tuning sweeps.
fn max_group(policy: RowPolicy, tuning: &TuningOverrides) -> u32 {
    tuning.row_max_group.unwrap_or(policy.max_group)
}

/// Whether rows of several blocks' tiles may be shared among the blocks of a thread-block
/// cluster (where the GPU has clusters), for measurements beside one block a row: 1, as
/// `planning::rows::row_cluster` decides; overridden to 0, never; to 2, the halves' one-input
/// operations too, whose rows the rule keeps in one block (a call's `tuning`).
fn cluster_mode(tuning: &TuningOverrides) -> u32 {
    tuning.row_cluster.unwrap_or(1)
}

/// Most chunks of rows the cluster kernels summing the norms' parameter gradients take:
/// `active`, the clusters the device runs at once, or a call's override (`tuning`'s
/// `row_sums_chunks`, 1 to 4096) for tuning sweeps.
fn sums_cluster_chunks(active: usize, tuning: &TuningOverrides) -> usize {
    tuning.row_sums_chunks.map_or(active, |most| most as usize)
}

/// Most tiles of a row the norms' summing kernels keep in shared memory past their column sums,
/// for every type, where a call's `tuning` overrides it (0 to 64) for measurements; otherwise
/// `planning::rows::row_sums_kept_tiles` decides.
fn sums_kept_tiles(tuning: &TuningOverrides) -> Option<u32> {
    tuning.row_sums_kept_tiles
}

/// Most tiles of a row kept in shared memory (`row_shared_tiles`, which also caps them at what
/// fits): all that fit, or a call's override (`tuning`'s `row_shared_tiles`, 0 to 64; 0 reads
/// every tile again) for measurements.
fn max_shared_tiles(tuning: &TuningOverrides) -> u32 {
    tuning.row_shared_tiles.unwrap_or(u32::MAX)
}

fn view<T>(v: &DeviceView<'_, T>) -> Span {
    (v.address(), v.len(), v.bound)
}

fn view_mut<T>(v: &DeviceViewMut<'_, T>) -> Span {
    (v.address(), v.len(), v.bound)
}

fn forward<'a, 'o, 'g, T: RowElement>(
    kernel: RowKernel,
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    cols: usize,
    output: impl Into<DeviceViewMut<'o, T>>,
) -> Result<()> {
    let (input, output) = (input.into(), output.into());
    launch::<T>(on.into(), cols, RowCall::new(kernel, &input, &output))
}

fn backward<'a, 'b, 'o, 'g, T: RowElement>(
    kernel: RowKernel,
    on: impl Into<CallOn<'g>>,
    y: impl Into<DeviceView<'a, T>>,
    dy: impl Into<DeviceView<'b, T>>,
    cols: usize,
    dx: impl Into<DeviceViewMut<'o, T>>,
) -> Result<()> {
    let (y, dy, dx) = (y.into(), dy.into(), dx.into());
    let call = RowCall {
        grad: Some(view(&dy)),
        ..RowCall::new(kernel, &y, &dx)
    };
    launch::<T>(on.into(), cols, call)
}

/// `output[r][c] = exp(x[r][c] - max_r) / sum_c' exp(x[r][c'] - max_r)` for every row `r` of
/// `cols` elements (PyTorch's `softmax(x, dim=-1)`). One pass over `input` while a block holds
/// the row (the [module docs](self) give the sizes),
/// the online maximum and sum (Milakov and Gimelshein, 2018) past it. See the
/// [module docs](self) for shapes, errors and numerics.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::DeviceVec;
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[1.0f32, 2.0, 3.0, 0.0, 0.0, 0.0])?; // 2 rows of 3
/// let mut y = gpu.alloc_zeroed::<f32>(6)?;
/// gpu_primitives::rows::softmax(&gpu, &x, 3, &mut y)?;
/// let y = gpu.download(&y)?;
/// assert!((y[2] - 0.66524).abs() < 1e-5 && (y[3] - 1.0 / 3.0).abs() < 1e-6);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn softmax<'a, 'o, 'g, T: RowElement>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    cols: usize,
    output: impl Into<DeviceViewMut<'o, T>>,
) -> Result<()> {
    forward(kernels::softmax, on, input, cols, output)
}

/// `output[r][c] = x[r][c] - max_r - ln(sum_c' exp(x[r][c'] - max_r))` (PyTorch's
/// `log_softmax(x, dim=-1)`); as [`softmax`].
pub fn log_softmax<'a, 'o, 'g, T: RowElement>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    cols: usize,
    output: impl Into<DeviceViewMut<'o, T>>,
) -> Result<()> {
    forward(kernels::log_softmax, on, input, cols, output)
}

/// The gradient of [`softmax`]: from its output `y` and the gradient `dy` of a loss with respect
/// to `y`, `dx[r][c] = y[r][c] * (dy[r][c] - sum_c' dy[r][c'] * y[r][c'])`. `y`, `dy` and `dx`
/// are `rows * cols` elements each; one pass over `y` and `dy` while a block holds the rows
/// (8192 columns of f32, 16384 of halves), two past it.
pub fn softmax_backward<'a, 'b, 'o, 'g, T: RowElement>(
    on: impl Into<CallOn<'g>>,
    y: impl Into<DeviceView<'a, T>>,
    dy: impl Into<DeviceView<'b, T>>,
    cols: usize,
    dx: impl Into<DeviceViewMut<'o, T>>,
) -> Result<()> {
    backward(kernels::softmax_backward, on, y, dy, cols, dx)
}

/// The gradient of [`log_softmax`]: from its output `y` and `dy`,
/// `dx[r][c] = dy[r][c] - exp(y[r][c]) * sum_c' dy[r][c']`; as [`softmax_backward`].
pub fn log_softmax_backward<'a, 'b, 'o, 'g, T: RowElement>(
    on: impl Into<CallOn<'g>>,
    y: impl Into<DeviceView<'a, T>>,
    dy: impl Into<DeviceView<'b, T>>,
    cols: usize,
    dx: impl Into<DeviceViewMut<'o, T>>,
) -> Result<()> {
    backward(kernels::log_softmax_backward, on, y, dy, cols, dx)
}

/// LayerNorm over each row (Ba, Kiros and Hinton, 2016; PyTorch's
/// `layer_norm(x, (cols,), weight, bias, eps)`):
/// `y = (x - mean) / sqrt(var + eps) * weight + bias`, the mean and biased variance of the row's
/// `cols` elements. Where given, `mean` and `rstd` (`rows` `f32` each) receive each row's mean
/// and `1 / sqrt(var + eps)`, as PyTorch saves them for the backward. Each thread's share of the
/// row is reduced in two passes over its registers and the shares combined pairwise (Chan, Golub
/// and LeVeque, 1979), so large means cost no accuracy. See the [module docs](self).
pub fn layer_norm<'a, 'o, 'w, 's, 'g, T: RowElement>(
    on: impl Into<CallOn<'g>>,
    x: impl Into<DeviceView<'a, T>>,
    cols: usize,
    norm: Norm<'w, T>,
    y: impl Into<DeviceViewMut<'o, T>>,
    mean: Option<DeviceViewMut<'s, f32>>,
    rstd: Option<DeviceViewMut<'s, f32>>,
) -> Result<()> {
    check_eps(&kernels::layer_norm, norm.eps)?;
    let (x, y) = (x.into(), y.into());
    let call = RowCall {
        weight: norm.weight.as_ref().map(view),
        bias: norm.bias.as_ref().map(view),
        mean: mean.as_ref().map(view_mut),
        rstd: rstd.as_ref().map(view_mut),
        eps: norm.eps,
        ..RowCall::new(kernels::layer_norm, &x, &y)
    };
    launch::<T>(on.into(), cols, call)
}

/// RMSNorm over each row (Zhang and Sennrich, 2019; PyTorch's `rms_norm(x, (cols,), weight,
/// eps)`): `y = x / sqrt(mean(x^2) + eps) * weight`. Where given, `rstd` (`rows` `f32`) receives
/// each row's `1 / sqrt(mean(x^2) + eps)`. A `norm` with a bias is an
/// [`Error::UnsupportedArgument`]. See the [module docs](self).
pub fn rms_norm<'a, 'o, 'w, 's, 'g, T: RowElement>(
    on: impl Into<CallOn<'g>>,
    x: impl Into<DeviceView<'a, T>>,
    cols: usize,
    norm: Norm<'w, T>,
    y: impl Into<DeviceViewMut<'o, T>>,
    rstd: Option<DeviceViewMut<'s, f32>>,
) -> Result<()> {
    if norm.bias.is_some() {
        return Err(Error::UnsupportedArgument {
            what: kernels::rms_norm.name,
            argument: "bias (RMSNorm has none)",
        });
    }
    check_eps(&kernels::rms_norm, norm.eps)?;
    let (x, y) = (x.into(), y.into());
    let call = RowCall {
        weight: norm.weight.as_ref().map(view),
        rstd: rstd.as_ref().map(view_mut),
        eps: norm.eps,
        ..RowCall::new(kernels::rms_norm, &x, &y)
    };
    launch::<T>(on.into(), cols, call)
}

/// The gradients a norm's backward writes: `dx` (`rows * cols` elements), and where wanted the
/// weight's and the bias's (`cols` elements each; PyTorch's `output_mask`).
pub struct NormGrads<'o, T> {
    /// The gradient of the input, as `x`.
    pub dx: DeviceViewMut<'o, T>,
    /// `sum over rows of dy * x^` (`x^` the normalised input), or not computed.
    pub dweight: Option<DeviceViewMut<'o, T>>,
    /// `sum over rows of dy` (LayerNorm only), or not computed.
    pub dbias: Option<DeviceViewMut<'o, T>>,
}

impl<'o, T> NormGrads<'o, T> {
    /// `dx` only.
    pub fn new(dx: impl Into<DeviceViewMut<'o, T>>) -> Self {
        Self {
            dx: dx.into(),
            dweight: None,
            dbias: None,
        }
    }

    /// With the weight's gradient (`cols` elements).
    pub fn dweight(self, dweight: impl Into<DeviceViewMut<'o, T>>) -> Self {
        Self {
            dweight: Some(dweight.into()),
            ..self
        }
    }

    /// With the bias's gradient (`cols` elements).
    pub fn dbias(self, dbias: impl Into<DeviceViewMut<'o, T>>) -> Self {
        Self {
            dbias: Some(dbias.into()),
            ..self
        }
    }
}

/// The backward of [`layer_norm`]: from the forward's input `x`, the gradient `dy` of a loss
/// with respect to its output, its weight (none: 1) and the `mean` and `rstd` it saved
/// (`rows` `f32` each), with `g = dy * weight` and `x^ = (x - mean) * rstd`:
///
/// - `dx = rstd * (g - mean(g) - x^ * mean(g * x^))` per row (one fused kernel, as the forward:
///   one pass over `x` and `dy` while a block holds the row in registers, 1024 columns of `f32`
///   and 2048 of halves, tiles past it, kept in shared memory where they fit);
/// - `dweight[c] = sum_r dy[r][c] * x^[r][c]` and `dbias[c] = sum_r dy[r][c]` where `grads`
///   asks for them: summed in the `dx` kernel's shared memory over the rows each block or
///   cluster takes (`planning::rows::row_sums_launch`): where one tile of at most 1024 threads of 8
///   items of `x` and of `dy` each holds the row (up to 8192 columns); on a GPU with
///   thread-block clusters, where the sums of a quarter of such tiles fit a block, the row
///   shared among the 4 blocks of a cluster, a chunk of rows a cluster and as many chunks as
///   clusters run at once (on an H100 from 24577 to 98304 columns, and `f32` rows of 8193 to
///   24576 in tiles of 256 threads: `tuning::ROW_SUMS_CLUSTER_GROUP`); else where the sums of
///   all of a block's tiles fit (on an H100 up to 24576 columns); longer rows in two more launches
///   reading `x` and `dy` again, summing chunks of rows; then each column's chunks in order,
///   through `workspace` (8 bytes per column per chunk, at most about 2048 * 256 chunks x
///   columns). Deterministic (the order depends on the shape, whether the GPU has clusters and
///   its multiprocessor count or the clusters it runs at once); zeros when there are no rows.
///
/// Errors as the forward ([module docs](self)), and [`Error::LengthMismatch`] for a `dweight` or
/// `dbias` of other than `cols` elements. See PyTorch's `native_layer_norm_backward`.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_backward<'a, 'b, 'w, 's, 'o, 'g, T: RowElement>(
    on: impl Into<CallOn<'g>>,
    x: impl Into<DeviceView<'a, T>>,
    dy: impl Into<DeviceView<'b, T>>,
    cols: usize,
    weight: Option<DeviceView<'w, T>>,
    mean: impl Into<DeviceView<'s, f32>>,
    rstd: impl Into<DeviceView<'s, f32>>,
    grads: NormGrads<'o, T>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let saved = (Some(mean.into()), rstd.into());
    norm_backward(
        (kernels::layer_norm_backward, kernels::layer_norm_backward_sums),
        on.into(),
        (x.into(), dy.into()),
        cols,
        weight,
        saved,
        grads,
        workspace,
    )
}

/// The backward of [`rms_norm`]: from `x`, `dy`, the weight (none: 1) and the saved `rstd`
/// (`rows` `f32`), with `g = dy * weight` and `x^ = x * rstd`:
/// `dx = rstd * (g - x^ * mean(g * x^))`, and `dweight[c] = sum_r dy[r][c] * x^[r][c]` where
/// `grads` asks for it; as [`layer_norm_backward`]. A `dbias` is an
/// [`Error::UnsupportedArgument`].
#[allow(clippy::too_many_arguments)]
pub fn rms_norm_backward<'a, 'b, 'w, 's, 'o, 'g, T: RowElement>(
    on: impl Into<CallOn<'g>>,
    x: impl Into<DeviceView<'a, T>>,
    dy: impl Into<DeviceView<'b, T>>,
    cols: usize,
    weight: Option<DeviceView<'w, T>>,
    rstd: impl Into<DeviceView<'s, f32>>,
    grads: NormGrads<'o, T>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    if grads.dbias.is_some() {
        return Err(Error::UnsupportedArgument {
            what: kernels::rms_norm_backward.name,
            argument: "bias gradient, dbias (RMSNorm has no bias)",
        });
    }
    let saved = (None, rstd.into());
    norm_backward(
        (kernels::rms_norm_backward, kernels::rms_norm_backward_sums),
        on.into(),
        (x.into(), dy.into()),
        cols,
        weight,
        saved,
        grads,
        workspace,
    )
}

/// `dx` through `kernel`, then `dweight` / `dbias` where asked (see [`layer_norm_backward`]).
#[allow(clippy::too_many_arguments)]
fn norm_backward<T: RowElement>(
    (kernel, summing): (RowKernel, RowKernel),
    on: CallOn<'_>,
    (x, dy): (DeviceView<'_, T>, DeviceView<'_, T>),
    cols: usize,
    weight: Option<DeviceView<'_, T>>,
    (mean, rstd): (Option<DeviceView<'_, f32>>, DeviceView<'_, f32>),
    grads: NormGrads<'_, T>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let call = RowCall {
        grad: Some(view(&dy)),
        weight: weight.as_ref().map(view),
        mean: mean.as_ref().map(view),
        rstd: Some(view(&rstd)),
        ..RowCall::new(kernel, &x, &grads.dx)
    };
    let bound = |out: &Option<DeviceViewMut<'_, T>>| out.as_ref().map_or(Bound::default(), |v| v.bound);
    call.check_bounds(&on, &[bound(&grads.dweight), bound(&grads.dbias)])?;
    let n = x.len();
    for (what, out) in [("rows: dweight", &grads.dweight), ("rows: dbias", &grads.dbias)] {
        let Some(out) = out else { continue };
        length(what, cols, out.len())?;
        let inputs = [view(&x), view(&dy)].map(|(address, len, _)| (address, len));
        check_overlaps(&kernel, what, (out.address(), cols), &inputs, size_of::<T>())?;
    }
    let wanted = grads.dweight.is_some() || grads.dbias.is_some();
    let rows = n.checked_div(cols).unwrap_or(0);
    let need = if wanted {
        norm_backward_scratch::<T>(&on, &summing, rows, cols)?
    } else {
        NormScratch::default()
    };
    // Checks every shape, the saved statistics and dx's overlaps, begins the workspace's use
    // (grown to `need`), then queues dx (and where a tile holds the row, each group's sums of
    // the parameters' gradients).
    let Summing {
        workspace,
        partials: summed,
    } = launch_summing::<T>(on, cols, call, wanted.then_some((workspace, &need, summing)))?;
    let Some(workspace) = workspace else {
        return Ok(()); // no gradient of the parameters asked for, or no columns
    };
    let grad_policy = crate::tuning::norm_grad(on.gpu());
    let (chunks, rows_per_chunk) = norm_grad_chunks(grad_policy, rows, cols);
    let column_blocks = cols.div_ceil(grad_policy.block_threads as usize) as u32;
    let pointer = |given: &Option<DeviceViewMut<'_, T>>| given.as_ref().map_or(0, |v| v.address());
    let mut params = NormGradParams {
        input: x.address() as *const T::Raw,
        grad: dy.address() as *const T::Raw,
        mean: mean.as_ref().map_or(0, |v| v.address()) as *const f32,
        rstd: rstd.address() as *const f32,
        partials: std::ptr::null_mut(),
        dweight: pointer(&grads.dweight) as *mut T::Raw,
        dbias: pointer(&grads.dbias) as *mut T::Raw,
        rows,
        cols,
        rows_per_chunk,
        chunks,
        column_blocks,
    };
    let module = crate::module(on.gpu())?;
    if let Some((partials, groups)) = summed {
        params.partials = partials as *mut f32;
        params.chunks = groups;
    } else {
        let slots = (chunks as usize).checked_mul(cols);
        let grid = chunks.checked_mul(column_blocks);
        let (Some(slots), Some(grid)) = (slots, grid) else {
            // The plan's chunks (norm_grad_chunks), not the caller's: a defect of the planning.
            return Err(Error::InvalidLaunch(format!(
                "{}: {chunks} chunks of {cols} columns overflow the partials or the grid",
                kernel.name
            )));
        };
        let partials = workspace.arena().carve(need.partials, slots.saturating_mul(8))?;
        params.partials = partials as *mut f32;
        let partial = module
            .kernel::<NormGradParams<T::Raw>>(crate::registered(NORM_GRADS_PARTIAL, &[T::NAME])?.name)?;
        let config = LaunchConfig::new(grid, grad_policy.block_threads);
        // SAFETY: x and dy hold rows * cols elements, mean (or null) and rstd `rows` values (all
        // checked by the dx launch), the workspace `chunks * cols` 8-byte slots (2 f32 each);
        // the grid is as NormGradParams says.
        unsafe { on.stream().launch(&partial, config, &params)? };
    }
    let finish =
        module.kernel::<NormGradParams<T::Raw>>(crate::registered(NORM_GRADS_FINISH, &[T::NAME])?.name)?;
    let blocks = cols.div_ceil(grad_policy.finish_columns as usize) as u32;
    let config = LaunchConfig::new(blocks, grad_policy.block_threads)
        .with_shared_mem(grad_policy.finish_shared_bytes());
    // SAFETY: the partials hold 2 f32 per column for each of `params.chunks` chunks, written
    // before on this stream; dweight / dbias (or null) hold `cols` elements overlapping no
    // input; the grid and shared memory are as NormGradParams says.
    unsafe { on.stream().launch(&finish, config, &params) }
}

/// How [`cross_entropy`] reduces the rows' losses (PyTorch's `reduction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Reduction {
    /// The mean over the rows whose target is not the ignore index (NaN if there are none).
    #[default]
    Mean,
    /// The sum over the rows.
    Sum,
    /// One loss per row (0 for an ignored row).
    None,
}

/// The options of [`cross_entropy`], PyTorch's defaults by [`Default`]: the mean, ignore index
/// -100, no label smoothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrossEntropy {
    /// How the rows' losses are reduced.
    pub reduction: Reduction,
    /// Rows whose target is this take no part: loss 0, gradient 0, not counted by the mean.
    pub ignore_index: i64,
    /// `s` in `[0, 1]`: the target distribution is `(1 - s) onehot(target) + s / classes`.
    pub label_smoothing: f32,
}

impl Default for CrossEntropy {
    fn default() -> Self {
        Self {
            reduction: Reduction::Mean,
            ignore_index: -100,
            label_smoothing: 0.0,
        }
    }
}

/// Cross-entropy from logits and integer targets (PyTorch's `cross_entropy(logits, targets)`
/// with class indices), and fused with it, where `grad` is given, its gradient with respect to
/// the logits for an upstream gradient of 1.
///
/// - `logits`: `rows * classes` elements, a row per sample; `targets`: `rows` classes in
///   `0..classes`, or `options.ignore_index`.
/// - Per row, with `s` the label smoothing: `loss = ln(sum(exp(x))) - (1 - s) x[target] -
///   s mean(x)` (computed as `max + ln(sum(exp(x - max)))`, in `f32`), 0 for an ignored row.
/// - `loss`: one `f32` for [`Reduction::Mean`] (the sum over the valid rows divided by their
///   number; NaN when there are none) and [`Reduction::Sum`], `rows` for [`Reduction::None`].
///   `f32` whatever the logits' type (PyTorch returns the logits' type).
/// - `grad`: `rows * classes` elements, `(softmax(x) - (1 - s) onehot(target) - s / classes)`
///   times `1 / valid rows` for the mean and 1 otherwise; 0 on ignored rows. One pass over the
///   logits while a block holds the row (as [`softmax`]), reading the logits once for both the
///   loss and the gradient.
/// - A target outside `0..classes` that is not the ignore index gives NaN for its row's loss and
///   gradient (and so for the mean or sum), where PyTorch stops with a device assertion.
/// - Launches: for the mean, a count of the valid targets first; the row kernel; for the mean
///   and the sum, the device reduce over the rows' losses (deterministic) through `workspace`
///   (4 bytes per row + the reduce's), and for the mean one division.
///
/// # Errors
/// As the [module docs](self), and [`Error::LengthMismatch`] for `targets`, `loss` or `grad` of
/// the wrong length; [`Error::ScalarOutOfRange`] for a label smoothing that is NaN or outside
/// `[0, 1]`; [`Error::PastLimit`] for [`Reduction::Mean`] over more than `u32::MAX` rows (the
/// device counts the valid targets in a `u32`). All checked before the workspace is used or anything is queued.
#[allow(clippy::too_many_arguments)]
pub fn cross_entropy<'a, 't, 'l, 'o, 'g, T: RowElement>(
    on: impl Into<CallOn<'g>>,
    logits: impl Into<DeviceView<'a, T>>,
    classes: usize,
    targets: impl Into<DeviceView<'t, i64>>,
    options: CrossEntropy,
    loss: impl Into<DeviceViewMut<'l, f32>>,
    grad: Option<DeviceViewMut<'o, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, logits, targets, loss) = (on.into(), logits.into(), targets.into(), loss.into());
    let k = kernels::cross_entropy;
    let smoothing = options.label_smoothing;
    // Everything the launches check, before the workspace is touched.
    let rows = check_cross_entropy(
        logits.len(),
        classes,
        targets.len(),
        loss.len(),
        grad.as_ref().map(|g| g.len()),
        &options,
    )?;
    let per_row = options.reduction == Reduction::None;
    let mut call = RowCall {
        targets: Some(view(&targets)),
        ignore_index: options.ignore_index,
        smoothing,
        output: grad.as_ref().map(view_mut),
        ..RowCall::reading(k, &logits)
    };
    call.check_bounds(&on, &[loss.bound])?;
    if per_row {
        call.loss = Some(view_mut(&loss));
        return launch::<T>(on, classes, call);
    }
    let scratch = cross_entropy_scratch(on, rows);
    let workspace = workspace.begin(on.stream(), &scratch.need)?;
    let arena = workspace.arena();
    let count = workspace.carve_zeroed(arena, scratch.count, size_of::<u32>())?;
    let row_losses = arena.carve(scratch.losses, rows * size_of::<f32>())?;
    call.loss = Some((row_losses, rows, Bound::default()));
    let module = crate::module(on.gpu())?;
    let count_params = TargetCountParams {
        targets: targets.address() as *const i64,
        rows: targets.len(),
        ignore_index: options.ignore_index,
        valid_targets: count as *mut u32,
        loss: loss.address() as *mut f32,
    };
    let mean = options.reduction == Reduction::Mean;
    if mean && targets.len() == rows {
        call.valid_targets = count;
        let kernel = module.kernel::<TargetCountParams>(crate::registered(CROSS_ENTROPY_COUNT, &[])?.name)?;
        let row_policy = crate::tuning::rows(on.gpu());
        let block = row_policy.target_count_block_threads;
        let blocks = rows
            .div_ceil(block as usize)
            .clamp(1, row_policy.target_count_max_blocks) as u32;
        // SAFETY: `targets` holds `rows` values (checked), the count is one zeroed u32 of the
        // workspace; whole warps.
        unsafe {
            on.stream()
                .launch(&kernel, LaunchConfig::new(blocks, block), &count_params)?
        };
    }
    launch::<T>(on, classes, call)?;
    // SAFETY: `row_losses` holds `rows` f32 of the workspace, written by the row kernel before
    // on this stream; `loss` one f32.
    let losses = unsafe { DeviceView::<f32>::from_raw_parts(row_losses, rows) };
    let reduce_arena = arena.part(scratch.reduce)?;
    crate::device::reduce_to_address::<f32, crate::device::Sum>(
        on,
        losses,
        loss.address(),
        &workspace,
        reduce_arena,
    )?;
    if mean {
        let kernel = module.kernel::<TargetCountParams>(crate::registered(CROSS_ENTROPY_MEAN, &[])?.name)?;
        // SAFETY: one thread dividing the loss (one f32) by the count (one u32), after the count
        // and the sum on this stream.
        unsafe {
            on.stream()
                .launch(&kernel, LaunchConfig::new(1, 1), &count_params)?
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_out_of_range<T>(r: Result<T>) -> bool {
        matches!(r, Err(Error::ScalarOutOfRange { .. }))
    }

    fn is_not_whole_rows<T>(r: Result<T>) -> bool {
        matches!(r, Err(Error::NotWholeRows { .. }))
    }

    fn is_past_limit<T>(r: Result<T>) -> bool {
        matches!(r, Err(Error::PastLimit { .. }))
    }

    fn is_past_address_space<T>(r: Result<T>) -> bool {
        matches!(r, Err(Error::PastAddressSpace { .. }))
    }

    fn is_mismatch<T>(r: Result<T>) -> bool {
        matches!(r, Err(Error::LengthMismatch { .. }))
    }

    #[test]
    fn eps_nan_infinite_or_negative_is_rejected() {
        for k in [&kernels::layer_norm, &kernels::rms_norm] {
            for eps in [
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                -1e-5,
                -f32::MIN_POSITIVE,
            ] {
                assert!(is_out_of_range(check_eps(k, eps)), "{} eps {eps}", k.name);
            }
            for eps in [0.0, -0.0, 1e-5, 1.0, f32::MAX] {
                assert!(check_eps(k, eps).is_ok(), "{} eps {eps}", k.name);
            }
        }
        let message = check_eps(&kernels::layer_norm, f32::NAN).unwrap_err().to_string();
        assert!(
            message.contains("layer_norm") && message.contains("eps NaN"),
            "{message}"
        );
    }

    #[test]
    fn row_shapes_are_checked() {
        let k = &kernels::softmax;
        assert_eq!(row_count(k, 0, 0).unwrap(), 0);
        assert_eq!(row_count(k, 12, 4).unwrap(), 3);
        assert!(matches!(
            row_count(k, 12, 0),
            Err(Error::NotWholeRows {
                what: "softmax",
                len: 12,
                row_len: 0
            })
        ));
        assert!(is_not_whole_rows(row_count(k, 12, 5)));
        assert!(matches!(
            row_count(k, 1 << 31, 1 << 31),
            Err(Error::PastLimit { count, max, .. }) if count == 1 << 31 && max == (1 << 31) - 1
        ));
        let message = row_count(k, 12, 5).unwrap_err().to_string();
        assert_eq!(
            message,
            "softmax: 12 elements are not a whole number of rows of 5"
        );
        assert_eq!(row_count(k, (1 << 31) - 1, (1 << 31) - 1).unwrap(), 1);
    }

    #[test]
    fn byte_ranges_past_the_address_space_are_rejected() {
        let k = &kernels::softmax;
        assert_eq!(byte_range(k, 0x1000, 4, 4).unwrap(), (0x1000, 0x1010));
        // len * size overflows usize.
        assert!(is_past_address_space(byte_range(k, 0x1000, usize::MAX / 2, 4)));
        // address + bytes overflows u64.
        let r = byte_range(k, u64::MAX - 8, 4, 4);
        assert!(
            matches!(r, Err(Error::PastAddressSpace { items: 4, item_bytes: 4, start, .. }) if start == u64::MAX - 8),
            "{r:?}"
        );
        assert_eq!(
            byte_range(k, u64::MAX - 16, 4, 4).unwrap(),
            (u64::MAX - 16, u64::MAX)
        );
    }

    #[test]
    fn cross_entropy_mean_past_u32_rows_is_rejected() {
        let mean = CrossEntropy::default();
        let rows = u32::MAX as usize + 1;
        // One class a row: 2^32 rows would wrap the device's u32 count of valid targets.
        assert!(is_past_limit(check_cross_entropy(rows, 1, rows, 1, None, &mean)));
        assert!(is_past_limit(check_cross_entropy(
            rows,
            1,
            rows,
            1,
            Some(rows),
            &mean
        )));
        // u32::MAX rows fit the count; the sum and per-row losses count nothing.
        let most = u32::MAX as usize;
        assert_eq!(check_cross_entropy(most, 1, most, 1, None, &mean).unwrap(), most);
        let sum = CrossEntropy {
            reduction: Reduction::Sum,
            ..mean
        };
        assert_eq!(check_cross_entropy(rows, 1, rows, 1, None, &sum).unwrap(), rows);
        let none = CrossEntropy {
            reduction: Reduction::None,
            ..mean
        };
        assert_eq!(
            check_cross_entropy(rows, 1, rows, rows, None, &none).unwrap(),
            rows
        );
    }

    #[test]
    fn cross_entropy_arguments_are_checked_before_the_workspace() {
        let mean = CrossEntropy::default();
        assert_eq!(check_cross_entropy(12, 4, 3, 1, Some(12), &mean).unwrap(), 3);
        assert_eq!(check_cross_entropy(0, 0, 0, 1, None, &mean).unwrap(), 0);
        // Shapes.
        assert!(is_not_whole_rows(check_cross_entropy(12, 0, 3, 1, None, &mean)));
        assert!(is_not_whole_rows(check_cross_entropy(12, 5, 3, 1, None, &mean)));
        // Lengths: targets, loss (1 for the mean and the sum, rows for none), gradient.
        assert!(is_mismatch(check_cross_entropy(12, 4, 2, 1, None, &mean)));
        assert!(is_mismatch(check_cross_entropy(12, 4, 3, 3, None, &mean)));
        assert!(is_mismatch(check_cross_entropy(12, 4, 3, 1, Some(11), &mean)));
        let none = CrossEntropy {
            reduction: Reduction::None,
            ..mean
        };
        assert!(is_mismatch(check_cross_entropy(12, 4, 3, 1, None, &none)));
        // Label smoothing: finite and in [0, 1].
        for s in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.1, 1.5] {
            let options = CrossEntropy {
                label_smoothing: s,
                ..mean
            };
            assert!(
                is_out_of_range(check_cross_entropy(12, 4, 3, 1, None, &options)),
                "{s}"
            );
        }
        for s in [0.0, 0.1, 1.0] {
            let options = CrossEntropy {
                label_smoothing: s,
                ..mean
            };
            assert!(check_cross_entropy(12, 4, 3, 1, None, &options).is_ok(), "{s}");
        }
    }

    #[test]
    fn outputs_overlapping_an_input_are_rejected() {
        let k = &kernels::softmax;
        // 4-byte elements: [0x1000, 0x1030) and [0x1010, 0x1030) share bytes.
        let r = check_overlaps(k, "the output", (0x1010, 8), &[(0x1000, 12)], 4);
        assert!(
            matches!(
                r,
                Err(Error::OutputOverlapsInput {
                    what: "softmax",
                    output: "the output"
                })
            ),
            "{r:?}"
        );
        assert_eq!(
            r.unwrap_err().to_string(),
            "softmax: the output overlaps an input"
        );
        // Side by side, and an empty range at the output's end: no overlap.
        assert!(check_overlaps(k, "the output", (0x1030, 4), &[(0x1000, 12), (0x1040, 0)], 4).is_ok());
        let r = check_overlaps(k, "rows: dweight", (0x2000, 4), &[(0x1000, 4), (0x1ffc, 2)], 4);
        assert!(matches!(
            r,
            Err(Error::OutputOverlapsInput {
                output: "rows: dweight",
                ..
            })
        ));
        // A range past the address space is refused as such.
        assert!(is_past_address_space(check_overlaps(
            k,
            "the output",
            (0x1000, 4),
            &[(u64::MAX - 8, 4)],
            4
        )));
    }
}
