//! Device-wide reduce and scan: every element type x operator x entry point against CPU
//! references, at tile and block boundaries; determinism; in-place scans; bad input; and one
//! reduce and scan past 2^31 elements.

use crate::support::{GpuTest, check_eq, check_slices, grid_values, ok, rng};
use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Element, Max, Min, Operator, ScanKind, Sum};
use gpu_primitives::{Error, Gpu, reference};
use half::{bf16, f16};
use libtest_mimic::Failed;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("device::reduce_every_type_and_operator", reduce_all_types),
    ("device::scan_every_type_operator_and_kind", scan_all_types),
    ("device::scan_in_place_f32_i64", scan_in_place),
    ("device::float_reduce_is_bitwise_deterministic", deterministic),
    ("device::float_scan_within_error_bound", float_scan_bound),
    (
        "device::last_inclusive_scan_element_equals_reduce",
        scan_end_equals_reduce,
    ),
    ("device::workspace_reused_across_calls_and_sizes", workspace_reuse),
    ("device::bad_input", bad_input),
    ("device::argmin_argmax_every_type_ties_and_nan", argmin_argmax),
    ("device::dot_float_types", dot_products),
    ("device::segmented_reduce_rows_every_type", segmented),
    ("device::out_of_memory_is_an_error", out_of_memory),
    ("device::past_2_pow_31_elements_u32", past_2_pow_31),
];

/// A test type: how to make its inputs (the CPU references are the library's,
/// `gpu_primitives::reference`).
pub trait TestElement: Element {
    fn make(n: usize, salt: u64) -> Vec<Self>;
}

macro_rules! int_element {
    ($($t:ty),*) => {$(
        impl TestElement for $t {
            fn make(n: usize, salt: u64) -> Vec<Self> {
                let mut r = rng(salt);
                (0..n).map(|_| r.random()).collect()
            }
        }
    )*};
}
int_element!(i32, u32, i64, u64);

macro_rules! float_element {
    ($t:ty, $from:expr) => {
        impl TestElement for $t {
            /// Grid values (multiples of 1/4 in [-2, 2]): exact in every type, and every partial
            /// sum of up to 2^21 of them is exact in f32, so any grouping matches the CPU.
            fn make(n: usize, salt: u64) -> Vec<Self> {
                grid_values(n, salt).into_iter().map($from).collect()
            }
        }
    };
}
float_element!(f32, |v| v);
float_element!(f64, |v: f32| v as f64);
float_element!(f16, f16::from_f32);
float_element!(bf16, bf16::from_f32);

const REDUCE_LENGTHS: &[usize] = &[0, 1, 3, 4095, 4096, 4097, 100_003, (1 << 22) + 7];

fn reduce_type_op<T: TestElement, Op: Operator>(gpu: &Gpu, ws: &mut DeviceWorkspace) -> Result<(), Failed> {
    for &n in REDUCE_LENGTHS {
        let x = T::make(n, n as u64 + 11);
        let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
        let found = ok(device::reduce::<T, Op>(gpu, &d_x, ws))?;
        check_eq(
            &format!("reduce {} {} n={n}", T::NAME, Op::NAME),
            found,
            reference::reduce::<T, Op>(&x),
        )?;
    }
    Ok(())
}

fn reduce_type<T: TestElement>(gpu: &Gpu, ws: &mut DeviceWorkspace) -> Result<(), Failed> {
    reduce_type_op::<T, Sum>(gpu, ws)?;
    reduce_type_op::<T, Min>(gpu, ws)?;
    reduce_type_op::<T, Max>(gpu, ws)
}

fn reduce_all_types(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    reduce_type::<f32>(gpu, ws)?;
    reduce_type::<f64>(gpu, ws)?;
    reduce_type::<i32>(gpu, ws)?;
    reduce_type::<u32>(gpu, ws)?;
    reduce_type::<i64>(gpu, ws)?;
    reduce_type::<u64>(gpu, ws)?;
    reduce_type::<f16>(gpu, ws)?;
    reduce_type::<bf16>(gpu, ws)
}

