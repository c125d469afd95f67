//! Stream compaction (select_if, select_flagged, unique, partition_if, partition_flagged)
//! against the CPU references: property tests over every element type (random lengths, run
//! lengths, flag densities, predicates, misaligned views), special float values and integer
//! extremes against every predicate, bad input, and lengths past 2^31; and the compaction
//! agent run from a kernel of the kind a project writes itself, with its own predicate.

use crate::device::TestElement;
use crate::support::{GpuTest, check_eq, check_slices, ok, rng, tile_edge_lengths, under_sanitizers};
use gpu_primitives::device::{
    self, CompareKind, DeviceVec, DeviceView, DeviceWorkspace, Element, LookBackStatus, Predicate,
    select_shared_bytes,
};
use gpu_primitives::{Error, Gpu, LaunchConfig, reference};
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rand::Rng;
use std::cell::RefCell;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("compaction::every_type_random_layouts", every_type),
    ("compaction::special_float_values", special_floats),
    ("compaction::integer_extremes", integer_extremes),
    ("compaction::bad_input_and_empty", bad_input),
    ("compaction::past_2_pow_31_elements", past_2_pow_31),
    ("compaction::own_kernel_own_predicate", own_kernel_own_predicate),
];

/// `values` with each value repeated 1 to `longest` times (runs for unique).
pub fn with_runs<T: Copy>(values: &[T], longest: usize, seed: u64) -> Vec<T> {
    let mut r = rng(seed);
    let n = values.len();
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    while out.len() < n {
        let run = r.random_range(1..=longest).min(n - out.len());
        out.extend(std::iter::repeat_n(values[i % n], run));
        i += 1;
    }
    out
}

/// Flags with `density` of them non-zero (values 1..=255: any non-zero byte keeps).
fn flags(n: usize, density: f64, seed: u64) -> Vec<u8> {
    let mut r = rng(seed);
    (0..n)
        .map(|_| {
            if r.random_bool(density) {
                r.random_range(1..=255)
            } else {
                0
            }
        })
        .collect()
}

/// A predicate of `kind` with thresholds taken from the input (or none for an empty input).
fn predicate<T: Element>(kind: CompareKind, x: &[T], seed: u64) -> Option<Predicate<T>> {
    if x.is_empty() {
        return None;
    }
    let mut r = rng(seed);
    let (a, b) = (x[r.random_range(0..x.len())], x[r.random_range(0..x.len())]);
    Some(match kind {
        CompareKind::Less => Predicate::less(a),
        CompareKind::LessEqual => Predicate::less_equal(a),
        CompareKind::Greater => Predicate::greater(a),
        CompareKind::GreaterEqual => Predicate::greater_equal(a),
        CompareKind::Equal => Predicate::equal(a),
        CompareKind::NotEqual => Predicate::not_equal(a),
        CompareKind::InRange => Predicate::in_range(a, b),
        CompareKind::NotNan => Predicate::not_nan(),
    })
}

fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// Bits of a result, so that NaNs compare equal to themselves (a raw f32 is still an f32).
pub fn bits<T: Element>(x: &[T]) -> Vec<u64> {
    raw_bits::<T>(T::as_raw(x))
}

/// Bits of values as the device stores them.
pub fn raw_bits<T: Element>(x: &[T::Raw]) -> Vec<u64> {
    x.iter()
        .map(|v| {
            bytemuck::bytes_of(v)
                .iter()
                .rev()
                .fold(0u64, |a, &b| a << 8 | b as u64)
        })
        .collect()
}

