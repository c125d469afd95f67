//! Soundness under misuse and failure (docs/safety.md): the caller's current context left as it
//! was, look-back statuses taken without a launch, a launch that fails in the middle of a call,
//! a workspace shared by two streams, sizes past the address space. Each failed on the code
//! before these guarantees (a wrong scan, a hang, another context current).

use crate::support::{GpuTest, check_eq, check_slices, ok, rng};
use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Element, SortOptions, Sum};
use gpu_primitives::runtime::fault::{self, Fault};
use gpu_primitives::runtime::sys;
use gpu_primitives::{Error, Gpu};
use gpu_primitives_abi::tuning::ScanPolicy;

/// The scan's block, the same on every architecture (the registry's).
const SCAN_BLOCK: u32 = ScanPolicy::SM80.block_threads;
use libtest_mimic::Failed;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("soundness::caller_current_context_is_restored", context_restored),
    (
        "soundness::look_back_status_dropped_without_launch",
        status_without_launch,
    ),
    (
        "soundness::failed_launch_leaves_the_workspace_usable",
        failed_launches,
    ),
    ("soundness::workspace_shared_by_two_streams", two_streams),
    (
        "soundness::sizes_past_the_address_space_are_refused",
        past_address_space,
    ),
    (
        "soundness::status_layouts_of_one_workspace_do_not_alias",
        status_layouts,
    ),
    (
        "soundness::timing_destroys_its_events_on_error_and_panic",
        timing_events,
    ),
    (
        "soundness::foreign_status_past_the_next_call_is_cleared",
        foreign_status_past_the_next_call,
    ),
];

/// Enough u32 for several hundred scan tiles.
const N: usize = 1 << 21;

fn values(n: usize, salt: u64) -> Vec<u32> {
    let mut r = rng(salt);
    (0..n).map(|_| r.random()).collect()
}

fn inclusive_sums(x: &[u32]) -> Vec<u32> {
    x.iter()
        .scan(0u32, |acc, &v| {
            *acc = acc.wrapping_add(v);
            Some(*acc)
        })
        .collect()
}

/// Scan `x` on `on` with `ws` and check it against the CPU.
fn scan_checked<'g>(
    what: &str,
    on: impl Into<gpu_primitives::OnStream<'g>>,
    gpu: &Gpu,
    x: &DeviceVec<u32>,
    expected: &[u32],
    ws: &mut DeviceWorkspace,
) -> Result<(), Failed> {
    let mut out = ok(DeviceVec::<u32>::zeroed(gpu, x.len()))?;
    ok(device::inclusive_scan::<u32, Sum>(on, x, &mut out, ws))?;
    check_slices(what, &ok(out.to_vec(gpu))?, expected, |_| false)
}

fn current_context() -> sys::CUcontext {
    let mut current: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    unsafe { sys::cuCtxGetCurrent(&mut current) };
    current
}

/// A library call made with no context current leaves none current (it pushes the `Gpu`'s
/// context for its own duration and pops it), so a cust program's next allocation does not
/// land in the library's context by accident.
fn context_restored(gpu: &Gpu) -> Result<(), Failed> {
    let x = ok(DeviceVec::from_slice(gpu, &values(4096, 1)))?;
    // SAFETY: no context current on this thread: allowed, and restored below.
    unsafe { sys::cuCtxSetCurrent(std::ptr::null_mut()) };
    let result = device::reduce::<u32, Sum>(gpu, &x, &mut DeviceWorkspace::new());
    let after = current_context();
    ok(gpu.bind())?;
    ok(result)?;
    check_eq("current context after a call", after as usize, 0)
}

/// Look-back statuses taken and dropped without a launch (safe code) leave the workspace's
/// tile counter in step: the next scan is right, and does not hang.
fn status_without_launch(gpu: &Gpu) -> Result<(), Failed> {
    let x = values(N, 2);
    let expected = inclusive_sums(&x);
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let mut ws = DeviceWorkspace::new();
    scan_checked("scan before", gpu, gpu, &d_x, &expected, &mut ws)?;
    for tiles in [1, 1000, 5] {
        let ticket = ok(ws.look_back_status(gpu, tiles))?;
        drop(ticket);
    }
    scan_checked(
        "scan after statuses without launches",
        gpu,
        gpu,
        &d_x,
        &expected,
        &mut ws,
    )
}