fn scan_type_op<T: TestElement, Op: Operator>(gpu: &Gpu, ws: &mut DeviceWorkspace) -> Result<(), Failed> {
    let tile = (gpu_primitives_abi::tuning::ScanPolicy::SM80.block_threads * T::SCAN_ITEMS) as usize;
    for n in [0, 1, tile - 1, tile, tile + 1, 3 * tile + 5, (1 << 20) + 3] {
        let x = T::make(n, n as u64 + 5);
        let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let mut d_out = ok(gpu.alloc_zeroed::<T::Acc>(n))?;
            match kind {
                ScanKind::Inclusive => ok(device::inclusive_scan::<T, Op>(gpu, &d_x, &mut d_out, ws))?,
                ScanKind::Exclusive => ok(device::exclusive_scan::<T, Op>(gpu, &d_x, &mut d_out, ws))?,
            }
            let found = ok(gpu.download(&d_out))?;
            let what = format!("scan {} {} {kind:?} n={n}", T::NAME, Op::NAME);
            check_slices(&what, &found, &reference::scan::<T, Op>(&x, kind), |_| false)?;
        }
        check_slices("input unchanged", &ok(d_x.to_vec(gpu))?, T::as_raw(&x), |_| false)?;
    }
    Ok(())
}

fn scan_type<T: TestElement>(gpu: &Gpu, ws: &mut DeviceWorkspace) -> Result<(), Failed> {
    scan_type_op::<T, Sum>(gpu, ws)?;
    scan_type_op::<T, Min>(gpu, ws)?;
    scan_type_op::<T, Max>(gpu, ws)
}

fn scan_all_types(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    scan_type::<f32>(gpu, ws)?;
    scan_type::<f64>(gpu, ws)?;
    scan_type::<i32>(gpu, ws)?;
    scan_type::<u32>(gpu, ws)?;
    scan_type::<i64>(gpu, ws)?;
    scan_type::<u64>(gpu, ws)?;
    scan_type::<f16>(gpu, ws)?;
    scan_type::<bf16>(gpu, ws)
}

fn in_place<T: TestElement<Acc = T> + Element<Raw = T> + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    ws: &mut DeviceWorkspace,
) -> Result<(), Failed> {
    for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
        let x = T::make(100_003, 8);
        let mut d_x = ok(DeviceVec::from_slice(gpu, &x))?;
        ok(device::scan_in_place::<T, Sum>(gpu, &mut d_x, kind, ws))?;
        check_slices(
            &format!("in place {} {kind:?}", T::NAME),
            &ok(d_x.to_vec(gpu))?,
            &reference::scan::<T, Sum>(&x, kind),
            |_| false,
        )?;
    }
    Ok(())
}

fn scan_in_place(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    in_place::<f32>(gpu, ws)?;
    in_place::<i64>(gpu, ws)
}

fn random_floats(n: usize) -> Vec<f32> {
    let mut r = rng(1);
    (0..n).map(|_| r.random_range(-1.0f32..1.0) * 1e3).collect()
}

fn deterministic(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1 << 24) + 3;
    let x = random_floats(n);
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let ws = &mut DeviceWorkspace::new();
    let first = ok(device::reduce::<f32, Sum>(gpu, &d_x, ws))?;
    for run in 0..5 {
        let again = ok(device::reduce::<f32, Sum>(gpu, &d_x, ws))?;
        check_eq(&format!("reduce run {run}"), again.to_bits(), first.to_bits())?;
    }
    let exact = gpu_primitives::reference::sum(&x);
    let bound = gpu_primitives::reference::f32_sum_error_bound(n, gpu_primitives::reference::sum_abs(&x));
    check_eq("reduce within bound", (first as f64 - exact).abs() <= bound, true)
}

/// Random floats (not exact in any order): every output within the f32 summation bound of its
/// prefix's exact sum.
fn float_scan_bound(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1 << 22) + 9;
    let x = random_floats(n);
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let mut d_out = ok(gpu.alloc_zeroed::<f32>(n))?;
    ok(device::inclusive_scan::<f32, Sum>(
        gpu,
        &d_x,
        &mut d_out,
        &mut DeviceWorkspace::new(),
    ))?;
    let found = ok(gpu.download(&d_out))?;
    let (mut exact, mut abs) = (0.0f64, 0.0f64);
    for (i, (&v, &f)) in x.iter().zip(&found).enumerate() {
        exact += v as f64;
        abs += (v as f64).abs();
        let bound = gpu_primitives::reference::f32_sum_error_bound(i + 1, abs);
        if (f as f64 - exact).abs() > bound {
            return Err(format!("index {i}: found {f}, expected {exact}, bound {bound}").into());
        }
    }
    Ok(())
}

