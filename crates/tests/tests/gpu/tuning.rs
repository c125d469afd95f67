//! A call's own tuning overrides (`CallOn::with_tuning`): they reach the call's launch shape
//! (its workspace need follows them), win over the process default field by field, are checked,
//! and leave the results exact.

use crate::support::{GpuTest, check_eq, check_slices, ok, rng};
use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, ScanKind, SortOptions, Sum, TempStorage};
use gpu_primitives::{CallOn, Error, Gpu, TuningOverrides, WithTuning, reference};
use libtest_mimic::Failed;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "tuning::per_call_overrides_of_scan_and_reduce_shapes",
        per_call_overrides,
    ),
    (
        "tuning::slice_helpers_on_a_tuned_call_on_another_stream",
        slice_helpers_on_a_tuned_call,
    ),
];

/// Overrides of the scan's look-back delay and the reduce's blocks a multiprocessor.
fn overrides(delay_ns: u32, blocks_per_sm: u32) -> TuningOverrides {
    let mut tuning = TuningOverrides::default();
    tuning.scan_look_back_delay_ns = Some(delay_ns);
    tuning.reduce_blocks_per_sm = Some(blocks_per_sm);
    tuning
}

/// The inclusive scan and the reduce of `x` on `call` (the output allocated and read back on
/// its stream) against the CPU's.
fn scan_and_reduce(what: &str, call: CallOn<'_>, x: &[u32], ws: &mut DeviceWorkspace) -> Result<(), Failed> {
    let d_x = ok(DeviceVec::from_slice(call.gpu(), x))?;
    let mut d_y = ok(call.stream().alloc_zeroed::<u32>(x.len()))?;
    ok(device::inclusive_scan::<u32, Sum>(call, &d_x, &mut d_y, ws))?;
    check_slices(
        &format!("{what}: inclusive scan"),
        &ok(call.stream().download(&d_y))?,
        &reference::scan::<u32, Sum>(x, ScanKind::Inclusive),
        |_| false,
    )?;
    let total = ok(device::reduce::<u32, Sum>(call, &d_x, ws))?;
    check_eq(
        &format!("{what}: reduce"),
        total,
        reference::reduce::<u32, Sum>(x),
    )
}

/// Scans and reduces of many tiles and blocks (one launch of the reduce, and two past 2^22
/// items) with per-call overrides of their launch shapes (no look-back delay and one block a
/// multiprocessor; the longest delay and 32 blocks), on the GPU's stream and on another: exact.
/// The reduce's workspace need follows the call's blocks a multiprocessor; a call's unset field
/// keeps the process default's; a value outside its range is refused.
fn per_call_overrides(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(68);
    let stream = ok(gpu.create_stream())?;
    let mut ws = DeviceWorkspace::new();
    for n in [(3 << 20) + 17, (1 << 22) + 4099] {
        let x: Vec<u32> = (0..n).map(|_| r.random()).collect();
        for (delay_ns, blocks_per_sm) in [(0, 1), (4000, 32)] {
            let tuning = overrides(delay_ns, blocks_per_sm);
            let what = format!("n={n} delay={delay_ns} ns blocks/SM={blocks_per_sm}");
            scan_and_reduce(&what, ok(gpu.with_tuning(tuning))?, &x, &mut ws)?;
            let on = ok(ok(gpu.on(&stream))?.with_tuning(tuning))?;
            scan_and_reduce(&format!("{what}, another stream"), on, &x, &mut ws)?;
        }
        // And without overrides of its own: the process default's (or the tuned) shapes.
        scan_and_reduce(&format!("n={n}, untuned"), gpu.into(), &x, &mut ws)?;
    }
    // 3 * 2^20 u32 want 768 first-pass blocks (of 4096 items): one a multiprocessor takes fewer than 32 do.
    let n = 3 << 20;
    let one = TempStorage::reduce::<u32>(ok(gpu.with_tuning(overrides(0, 1)))?, n);
    let many = TempStorage::reduce::<u32>(ok(gpu.with_tuning(overrides(0, 32)))?, n);
    if one.bytes() >= many.bytes() {
        return Err(format!(
            "reduce workspace: {} bytes at 1 block/SM, {} at 32: the call's override not taken",
            one.bytes(),
            many.bytes()
        )
        .into());
    }
    // Field by field: the call's fields set, the others the process default's.
    let default = CallOn::from(gpu).tuning();
    let call = ok(gpu.with_tuning(overrides(0, 1)))?.tuning();
    check_eq("the call's delay", call.scan_look_back_delay_ns, Some(0))?;
    check_eq("the call's blocks/SM", call.reduce_blocks_per_sm, Some(1))?;
    let mut rest = call;
    rest.scan_look_back_delay_ns = default.scan_look_back_delay_ns;
    rest.reduce_blocks_per_sm = default.reduce_blocks_per_sm;
    check_eq("the fields the call leaves", rest, default)?;
    // A later `with_tuning` writes over an earlier one where it sets a field.
    let mut later = TuningOverrides::default();
    later.reduce_blocks_per_sm = Some(2);
    let both = ok(ok(gpu.with_tuning(overrides(0, 1)))?.with_tuning(later))?.tuning();
    check_eq(
        "two with_tuning",
        (both.scan_look_back_delay_ns, both.reduce_blocks_per_sm),
        (Some(0), Some(2)),
    )?;
    match gpu.with_tuning(overrides(0, 0)) {
        Err(Error::InvalidArgument(message)) if message.contains("reduce_blocks_per_sm") => Ok(()),
        Err(other) => Err(format!("0 blocks/SM: {other}").into()),
        Ok(_) => Err("0 blocks/SM accepted".into()),
    }
}

