//! The device layer, one primitive at a time, through the kernel crate's probe kernels: shuffles for
//! all six types and four modes, votes, atomics, compare-and-swap.

use crate::support::{GpuTest, check_eq, check_slices, ok, rng};
use gpu_primitives::{DeviceBuffer, Gpu, LaunchConfig, WARP_SIZE};
use gpu_primitives_runtime::DeviceCopy;
use libtest_mimic::Failed;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("device_layer::shuffles_all_types_modes_widths", shuffles),
    ("device_layer::votes_ballot_any_all_and_lane_id", votes),
    ("device_layer::integer_atomics_add_min_max", integer_atomics),
    ("device_layer::float_atomic_add", float_atomics),
    ("device_layer::cas_tickets_are_a_permutation", cas_tickets),
];

/// Where lane `lane` reads from under PTX `shfl.sync` (mode 0 down, 1 up, 2 bfly, 3 idx) with
/// operand `b` and segments of `width` lanes.
fn shuffle_source(mode: u32, lane: u32, b: u32, width: u32) -> u32 {
    let min_lane = lane & !(width - 1);
    let max_lane = min_lane + width - 1;
    match mode {
        0 => {
            if lane + b > max_lane {
                lane
            } else {
                lane + b
            }
        }
        1 => {
            if lane < min_lane + b {
                lane
            } else {
                lane - b
            }
        }
        2 => {
            if (lane ^ b) > max_lane {
                lane
            } else {
                lane ^ b
            }
        }
        _ => min_lane | (b & (width - 1)),
    }
}

trait ProbeValue: DeviceCopy + Default + Clone + PartialEq + std::fmt::Debug + probe_value::FromIndex {}
mod probe_value {
    /// A distinct value per index, for any probe type.
    pub trait FromIndex {
        fn from_index(i: usize) -> Self;
    }
    macro_rules! from_index { ($($t:ty),*) => {$(impl FromIndex for $t { fn from_index(i: usize) -> Self { (i as $t) * (3 as $t) + (1 as $t) } })*}; }
    from_index!(f32, f64, i32, u32, i64, u64);
}
impl<T: DeviceCopy + Default + Clone + PartialEq + std::fmt::Debug + probe_value::FromIndex> ProbeValue
    for T
{
}

fn shuffle_type<T: ProbeValue>(gpu: &Gpu, kernel: &str) -> Result<(), Failed> {
    for block in [32u32, 64, 65, 7] {
        let grid = 2u32;
        let n = (grid * block) as usize;
        // 64-bit types get values whose halves differ, so a lost half shows.
        let input: Vec<T> = (0..n).map(|i| T::from_index(i + (1 << 20))).collect();
        let d_in = ok(gpu.upload(&input))?;
        let d_out: DeviceBuffer<T> = ok(gpu.upload(&vec![T::default(); n]))?;
        for mode in 0..4u32 {
            for width in [32u32, 16, 8, 2] {
                for b in [1u32, 3, width / 2, width - 1] {
                    // SAFETY: probe_shuffle_<T> takes (input, out, mode, b, width); both buffers
                    // hold grid * block elements.
                    unsafe {
                        ok(gpu.launch(
                            kernel,
                            LaunchConfig::new(grid, block),
                            (d_in.as_device_ptr(), d_out.as_device_ptr(), mode, b, width),
                        ))?
                    };
                    let out = ok(gpu.download(&d_out))?;
                    // Source thread (within the block) of the thread at global index i.
                    let source = |i: usize| {
                        let t = (i as u32) % block;
                        let lane = t % WARP_SIZE;
                        t - lane + shuffle_source(mode, lane, b, width)
                    };
                    // A lane whose source lies past the block's last thread reads an undefined value.
                    let undefined = |i: usize| source(i) >= block;
                    let expected: Vec<T> = (0..n)
                        .map(|i| {
                            let block_start = i - (i as u32 % block) as usize;
                            if undefined(i) {
                                T::default()
                            } else {
                                input[block_start + source(i) as usize]
                            }
                        })
                        .collect();
                    check_slices(
                        &format!("{kernel} mode={mode} width={width} b={b} block={block}"),
                        &out,
                        &expected,
                        undefined,
                    )?;
                }
            }
        }
    }
    Ok(())
}