fn scan_end_equals_reduce(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    for n in [1usize, 2048, 1_000_003] {
        let x = i64::make(n, 77);
        let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
        let total = ok(device::reduce::<i64, Sum>(gpu, &d_x, ws))?;
        let mut d_out = ok(gpu.alloc_zeroed::<i64>(n))?;
        ok(device::inclusive_scan::<i64, Sum>(gpu, &d_x, &mut d_out, ws))?;
        check_eq(
            &format!("n={n}"),
            *ok(gpu.download(&d_out))?.last().unwrap(),
            total,
        )?;
    }
    Ok(())
}

fn workspace_reuse(gpu: &Gpu) -> Result<(), Failed> {
    // Alternate sizes so the status array grows and is reused with stale flags of older epochs.
    let ws = &mut DeviceWorkspace::new();
    for (round, n) in [5000usize, 1 << 20, 300, 1 << 20, 77_777, 1 << 21]
        .into_iter()
        .enumerate()
    {
        let x = u32::make(n, round as u64);
        let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
        let mut d_out = ok(gpu.alloc_zeroed::<u32>(n))?;
        ok(device::inclusive_scan::<u32, Sum>(gpu, &d_x, &mut d_out, ws))?;
        check_slices(
            &format!("round {round} n={n}"),
            &ok(gpu.download(&d_out))?,
            &reference::scan::<u32, Sum>(&x, ScanKind::Inclusive),
            |_| false,
        )?;
        check_eq(
            &format!("round {round} reduce"),
            ok(device::reduce::<u32, Max>(gpu, &d_x, ws))?,
            reference::reduce::<u32, Max>(&x),
        )?;
    }
    Ok(())
}

fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let x = vec![1.0f32; 1000];
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let mut short = ok(gpu.upload(&vec![7.0f32; 999]))?;
    match device::inclusive_scan::<f32, Sum>(gpu, &d_x, &mut short, &mut DeviceWorkspace::new()) {
        Err(Error::LengthMismatch {
            expected: 1000,
            found: 999,
            ..
        }) => {}
        other => return Err(format!("short output gave {other:?}").into()),
    }
    check_slices(
        "short output untouched",
        &ok(gpu.download(&short))?,
        &vec![7.0f32; 999],
        |_| false,
    )?;
    let no_initial = ok(gpu.alloc_zeroed::<f32>(0))?;
    let mut out = ok(gpu.upload(&vec![7.0f32; 1000]))?;
    match device::exclusive_scan_init::<f32, Sum>(
        gpu,
        &d_x,
        &mut out,
        &no_initial,
        &mut DeviceWorkspace::new(),
    ) {
        Err(Error::LengthMismatch {
            expected: 1,
            found: 0,
            ..
        }) => {}
        other => return Err(format!("an empty initial value gave {other:?}").into()),
    }
    check_slices(
        "output untouched by a refused initial value",
        &ok(gpu.download(&out))?,
        &vec![7.0f32; 1000],
        |_| false,
    )?;
    check_eq("empty sum", ok(device::reduce_slice::<f32, Sum>(gpu, &[]))?, 0.0)?;
    check_eq(
        "empty min",
        ok(device::reduce_slice::<i32, Min>(gpu, &[]))?,
        i32::MAX,
    )?;
    check_eq(
        "empty max",
        ok(device::reduce_slice::<f64, Max>(gpu, &[]))?,
        f64::NEG_INFINITY,
    )?;
    check_eq(
        "empty scan",
        ok(device::scan_slice::<u64, Sum>(gpu, &[], ScanKind::Inclusive))?.len(),
        0,
    )?;
    let with_nan = [1.0f32, f32::NAN, 3.0];
    check_eq(
        "max with NaN is NaN",
        ok(device::reduce_slice::<f32, Max>(gpu, &with_nan))?.is_nan(),
        true,
    )?;
    check_eq(
        "sum with inf",
        ok(device::reduce_slice::<f32, Sum>(gpu, &[1.0, f32::INFINITY]))?,
        f32::INFINITY,
    )
}

