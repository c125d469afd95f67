//! The lecture's scans on the GPU: one section per block (Kogge-Stone, double-buffered
//! Kogge-Stone, Brent-Kung), and the hierarchical scan of any length built on them.
//!
//! Hierarchical scan (the lecture's "arbitrary length" recipe): scan each section in its own
//! block and write its total to an auxiliary array; scan that array the same way (recursively
//! while it spans more than one section); add each section's scanned predecessor total back. The
//! data is read twice; the levels meet only across kernel launches on one stream.

use crate::{DeviceBuffer, Error, Gpu, LaunchConfig, Result};
use gpu_primitives::device::ScanKind;
use gpu_primitives_runtime::DevicePointer;

/// A section-scan algorithm of the lecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectionScan {
    /// `log2(block)` passes, two barriers each; section = block.
    KoggeStone,
    /// Kogge-Stone with two shared buffers swapped each pass: one barrier per pass.
    KoggeStoneDoubleBuffered,
    /// Up-sweep then down-sweep, `2 (section - 1)` adds; section = 2 x block; block a power of two.
    BrentKung,
}

impl SectionScan {
    /// All three, in the lecture's order.
    pub const ALL: [SectionScan; 3] = [Self::KoggeStone, Self::KoggeStoneDoubleBuffered, Self::BrentKung];

    fn kernel(self) -> &'static str {
        match self {
            Self::KoggeStone => "scan_kogge_stone",
            Self::KoggeStoneDoubleBuffered => "scan_kogge_stone_double_buffered",
            Self::BrentKung => "scan_brent_kung",
        }
    }

    /// Elements per section (per block) for a block of `block` threads.
    pub fn section_len(self, block: u32) -> usize {
        match self {
            Self::BrentKung => 2 * block as usize,
            _ => block as usize,
        }
    }

    fn shared_mem_bytes(self, block: u32) -> u32 {
        match self {
            Self::KoggeStone => block * 4,
            _ => 2 * block * 4,
        }
    }

    fn validate(self, block: u32) -> Result<()> {
        LaunchConfig::new(1, block).validate()?;
        if self == Self::BrentKung && !block.is_power_of_two() {
            return Err(Error::InvalidLaunch(format!(
                "Brent-Kung needs a power-of-two block size, got {block}"
            )));
        }
        Ok(())
    }
}

/// Scan `input` (f32 sums) of any length with `algorithm` sections of `block` threads,
/// hierarchically. Returns a new vector of `input.len()` elements; `input` is not modified.
///
/// # Errors
/// [`Error::InvalidLaunch`] for a bad block size (over 1024, not a power of two for Brent-Kung,
/// or sections of one element with more than one input); device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::ScanKind;
/// use gpu_primitives_lessons::lecture_scan::{self, SectionScan};
/// let gpu = gpu_primitives_lessons::open_gpu(0)?;
/// let y = lecture_scan::hierarchical_scan(&gpu, &[1.0; 5], SectionScan::BrentKung, ScanKind::Exclusive, 2)?;
/// assert_eq!(y, [0.0, 1.0, 2.0, 3.0, 4.0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn hierarchical_scan(
    gpu: &Gpu,
    input: &[f32],
    algorithm: SectionScan,
    kind: ScanKind,
    block: u32,
) -> Result<Vec<f32>> {
    if input.is_empty() {
        algorithm.validate(block)?;
        return Ok(Vec::new());
    }
    let d_in = gpu.upload(input)?;
    let d_out = gpu.alloc_zeroed::<f32>(input.len())?;
    let _workspace = launch(gpu, &d_in, &d_out, algorithm, kind, block)?;
    gpu.download(&d_out)
}

/// Queue the hierarchical scan of `d_in` into `d_out` (equal lengths). Returns the auxiliary
/// buffers (section totals at each level); keep them until the stream has finished.
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::InvalidLaunch`], device errors.
pub fn launch(
    gpu: &Gpu,
    d_in: &DeviceBuffer<f32>,
    d_out: &DeviceBuffer<f32>,
    algorithm: SectionScan,
    kind: ScanKind,
    block: u32,
) -> Result<Vec<DeviceBuffer<f32>>> {
    if d_in.len() != d_out.len() {
        return Err(Error::LengthMismatch {
            what: "scan: d_out",
            expected: d_in.len(),
            found: d_out.len(),
        });
    }
    algorithm.validate(block)?;
    if algorithm.section_len(block) < 2 && d_in.len() > 1 {
        return Err(Error::InvalidLaunch(format!(
            "{algorithm:?} with {block}-thread blocks scans sections of one element, which cannot shorten a scan of {} elements; use 2 or more threads",
            d_in.len()
        )));
    }
    let mut workspace = Vec::new();
    if !d_in.is_empty() {
        hierarchical(gpu, d_in, d_out, algorithm, kind, block, &mut workspace)?;
    }
    Ok(workspace)
}

fn hierarchical(
    gpu: &Gpu,
    d_in: &DeviceBuffer<f32>,
    d_out: &DeviceBuffer<f32>,
    algorithm: SectionScan,
    kind: ScanKind,
    block: u32,
    workspace: &mut Vec<DeviceBuffer<f32>>,
) -> Result<()> {
    let n = d_in.len();
    let section = algorithm.section_len(block);
    let sections = n.div_ceil(section);
    if sections as u64 > LaunchConfig::MAX_GRID as u64 {
        return Err(Error::InvalidLaunch(format!(
            "{sections} sections exceed the grid limit"
        )));
    }
    let config = LaunchConfig::new(sections as u32, block).with_shared_mem(algorithm.shared_mem_bytes(block));
    if sections == 1 {
        return launch_section_scan(
            gpu,
            algorithm,
            config,
            d_in,
            d_out,
            DevicePointer::null(),
            n,
            kind,
        );
    }
    let totals = gpu.alloc_zeroed::<f32>(sections)?;
    let scanned = gpu.alloc_zeroed::<f32>(sections)?;
    launch_section_scan(
        gpu,
        algorithm,
        config,
        d_in,
        d_out,
        totals.as_device_ptr(),
        n,
        kind,
    )?;
    hierarchical(
        gpu,
        &totals,
        &scanned,
        algorithm,
        ScanKind::Inclusive,
        block,
        workspace,
    )?;
    let add_config = LaunchConfig::for_elements(n, 256, 8 * gpu.info().multiprocessors);
    // SAFETY: scan_add_section_prefixes takes (output, scanned_totals, n, section_len): d_out has
    // n elements and `scanned` one per section.
    unsafe {
        gpu.launch(
            "scan_add_section_prefixes",
            add_config,
            (d_out.as_device_ptr(), scanned.as_device_ptr(), n, section),
        )?
    };
    workspace.push(totals);
    workspace.push(scanned);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn launch_section_scan(
    gpu: &Gpu,
    algorithm: SectionScan,
    config: LaunchConfig,
    d_in: &DeviceBuffer<f32>,
    d_out: &DeviceBuffer<f32>,
    totals: DevicePointer<f32>,
    n: usize,
    kind: ScanKind,
) -> Result<()> {
    let exclusive = (kind == ScanKind::Exclusive) as u32;
    // SAFETY: the section kernels take (input, output, section_totals, n, exclusive): d_in and
    // d_out hold n f32, `totals` is null or one f32 per block, and `config` carries the dynamic
    // shared memory each kernel needs (`shared_mem_bytes`).
    unsafe {
        gpu.launch(
            algorithm.kernel(),
            config,
            (d_in.as_device_ptr(), d_out.as_device_ptr(), totals, n, exclusive),
        )
    }
}