/// The host-slice helpers on a tuned call on another stream (their copies, clears and reads
/// queued there, the call's overrides passed on) against the CPU's, and against the same
/// helpers on `&gpu`: a reduce and a scan of many tiles, a sort, a unique and a run-length
/// encoding.
fn slice_helpers_on_a_tuned_call(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(6802);
    let stream = ok(gpu.create_stream())?;
    let n = (1 << 22) + 4099;
    let x: Vec<u32> = (0..n).map(|_| r.random_range(0..1000)).collect();
    let runs: Vec<u32> = (0..n).map(|i| (i / 7) as u32).collect();
    for tuning in [overrides(0, 1), overrides(4000, 32)] {
        let on = || ok(ok(gpu.on(&stream))?.with_tuning(tuning));
        let what = format!("delay={:?} ns", tuning.scan_look_back_delay_ns);
        check_eq(
            &format!("{what}: reduce_slice"),
            ok(device::reduce_slice::<u32, Sum>(on()?, &x))?,
            reference::reduce::<u32, Sum>(&x),
        )?;
        let scanned = ok(device::scan_slice::<u32, Sum>(on()?, &x, ScanKind::Exclusive))?;
        check_slices(
            &format!("{what}: scan_slice"),
            &scanned,
            &reference::scan::<u32, Sum>(&x, ScanKind::Exclusive),
            |_| false,
        )?;
        check_slices(
            &format!("{what}: scan_slice on &gpu"),
            &ok(device::scan_slice::<u32, Sum>(gpu, &x, ScanKind::Exclusive))?,
            &scanned,
            |_| false,
        )?;
        let options = SortOptions::default();
        check_slices(
            &format!("{what}: sort_keys_slice"),
            &ok(device::sort_keys_slice(on()?, &x, options))?,
            &reference::sort::sort_keys(&x, options),
            |_| false,
        )?;
        check_slices(
            &format!("{what}: unique_slice"),
            &ok(device::unique_slice(on()?, &runs))?,
            &reference::unique(&runs),
            |_| false,
        )?;
        let (values, counts) = ok(device::run_length_encode_slice(on()?, &runs))?;
        let (expected_values, expected_counts) = reference::run_length_encode(&runs);
        check_slices(
            &format!("{what}: run_length_encode_slice values"),
            &values,
            &expected_values,
            |_| false,
        )?;
        check_slices(
            &format!("{what}: run_length_encode_slice counts"),
            &counts,
            &expected_counts,
            |_| false,
        )?;
    }
    Ok(())
}