/// Every compaction of `x` (viewed from element `skip` on, to leave 16-byte alignment) against
/// the references: the items, the count in device memory, the rest of the output untouched,
/// the input unchanged.
fn check_all<T: Element>(
    gpu: &Gpu,
    x: &[T],
    skip: usize,
    keep: Option<Predicate<T>>,
    flag_bytes: &[u8],
    ws: &mut DeviceWorkspace,
) -> Result<(), TestCaseError> {
    let d_x = DeviceVec::from_slice(gpu, x).map_err(fail)?;
    let d_flags = gpu.upload(flag_bytes).map_err(fail)?;
    let view: DeviceView<'_, T> = d_x.view().slice(skip..x.len());
    let flag_view: DeviceView<'_, u8> = DeviceView::from(&d_flags).slice(skip..x.len());
    let input = &x[skip..];
    let n = input.len();
    // A sentinel pattern past what is written: select must leave it alone.
    let sentinel: Vec<T> = x.iter().rev().copied().collect();
    let mut count = gpu.alloc_zeroed::<u64>(1).map_err(fail)?;
    type Case<T> = (&'static str, Vec<T>, usize, bool);
    let mut cases: Vec<Case<T>> = Vec::new();
    let flagged = &flag_bytes[skip..];
    let selected_flagged = reference::select_flagged(input, flagged);
    cases.push((
        "select_flagged",
        selected_flagged.clone(),
        selected_flagged.len(),
        false,
    ));
    let (parted, kept) = reference::partition(input, |i, _| flagged[i] != 0);
    cases.push(("partition_flagged", parted, kept, true));
    let uniq = reference::unique(input);
    cases.push(("unique", uniq.clone(), uniq.len(), false));
    if let Some(p) = keep {
        let sel = reference::select_if(input, p);
        cases.push(("select_if", sel.clone(), sel.len(), false));
        let (parted, kept) = reference::partition(input, |_, v| p.keep(v));
        cases.push(("partition_if", parted, kept, true));
    }
    for (name, expected, expected_count, partition) in cases {
        let mut d_out = DeviceVec::from_slice(gpu, &sentinel[..n]).map_err(fail)?;
        match name {
            "select_flagged" => device::select_flagged(gpu, view, flag_view, &mut d_out, &mut count, ws),
            "partition_flagged" => {
                device::partition_flagged(gpu, view, flag_view, &mut d_out, &mut count, ws)
            }
            "unique" => device::unique(gpu, view, &mut d_out, &mut count, ws),
            "select_if" => device::select_if(gpu, view, keep.unwrap(), &mut d_out, &mut count, ws),
            _ => device::partition_if(gpu, view, keep.unwrap(), &mut d_out, &mut count, ws),
        }
        .map_err(fail)?;
        let found_count = gpu.download(&count).map_err(fail)?[0] as usize;
        let what = format!("{name} {} n={n} skip={skip}", T::NAME);
        prop_assert_eq!(found_count, expected_count, "{}: count", what);
        let out = raw_bits::<T>(&d_out.to_vec(gpu).map_err(fail)?);
        let written = if partition { n } else { expected_count };
        let expected = bits(&expected);
        if let Some(i) = (0..written).find(|&i| out[i] != expected[i]) {
            return Err(TestCaseError::fail(format!(
                "{what}: index {i}: found bits {:#x}, expected {:#x}",
                out[i], expected[i]
            )));
        }
        prop_assert!(
            out[written..] == bits(&sentinel[written..n]),
            "{}: wrote past the kept items",
            what
        );
    }
    prop_assert!(
        raw_bits::<T>(&d_x.to_vec(gpu).map_err(fail)?) == bits(x),
        "the input changed"
    );
    Ok(())
}

/// Lengths around tile edges (a tile is 256 x scan items: 2048 to 16384 elements), small and
/// large.
fn length() -> impl Strategy<Value = usize> {
    let edges: Vec<usize> = vec![
        0,
        1,
        2,
        31,
        33,
        2047,
        2048,
        2049,
        4095,
        4096,
        4097,
        8191,
        8192,
        8193,
        16383,
        16384,
        16385,
        65_537,
        1_048_573,
        (1 << 22) + 3,
    ];
    prop_oneof![
        5 => prop::sample::select(edges),
        4 => 0usize..200_000,
        1 => 200_000usize..3_000_000,
    ]
}

fn random_layouts<T: TestElement>(gpu: &Gpu) -> Result<(), Failed> {
    let workspace = RefCell::new(DeviceWorkspace::new());
    let densities = [0.0, 0.02, 0.5, 0.98, 1.0];
    crate::properties::runner()
        .run(
            &(
                length(),
                0usize..4,
                1usize..40,
                0usize..densities.len(),
                0u32..8,
                any::<u64>(),
            ),
            |(n, skip, longest, density, kind, seed)| {
                let ws = &mut *workspace.borrow_mut();
                let n = n + skip;
                let x = with_runs(&T::make(n, seed), longest, seed ^ 1);
                let f = flags(n, densities[density], seed ^ 2);
                let kind = CompareKind::from_code(kind).unwrap();
                let skip = skip.min(n);
                check_all(gpu, &x, skip, predicate(kind, &x[skip..], seed ^ 3), &f, ws)
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

fn every_type(gpu: &Gpu) -> Result<(), Failed> {
    random_layouts::<f32>(gpu)?;
    random_layouts::<f64>(gpu)?;
    random_layouts::<i32>(gpu)?;
    random_layouts::<u32>(gpu)?;
    random_layouts::<i64>(gpu)?;
    random_layouts::<u64>(gpu)?;
    random_layouts::<f16>(gpu)?;
    random_layouts::<bf16>(gpu)
}

/// NaN, infinities, -0.0 and +0.0 in runs, in f32, f64, f16 and bf16: unique keeps every NaN
/// and merges -0.0 with +0.0; every predicate follows IEEE 754, against every special value as
/// the threshold (and as either end of a range).
fn special_floats(gpu: &Gpu) -> Result<(), Failed> {
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, 1.5, -2.0];
    let mut r = rng(7);
    let ws = &mut DeviceWorkspace::new();
    for n in [1usize, 100, 8193, 300_001] {
        let x: Vec<f32> = (0..n)
            .map(|_| specials[r.random_range(0..specials.len())])
            .collect();
        let x = with_runs(&x, 5, n as u64);
        let f = flags(n, 0.5, n as u64);
        special_predicates(gpu, &x, &specials, &f, |v| v, ws)?;
        special_predicates(gpu, &x, &specials, &f, |v| v as f64, ws)?;
        special_predicates(gpu, &x, &specials, &f, f16::from_f32, ws)?;
        special_predicates(gpu, &x, &specials, &f, bf16::from_f32, ws)?;
        // The zeros of different signs are one run; each NaN its own.
        let zeros = [0.0f32, -0.0, 0.0, f32::NAN, f32::NAN];
        check_eq(
            "unique of zeros and NaNs",
            ok(device::unique_slice(gpu, &zeros))?.len(),
            3,
        )?;
    }
    Ok(())
}

/// Every kind against each special value as the threshold, and every range between two of them,
/// over `x` converted to `T`.
fn special_predicates<T: Element + std::fmt::Debug>(
    gpu: &Gpu,
    x: &[f32],
    specials: &[f32],
    flag_bytes: &[u8],
    to: impl Fn(f32) -> T,
    ws: &mut DeviceWorkspace,
) -> Result<(), Failed> {
    let x: Vec<T> = x.iter().map(|&v| to(v)).collect();
    let mut predicates = vec![Predicate::not_nan()];
    for &a in specials {
        for kind in CompareKind::ALL {
            match kind {
                CompareKind::InRange => {
                    predicates.extend(specials.iter().map(|&b| Predicate::in_range(to(a), to(b))))
                }
                CompareKind::NotNan => {}
                _ => predicates.push(predicate(kind, &[to(a)], 0).unwrap()),
            }
        }
    }
    for p in predicates {
        check_all(gpu, &x, 0, Some(p), flag_bytes, ws).map_err(|e| Failed::from(format!("{p:?}: {e}")))?;
    }
    Ok(())
}

/// The integer types' extremes as items and thresholds: the intervals of `<` below the smallest
/// value and of `>` above the largest are empty, `<=` the largest keeps everything.
fn integer_extremes(gpu: &Gpu) -> Result<(), Failed> {
    fn run<T: Element + std::fmt::Debug>(
        gpu: &Gpu,
        values: &[T],
        ws: &mut DeviceWorkspace,
    ) -> Result<(), Failed> {
        let mut r = rng(11);
        let x: Vec<T> = (0..5000)
            .map(|_| values[r.random_range(0..values.len())])
            .collect();
        let f = flags(x.len(), 0.5, 3);
        for &a in values {
            for kind in CompareKind::ALL {
                let ps: Vec<Predicate<T>> = match kind {
                    CompareKind::InRange => values.iter().map(|&b| Predicate::in_range(a, b)).collect(),
                    _ => vec![predicate(kind, &[a], 0).unwrap()],
                };
                for p in ps {
                    check_all(gpu, &x, 0, Some(p), &f, ws)
                        .map_err(|e| Failed::from(format!("{p:?}: {e}")))?;
                }
            }
        }
        Ok(())
    }
    let ws = &mut DeviceWorkspace::new();
    run(gpu, &[0u32, 1, u32::MAX - 1, u32::MAX], ws)?;
    run(gpu, &[i32::MIN, i32::MIN + 1, -1, 0, i32::MAX], ws)?;
    run(gpu, &[0u64, 1, u64::MAX - 1, u64::MAX], ws)?;
    run(gpu, &[i64::MIN, -1, 0, i64::MAX - 1, i64::MAX], ws)
}

/// Too short an output, flags or count: an error before any launch, the output untouched;
/// n = 0 writes a count of 0.
fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    let x = ok(DeviceVec::from_slice(gpu, &[1u32, 2, 3, 4]))?;
    let mut short = ok(DeviceVec::from_slice(gpu, &[9u32, 9, 9]))?;
    let mut count = ok(gpu.upload(&[77u64]))?;
    let is_length_error = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::LengthMismatch { .. }));
    let p = Predicate::greater(1u32);
    if !is_length_error(device::select_if(gpu, &x, p, &mut short, &mut count, ws)) {
        return Err("select_if into a short output: no length error".into());
    }
    if !is_length_error(device::partition_if(gpu, &x, p, &mut short, &mut count, ws)) {
        return Err("partition_if into a short output: no length error".into());
    }
    let few_flags = ok(gpu.upload(&[1u8, 0, 1]))?;
    let mut out = ok(DeviceVec::from_slice(gpu, &[9u32; 4]))?;
    if !is_length_error(device::select_flagged(
        gpu, &x, &few_flags, &mut out, &mut count, ws,
    )) {
        return Err("select_flagged with 3 flags for 4 items: no length error".into());
    }
    let mut no_count = ok(gpu.alloc_zeroed::<u64>(0))?;
    if !is_length_error(device::unique(gpu, &x, &mut out, &mut no_count, ws)) {
        return Err("unique with an empty count: no length error".into());
    }
    check_eq("output untouched", ok(out.to_vec(gpu))?, vec![9u32; 4])?;
    check_eq("short output untouched", ok(short.to_vec(gpu))?, vec![9u32; 3])?;
    check_eq("count untouched", ok(gpu.download(&count))?, vec![77])?;
    let empty = ok(DeviceVec::<u32>::from_slice(gpu, &[]))?;
    ok(device::select_if(gpu, &empty, p, &mut out, &mut count, ws))?;
    check_eq("n = 0: count", ok(gpu.download(&count))?, vec![0])?;
    check_eq(
        "n = 0 partition",
        ok(device::partition_if_slice::<f32>(gpu, &[], Predicate::not_nan()))?,
        (vec![], 0),
    )?;
    // The host helpers of the flagged forms.
    let (items, flags) = ([1u32, 2, 3, 4], [1u8, 0, 1, 0]);
    check_eq(
        "select_flagged_slice",
        ok(device::select_flagged_slice(gpu, &items, &flags))?,
        vec![1, 3],
    )?;
    check_eq(
        "partition_flagged_slice",
        ok(device::partition_flagged_slice(gpu, &items, &flags))?,
        (vec![1, 3, 2, 4], 2),
    )?;
    if !matches!(
        device::select_flagged_slice(gpu, &items, &flags[..3]),
        Err(Error::LengthMismatch { .. })
    ) {
        return Err("select_flagged_slice with 3 flags for 4 items: no length error".into());
    }
    Ok(())
}