fn shuffles(gpu: &Gpu) -> Result<(), Failed> {
    shuffle_type::<f32>(gpu, "probe_shuffle_f32")?;
    shuffle_type::<i32>(gpu, "probe_shuffle_i32")?;
    shuffle_type::<u32>(gpu, "probe_shuffle_u32")?;
    shuffle_type::<f64>(gpu, "probe_shuffle_f64")?;
    shuffle_type::<i64>(gpu, "probe_shuffle_i64")?;
    shuffle_type::<u64>(gpu, "probe_shuffle_u64")
}

fn votes(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(26);
    for block in [32u32, 64, 40, 1] {
        for density in [0.0, 0.5, 1.0] {
            let n = block as usize * 3;
            let pred: Vec<u32> = (0..n).map(|_| r.random_bool(density) as u32).collect();
            let d_pred = ok(gpu.upload(&pred))?;
            let d_out = ok(gpu.alloc_zeroed::<u32>(3 * n))?;
            let d_lanes = ok(gpu.alloc_zeroed::<u32>(n))?;
            // SAFETY: probe_vote takes (pred, out, lanes) with n, 3n and n elements.
            unsafe {
                ok(gpu.launch(
                    "probe_vote",
                    LaunchConfig::new(3, block),
                    (
                        d_pred.as_device_ptr(),
                        d_out.as_device_ptr(),
                        d_lanes.as_device_ptr(),
                    ),
                ))?
            };
            let out = ok(gpu.download(&d_out))?;
            let lanes = ok(gpu.download(&d_lanes))?;
            let mut expected = vec![0u32; 3 * n];
            let mut expected_lanes = vec![0u32; n];
            for i in 0..n {
                let t = i % block as usize;
                let warp_start = i - t % WARP_SIZE as usize;
                let warp_end = (warp_start + WARP_SIZE as usize).min(i - t + block as usize);
                let ballot = (warp_start..warp_end).fold(0u32, |m, j| m | (pred[j] << (j - warp_start)));
                expected[3 * i] = ballot;
                expected[3 * i + 1] = (ballot != 0) as u32;
                expected[3 * i + 2] = (ballot.count_ones() as usize == warp_end - warp_start) as u32;
                expected_lanes[i] = (t % WARP_SIZE as usize) as u32;
            }
            check_slices(
                &format!("votes block={block} density={density}"),
                &out,
                &expected,
                |_| false,
            )?;
            check_slices(&format!("lane_id block={block}"), &lanes, &expected_lanes, |_| {
                false
            })?;
        }
    }
    Ok(())
}

fn atomics_of<T>(gpu: &Gpu, kernel: &str, values: Vec<T>, add: fn(T, T) -> T) -> Result<(), Failed>
where
    T: DeviceCopy + Default + Copy + PartialEq + Ord + std::fmt::Debug + Bounded,
{
    let n = values.len();
    let d_in = ok(gpu.upload(&values))?;
    let d_acc = ok(gpu.upload(&[T::default(), T::MAX, T::MIN]))?;
    // SAFETY: probe_atomics_<T> takes (input, acc, n): n elements, three accumulators.
    unsafe {
        ok(gpu.launch(
            kernel,
            LaunchConfig::for_elements(n, 128, 1 << 16),
            (d_in.as_device_ptr(), d_acc.as_device_ptr(), n),
        ))?
    };
    let acc = ok(gpu.download(&d_acc))?;
    let expected = [
        values.iter().copied().fold(T::default(), add),
        *values.iter().min().unwrap(),
        *values.iter().max().unwrap(),
    ];
    check_slices(kernel, &acc, &expected, |_| false)
}