/// A call whose n-th launch fails returns the error and leaves the workspace and its input
/// usable: the same call again is right (scan, compaction, radix sort: each takes look-back
/// statuses; the sort takes one a pass, so a failure after its first pass is covered too).
fn failed_launches(gpu: &Gpu) -> Result<(), Failed> {
    let x = values(N, 3);
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let expected_scan = inclusive_sums(&x);
    let mut sorted = x.clone();
    sorted.sort_unstable();
    let mut ws = DeviceWorkspace::new();
    let mut sort_out = ok(DeviceVec::<u32>::zeroed(gpu, N))?;
    let run_sort = |ws: &mut DeviceWorkspace, out: &mut DeviceVec<u32>| {
        device::sort_keys::<u32>(gpu, &d_x, out, SortOptions::ascending(), ws)
    };
    // Count the sort's launches, then fail each in turn.
    fault::reset();
    ok(run_sort(&mut ws, &mut sort_out))?;
    let launches = fault::calls(Fault::Launch);
    for step in 1..=launches {
        fault::reset();
        fault::fail_nth(Fault::Launch, step);
        match run_sort(&mut ws, &mut sort_out) {
            Err(Error::Driver { .. }) => {}
            other => return Err(format!("sort with launch {step} failing: {other:?}").into()),
        }
        fault::reset();
        scan_checked(
            &format!("scan after sort launch {step} failed"),
            gpu,
            gpu,
            &d_x,
            &expected_scan,
            &mut ws,
        )?;
        ok(run_sort(&mut ws, &mut sort_out))?;
        check_slices(
            &format!("sort after launch {step} failed"),
            &ok(sort_out.to_vec(gpu))?,
            &sorted,
            |_| false,
        )?;
    }
    // The scan's own launch failing.
    fault::fail_nth(Fault::Launch, 1);
    let mut out = ok(DeviceVec::<u32>::zeroed(gpu, N))?;
    if device::inclusive_scan::<u32, Sum>(gpu, &d_x, &mut out, &mut ws).is_ok() {
        return Err("a scan whose launch failed returned Ok".into());
    }
    fault::reset();
    scan_checked(
        "scan after its launch failed",
        gpu,
        gpu,
        &d_x,
        &expected_scan,
        &mut ws,
    )?;
    check_slices("input after failed calls", &ok(d_x.to_vec(gpu))?, &x, |_| false)?;
    check_eq("sort launches counted", launches > 1, true)
}

/// One workspace, two streams, calls alternating without the caller ordering them: each call
/// waits for the workspace's previous use, so every result is right.
fn two_streams(gpu: &Gpu) -> Result<(), Failed> {
    let x = values(N, 4);
    let expected = inclusive_sums(&x);
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let streams = [ok(gpu.create_stream())?, ok(gpu.create_stream())?];
    let mut ws = DeviceWorkspace::new();
    let mut outputs = Vec::new();
    for round in 0..16 {
        let stream = &streams[round % 2];
        let mut out = ok(DeviceVec::<u32>::zeroed(gpu, N))?;
        ok(device::inclusive_scan::<u32, Sum>(
            ok(gpu.on(stream))?,
            &d_x,
            &mut out,
            &mut ws,
        ))?;
        outputs.push(out);
    }
    for stream in &streams {
        ok(stream.synchronize())?;
    }
    for (round, out) in outputs.iter().enumerate() {
        check_slices(
            &format!("round {round}"),
            &ok(out.to_vec(gpu))?,
            &expected,
            |_| false,
        )?;
    }
    Ok(())
}

/// A buffer whose size in bytes is past the address space is refused before the driver sees
/// it, and a look-back status for such a number of tiles too.
fn past_address_space(gpu: &Gpu) -> Result<(), Failed> {
    match gpu.alloc_zeroed::<u64>(usize::MAX / 4) {
        Err(Error::InvalidArgument(_)) => {}
        other => return Err(format!("alloc of usize::MAX / 4 u64: {:?}", other.map(|b| b.len())).into()),
    }
    match DeviceWorkspace::new()
        .look_back_status(gpu, usize::MAX / 2)
        .map(|t| t.status())
    {
        Err(Error::InvalidArgument(_)) => Ok(()),
        other => Err(format!("status of usize::MAX / 2 tiles: {other:?}").into()),
    }
}