fn arg_type<T: TestElement>(gpu: &Gpu, ws: &mut DeviceWorkspace) -> Result<(), Failed>
where
    T::Acc: PartialOrd,
{
    // Grid values repeat, so ties are everywhere: the first index must win.
    for &n in &[1usize, 5, 4097, 100_003, (1 << 22) + 7, (1 << 22) + 4096 * 256] {
        let x = T::make(n, n as u64 + 3);
        let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
        let found_min = ok(device::argmin::<T>(gpu, &d_x, ws))?;
        let found_max = ok(device::argmax::<T>(gpu, &d_x, ws))?;
        check_eq(
            &format!("argmin {} n={n}", T::NAME),
            found_min,
            reference::argmin(&x),
        )?;
        check_eq(
            &format!("argmax {} n={n}", T::NAME),
            found_max,
            reference::argmax(&x),
        )?;
    }
    Ok(())
}

fn argmin_argmax(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    arg_type::<f32>(gpu, ws)?;
    arg_type::<f64>(gpu, ws)?;
    arg_type::<i32>(gpu, ws)?;
    arg_type::<u32>(gpu, ws)?;
    arg_type::<i64>(gpu, ws)?;
    arg_type::<u64>(gpu, ws)?;
    arg_type::<f16>(gpu, ws)?;
    arg_type::<bf16>(gpu, ws)?;
    check_eq(
        "argmin of nothing",
        ok(device::argmin::<f32>(
            gpu,
            &ok(DeviceVec::from_slice(gpu, &[] as &[f32]))?,
            ws,
        ))?,
        None,
    )?;
    let mut x = vec![1.0f32; 100_000];
    x[70_000] = f32::NAN;
    x[90_000] = f32::NAN;
    x[5] = -3.0;
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let (v, i) = ok(device::argmin::<f32>(gpu, &d_x, ws))?.unwrap();
    check_eq("argmin with NaN: first NaN", (v.is_nan(), i), (true, 70_000))?;
    let (v, i) = ok(device::argmax::<f32>(gpu, &d_x, ws))?.unwrap();
    check_eq("argmax with NaN: first NaN", (v.is_nan(), i), (true, 70_000))
}

fn dot_type<T: TestElement + device::DotElement>(gpu: &Gpu, ws: &mut DeviceWorkspace) -> Result<(), Failed>
where
    T::Acc: std::ops::Mul<Output = T::Acc>,
{
    for n in [0usize, 1, 4095, 100_003, (1 << 22) + 5, (1 << 23) + 1] {
        let (a, b) = (T::make(n, 1), T::make(n, 2));
        let (d_a, d_b) = (
            ok(DeviceVec::from_slice(gpu, &a))?,
            ok(DeviceVec::from_slice(gpu, &b))?,
        );
        let expected = reference::dot(&a, &b);
        check_eq(
            &format!("dot {} n={n}", T::NAME),
            ok(device::dot::<T>(gpu, &d_a, &d_b, ws))?,
            expected,
        )?;
    }
    Ok(())
}

fn dot_products(gpu: &Gpu) -> Result<(), Failed> {
    let ws = &mut DeviceWorkspace::new();
    dot_type::<f32>(gpu, ws)?;
    dot_type::<f64>(gpu, ws)?;
    dot_type::<f16>(gpu, ws)?;
    dot_type::<bf16>(gpu, ws)?;
    let (a, b) = (
        ok(DeviceVec::from_slice(gpu, &[1.0f32; 10]))?,
        ok(DeviceVec::from_slice(gpu, &[1.0f32; 9]))?,
    );
    match device::dot::<f32>(gpu, &a, &b, ws) {
        Err(Error::LengthMismatch {
            expected: 10,
            found: 9,
            ..
        }) => Ok(()),
        other => Err(format!("mismatched dot gave {other:?}").into()),
    }
}