trait Bounded {
    const MIN: Self;
    const MAX: Self;
}
macro_rules! bounded { ($($t:ty),*) => {$(impl Bounded for $t { const MIN: Self = <$t>::MIN; const MAX: Self = <$t>::MAX; })*}; }
bounded!(u32, i32, u64, i64);

fn integer_atomics(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(3);
    let n = 10_007;
    atomics_of::<u32>(
        gpu,
        "probe_atomics_u32",
        (0..n).map(|_| r.random()).collect(),
        u32::wrapping_add,
    )?;
    atomics_of::<i32>(
        gpu,
        "probe_atomics_i32",
        (0..n).map(|_| r.random()).collect(),
        i32::wrapping_add,
    )?;
    atomics_of::<u64>(
        gpu,
        "probe_atomics_u64",
        (0..n).map(|_| r.random()).collect(),
        u64::wrapping_add,
    )?;
    atomics_of::<i64>(
        gpu,
        "probe_atomics_i64",
        (0..n).map(|_| r.random()).collect(),
        i64::wrapping_add,
    )
}

fn float_atomics(gpu: &Gpu) -> Result<(), Failed> {
    let x = crate::support::grid_values(50_000, 4);
    let d_in = ok(gpu.upload(&x))?;
    let d_acc = ok(gpu.alloc_zeroed::<f32>(1))?;
    let d_acc64 = ok(gpu.alloc_zeroed::<f64>(1))?;
    // SAFETY: probe_atomic_add_float takes (input, acc, acc64, n).
    unsafe {
        ok(gpu.launch(
            "probe_atomic_add_float",
            LaunchConfig::for_elements(x.len(), 256, 1 << 16),
            (
                d_in.as_device_ptr(),
                d_acc.as_device_ptr(),
                d_acc64.as_device_ptr(),
                x.len(),
            ),
        ))?
    };
    let expected = gpu_primitives::reference::sum(&x);
    check_eq("f32 atomic add", ok(gpu.download(&d_acc))?[0] as f64, expected)?;
    check_eq("f64 atomic add", ok(gpu.download(&d_acc64))?[0], expected)
}

fn cas_tickets(gpu: &Gpu) -> Result<(), Failed> {
    let n = 5_000usize;
    let d_counter = ok(gpu.alloc_zeroed::<u32>(1))?;
    let d_counter64 = ok(gpu.alloc_zeroed::<u64>(1))?;
    let d_tickets = ok(gpu.alloc_zeroed::<u32>(n))?;
    let d_tickets64 = ok(gpu.alloc_zeroed::<u64>(n))?;
    let d_flags = ok(gpu.alloc_zeroed::<u32>(n))?;
    // SAFETY: probe_cas takes (counter, counter64, tickets, tickets64, flags, n) as allocated.
    unsafe {
        ok(gpu.launch(
            "probe_cas",
            LaunchConfig::for_elements(n, 128, 1 << 16),
            (
                d_counter.as_device_ptr(),
                d_counter64.as_device_ptr(),
                d_tickets.as_device_ptr(),
                d_tickets64.as_device_ptr(),
                d_flags.as_device_ptr(),
                n,
            ),
        ))?
    };
    let mut tickets = ok(gpu.download(&d_tickets))?;
    tickets.sort_unstable();
    check_slices(
        "u32 tickets",
        &tickets,
        &(0..n as u32).collect::<Vec<_>>(),
        |_| false,
    )?;
    let mut tickets64 = ok(gpu.download(&d_tickets64))?;
    tickets64.sort_unstable();
    check_slices(
        "u64 tickets",
        &tickets64,
        &(0..n as u64).collect::<Vec<_>>(),
        |_| false,
    )?;
    check_slices("flags", &ok(gpu.download(&d_flags))?, &vec![1u32; n], |_| false)?;
    check_eq("counter", ok(gpu.download(&d_counter))?[0], n as u32)
}