/// 2^31 + 5 u32 items: select_if, select_flagged, unique, partition_if and partition_flagged,
/// whose counts and outputs need more than 31 bits of index.
fn past_2_pow_31(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1usize << 31) + 5;
    // Runs of two: unique keeps every other item; x % 3 == 0 keeps a third of the runs.
    let x: Vec<u32> = (0..n).map(|i| (i / 2) as u32).collect();
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let ws = &mut DeviceWorkspace::new();
    let mut d_out = ok(DeviceVec::<u32>::zeroed(gpu, n))?;
    let mut count = ok(gpu.alloc_zeroed::<u64>(1))?;

    ok(device::unique(gpu, &d_x, &mut d_out, &mut count, ws))?;
    let runs = n.div_ceil(2);
    check_eq(
        "unique past 2^31: count",
        ok(gpu.download(&count))?[0] as usize,
        runs,
    )?;
    let out = ok(d_out.to_vec(gpu))?;
    if let Some(i) = (0..runs).find(|&i| out[i] != i as u32) {
        return Err(format!("unique past 2^31: index {i}: found {}, expected {i}", out[i]).into());
    }

    let p = Predicate::greater_equal((1u32 << 30) - 3);
    ok(device::select_if(gpu, &d_x, p, &mut d_out, &mut count, ws))?;
    let first = x.iter().position(|&v| p.keep(v)).unwrap();
    check_eq(
        "select_if past 2^31: count",
        ok(gpu.download(&count))?[0] as usize,
        n - first,
    )?;
    let out = ok(d_out.to_vec(gpu))?;
    if let Some(i) = (0..n - first).find(|&i| out[i] != x[first + i]) {
        return Err(format!("select_if past 2^31: index {i}: found {}", out[i]).into());
    }
    drop(out);

    let f: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
    let d_f = ok(gpu.upload(&f))?;
    ok(device::partition_flagged(
        gpu, &d_x, &d_f, &mut d_out, &mut count, ws,
    ))?;
    let (expected, kept) = reference::partition(&x, |i, _| f[i] != 0);
    check_eq(
        "partition past 2^31: count",
        ok(gpu.download(&count))?[0] as usize,
        kept,
    )?;
    let out = ok(d_out.to_vec(gpu))?;
    if let Some(i) = (0..n).find(|&i| out[i] != expected[i]) {
        return Err(format!(
            "partition past 2^31: index {i}: found {}, expected {}",
            out[i], expected[i]
        )
        .into());
    }
    drop((out, expected));

    ok(device::select_flagged(
        gpu, &d_x, &d_f, &mut d_out, &mut count, ws,
    ))?;
    check_eq(
        "select_flagged past 2^31: count",
        ok(gpu.download(&count))?[0] as usize,
        n.div_ceil(3),
    )?;
    let out = ok(d_out.to_vec(gpu))?;
    if let Some(i) = (0..n.div_ceil(3)).find(|&i| out[i] != x[3 * i]) {
        return Err(format!(
            "select_flagged past 2^31: index {i}: found {}, expected {}",
            out[i],
            x[3 * i]
        )
        .into());
    }
    drop(out);

    // Kept: the suffix from `first`; rejected: the prefix before it, in order.
    ok(device::partition_if(gpu, &d_x, p, &mut d_out, &mut count, ws))?;
    check_eq(
        "partition_if past 2^31: count",
        ok(gpu.download(&count))?[0] as usize,
        n - first,
    )?;
    let out = ok(d_out.to_vec(gpu))?;
    let expected = |i: usize| {
        if i < n - first {
            x[first + i]
        } else {
            x[i - (n - first)]
        }
    };
    if let Some(i) = (0..n).find(|&i| out[i] != expected(i)) {
        return Err(format!(
            "partition_if past 2^31: index {i}: found {}, expected {}",
            out[i],
            expected(i)
        )
        .into());
    }
    Ok(())
}