/// A 4-byte scan then an 8-byte scan on one workspace. The first leaves every tile's status
/// word holding the value 10 in its low half, which is where the 8-byte scan's layout keeps the
/// flag: 10 is the flag of an inclusive prefix (state 2) in epoch 2, the second launch's. Read
/// from the same slots, a stale word passed for a current status and the second scan took a
/// garbage prefix (found by the soak, with the segmented scans' segment numbers too); each
/// layout has slots of its own now.
fn status_layouts(gpu: &Gpu) -> Result<(), Failed> {
    const INCLUSIVE_IN_EPOCH_2: u32 = 2 << 2 | 2;
    let mut ws = DeviceWorkspace::new();
    let tile32 = (SCAN_BLOCK * <u32 as Element>::SCAN_ITEMS) as usize;
    let mut x = vec![0u32; 1024 * tile32];
    x[0] = INCLUSIVE_IN_EPOCH_2;
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    scan_checked("4-byte scan", gpu, gpu, &d_x, &inclusive_sums(&x), &mut ws)?;
    let tile64 = (SCAN_BLOCK * <u64 as Element>::SCAN_ITEMS) as usize;
    let n = 512 * tile64;
    let d_y = ok(DeviceVec::from_slice(gpu, &vec![1u64; n]))?;
    let mut out = ok(DeviceVec::<u64>::zeroed(gpu, n))?;
    ok(device::inclusive_scan::<u64, Sum>(gpu, &d_y, &mut out, &mut ws))?;
    let expected: Vec<u64> = (1..=n as u64).collect();
    check_slices(
        "8-byte scan after a 4-byte one",
        &ok(out.to_vec(gpu))?,
        &expected,
        |_| false,
    )
}

/// `Stream::time` destroys the two events it makes on every way out of the timed work: a
/// result, an error, a panic (the code before issue 65 created raw events and leaked both when
/// the work returned an error or panicked).
fn timing_events(gpu: &Gpu) -> Result<(), Failed> {
    let stream = gpu.stream();
    let before = fault::events_alive();
    let x = ok(gpu.upload(&[1u32, 2, 3]))?;
    let (sum, _) = ok(stream.time(|| gpu.download(&x).map(|v| v.iter().sum::<u32>())))?;
    check_eq("the timed work's value", sum, 6)?;
    let failed = stream.time(|| -> gpu_primitives::Result<()> {
        Err(Error::InvalidArgument("the timed work failed".into()))
    });
    if !matches!(failed, Err(Error::InvalidArgument(_))) {
        return Err(format!("the timed work's error was not returned: {failed:?}").into());
    }
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = stream.time(|| -> gpu_primitives::Result<()> { panic!("the timed work panicked") });
    }));
    if panicked.is_ok() {
        return Err("the timed work's panic did not reach the caller".into());
    }
    let alive = fault::events_alive() - before;
    check_eq("events left alive by three timings", alive, 0)
}

/// A caller's kernel may leave any bits in its ticket's slots ([`DeviceWorkspace::look_back_status`]),
/// also past the tiles of the library's next call: here each slot says "inclusive prefix of
/// 2^40" in the epoch of the library's second call after it. That call, a longer one, must not
/// read them as its own tiles' statuses. The code before cleared only the first call's slots:
/// the second call's tiles that looked back before their predecessors published took the
/// caller's prefix (2^40 in the sums; in the compaction, an output offset).
fn foreign_status_past_the_next_call(gpu: &Gpu) -> Result<(), Failed> {
    const TILES: usize = 4096;
    let tile64 = (SCAN_BLOCK * <u64 as Element>::SCAN_ITEMS) as usize;
    let mut ws = DeviceWorkspace::new();
    let ticket = ok(ws.look_back_status(gpu, TILES))?;
    let status = ticket.status();
    let foreign_prefix = u64::from((status.epoch + 2) << 2 | 2);
    let slots: Vec<u64> = (0..TILES).flat_map(|_| [foreign_prefix, 1 << 40]).collect();
    // SAFETY: the ticket's slots: 16 bytes for each of its TILES tiles, of the stream's context,
    // written in its order while the ticket is held, as a caller's kernel would.
    ok(unsafe { gpu.stream().copy_from_host(status.slots as u64, &slots) })?;
    drop(ticket);
    for (what, tiles) in [("8-byte scan of one tile", 1), ("8-byte scan of 512 tiles", 512)] {
        let n = tiles * tile64;
        let d_y = ok(DeviceVec::from_slice(gpu, &vec![1u64; n]))?;
        let mut out = ok(DeviceVec::<u64>::zeroed(gpu, n))?;
        ok(device::inclusive_scan::<u64, Sum>(gpu, &d_y, &mut out, &mut ws))?;
        let expected: Vec<u64> = (1..=n as u64).collect();
        check_slices(what, &ok(out.to_vec(gpu))?, &expected, |_| false)?;
    }
    Ok(())
}