fn segmented_type_op<T: TestElement, Op: Operator>(gpu: &Gpu) -> Result<(), Failed> {
    // Row lengths that are and are not multiples of a 16-byte vector (unaligned rows).
    for (rows, row_len) in [
        (1usize, 1usize),
        (3, 7),
        (1000, 64),
        (33, 1023),
        (2000, 257),
        (4, 100_003),
    ] {
        let x = T::make(rows * row_len, (rows * 31 + row_len) as u64);
        let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
        let mut d_out = ok(gpu.alloc_zeroed::<T::Acc>(rows))?;
        ok(device::segmented_reduce::<T, Op>(
            gpu,
            &d_x,
            row_len,
            &mut d_out,
            &mut DeviceWorkspace::new(),
        ))?;
        let expected: Vec<T::Acc> = x.chunks(row_len).map(reference::reduce::<T, Op>).collect();
        check_slices(
            &format!("segmented {} {} {rows}x{row_len}", T::NAME, Op::NAME),
            &ok(gpu.download(&d_out))?,
            &expected,
            |_| false,
        )?;
    }
    Ok(())
}

fn segmented_type<T: TestElement>(gpu: &Gpu) -> Result<(), Failed> {
    segmented_type_op::<T, Sum>(gpu)?;
    segmented_type_op::<T, Min>(gpu)?;
    segmented_type_op::<T, Max>(gpu)
}

fn segmented(gpu: &Gpu) -> Result<(), Failed> {
    segmented_type::<f32>(gpu)?;
    segmented_type::<f64>(gpu)?;
    segmented_type::<i32>(gpu)?;
    segmented_type::<u32>(gpu)?;
    segmented_type::<i64>(gpu)?;
    segmented_type::<u64>(gpu)?;
    segmented_type::<f16>(gpu)?;
    segmented_type::<bf16>(gpu)?;
    let d_x = ok(DeviceVec::from_slice(gpu, &[1.0f32; 10]))?;
    let mut short = ok(gpu.alloc_zeroed::<f32>(1))?;
    match device::segmented_reduce::<f32, Sum>(gpu, &d_x, 3, &mut short, &mut DeviceWorkspace::new()) {
        Err(Error::NotWholeRows {
            len: 10, row_len: 3, ..
        }) => {}
        other => return Err(format!("10 elements in rows of 3 gave {other:?}").into()),
    }
    match device::segmented_reduce::<f32, Sum>(gpu, &d_x, 5, &mut short, &mut DeviceWorkspace::new()) {
        Err(Error::LengthMismatch {
            expected: 2,
            found: 1,
            ..
        }) => Ok(()),
        other => Err(format!("short output gave {other:?}").into()),
    }
}

fn out_of_memory(gpu: &Gpu) -> Result<(), Failed> {
    let x = ok(DeviceVec::from_slice(gpu, &[1.0f32, 2.0, 3.0]))?;
    match gpu.alloc_zeroed::<f32>(1 << 40) {
        Err(Error::OutOfMemory { bytes, total, .. }) => {
            check_eq("bytes asked for", bytes, 4usize << 40)?;
            check_eq("total reported", total > 0, true)?;
        }
        other => return Err(format!("a 4 TiB allocation gave {:?}", other.map(|b| b.len())).into()),
    }
    let message = gpu
        .alloc_zeroed::<f32>(1 << 40)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    check_eq(
        "message names the problem",
        message.starts_with("out of device memory allocating 4398046511104 bytes"),
        true,
    )?;
    // The device still works and nothing else changed.
    check_slices("earlier buffer", &ok(x.to_vec(gpu))?, &[1.0f32, 2.0, 3.0], |_| {
        false
    })?;
    check_eq(
        "reduce after OOM",
        ok(device::reduce::<f32, Sum>(gpu, &x, &mut DeviceWorkspace::new()))?,
        6.0,
    )
}

fn past_2_pow_31(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1usize << 31) + 5;
    let x: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let ws = &mut DeviceWorkspace::new();
    let expected = x.iter().fold(0u32, |a, &b| a.wrapping_add(b));
    check_eq(
        "reduce past 2^31",
        ok(device::reduce::<u32, Sum>(gpu, &d_x, ws))?,
        expected,
    )?;
    let mut d_out = ok(gpu.alloc_zeroed::<u32>(n))?;
    ok(device::inclusive_scan::<u32, Sum>(gpu, &d_x, &mut d_out, ws))?;
    let out = ok(gpu.download(&d_out))?;
    let mut acc = 0u32;
    for (i, (&v, &o)) in x.iter().zip(&out).enumerate() {
        acc = acc.wrapping_add(v);
        if o != acc {
            return Err(format!("scan past 2^31: index {i}: found {o}, expected {acc}").into());
        }
    }
    Ok(())
}