/// The parameters of the probe kernel `probe_select_odd_bit_count_u32` (kernels
/// `kernels::select_probes`), as a project's host code declares its own kernel's.
#[derive(Clone, Copy)]
#[repr(C)]
struct OddBitCountProbe {
    input: u64,
    output: u64,
    num_selected: u64,
    n: usize,
    status: LookBackStatus,
    partition: u32,
}

/// Items a thread of the probe kernel.
const PROBE_ITEMS: usize = 8;

/// `select_tile` with a predicate of the test's own (an odd number of set bits) from a kernel
/// outside the library, its status from `DeviceWorkspace::look_back_status` of a workspace the
/// library's calls use in between (epochs and the tile counter shared): select and partition
/// (the rejected items in reverse input order: the library's second pass is not run), blocks of
/// 1 to 32 warps, lengths around the tile edges and one of 2^22 + 3.
fn own_kernel_own_predicate(gpu: &Gpu) -> Result<(), Failed> {
    let module = ok(gpu.module("gpu-primitives-tests", gpu_primitives_tests::PTX_VARIANTS))?;
    let kernel = ok(module.kernel::<OddBitCountProbe>("probe_select_odd_bit_count_u32"))?;
    let ws = &mut DeviceWorkspace::new();
    let mut r = rng(31);
    let blocks: &[u32] = if under_sanitizers() {
        &[32, 256]
    } else {
        &[32, 96, 256, 512, 1024]
    };
    for &block in blocks {
        let tile = block as usize * PROBE_ITEMS;
        let mut lengths = tile_edge_lengths(tile, &mut r).to_vec();
        if !under_sanitizers() && block == 256 {
            lengths.push((1 << 22) + 3);
        }
        for n in lengths {
            let x: Vec<u32> = (0..n).map(|_| r.random()).collect();
            let d_x = ok(gpu.upload(&x))?;
            for partition in [false, true] {
                let what = format!("block {block}, n {n}, partition {partition}");
                let mut d_out = ok(gpu.alloc_zeroed::<u32>(n))?;
                let count = ok(gpu.alloc_zeroed::<u64>(1))?;
                // A library call on the same workspace before: the probe's status must come
                // after its epoch and tiles.
                let mut before = ok(gpu.alloc_zeroed::<u64>(1))?;
                ok(device::select_if(
                    gpu,
                    &d_x,
                    Predicate::less(1 << 31),
                    &mut d_out,
                    &mut before,
                    ws,
                ))?;
                let tiles = n.div_ceil(tile);
                // Held until the launch is queued: its drop records the workspace's use.
                let ticket = ok(ws.look_back_status(gpu, tiles))?;
                let params = OddBitCountProbe {
                    input: d_x.as_device_ptr().as_raw(),
                    output: d_out.as_device_ptr().as_raw(),
                    num_selected: count.as_device_ptr().as_raw(),
                    n,
                    status: ticket.status(),
                    partition: partition as u32,
                };
                let config = LaunchConfig::new(tiles as u32, block)
                    .with_shared_mem(select_shared_bytes(tile as u32, 4));
                // SAFETY: the kernel's contract: `input` holds n items (an allocation: 16-byte
                // aligned), `output` room for n, `num_selected` one u64; one block per tile of
                // whole warps, select_shared_bytes of dynamic shared memory; a fresh status.
                ok(unsafe { gpu.stream().launch(&kernel, config, &params) })?;
                drop(ticket);
                let keep = |v: &u32| v.count_ones() % 2 == 1;
                let mut expected: Vec<u32> = x.iter().copied().filter(keep).collect();
                let kept = expected.len();
                if partition {
                    expected.extend(x.iter().rev().copied().filter(|v| !keep(v)));
                }
                check_eq(
                    &format!("{what}: count"),
                    ok(gpu.download(&count))?[0] as usize,
                    kept,
                )?;
                let out = ok(gpu.download(&d_out))?;
                check_slices(&what, &out[..expected.len()], &expected, |_| false)?;
            }
        }
    }
    Ok(())
}
