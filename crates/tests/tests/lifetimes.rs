//! Handles that outlive the `Gpu` they were made with, and handles of one GPU used with
//! another's (docs/safety.md). A test binary of its own: the GPU tests keep a `Gpu` open for the
//! whole run, which would keep the primary context alive whatever these tests drop. Each test is
//! reported as ignored, with the reason, where there is no CUDA device (or, for the two-GPU
//! test, a single one).
//!
//! Run: `cargo test -p gpu-primitives-tests --test lifetimes`.

use gpu_primitives::device::{self, DEVICE_SHARED_BYTES, DeviceVec, DeviceWorkspace, Sum};
use gpu_primitives::{Error, Gpu, LaunchConfig};
use gpu_primitives_abi::params::ReduceParams;
use gpu_primitives_abi::tuning::ReducePolicy;

/// The reduce's block, the same on every architecture (the registry's).
const REDUCE_BLOCK: u32 = ReducePolicy::SM80.block_threads;
use libtest_mimic::{Arguments, Completion, Failed, Trial};

type Test = fn() -> Result<Completion, Failed>;

const TESTS: &[(&str, Test)] = &[
    (
        "lifetimes::buffer_freed_after_its_gpu_frees_only_itself",
        buffer_outlives_gpu,
    ),
    (
        "lifetimes::kernel_launched_after_its_module_and_gpu_dropped",
        kernel_outlives_gpu,
    ),
    ("lifetimes::handles_of_another_gpu_are_refused", other_gpu),
    (
        "lifetimes::sticky_error_is_reported_by_every_later_call",
        sticky_error,
    ),
];

/// Set in the child process of [`sticky_error`]: the binary runs [`sticky_child`] alone.
const STICKY_CHILD: &str = "GPU_PRIMITIVES_TESTS_STICKY_CHILD";

fn main() {
    if std::env::var_os(STICKY_CHILD).is_some() {
        match sticky_child() {
            Ok(report) => {
                println!("{report}");
                std::process::exit(0);
            }
            Err(e) => {
                eprintln!("{}", e.message().unwrap_or("failed"));
                std::process::exit(1);
            }
        }
    }
    let mut args = Arguments::from_args();
    args.test_threads = Some(1);
    let trials = TESTS
        .iter()
        .map(|&(name, test)| Trial::ignorable_test(name, test))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

/// GPU `ordinal`, or the reason the test is ignored.
fn open(ordinal: u32) -> Result<Result<Gpu, Completion>, Failed> {
    match gpu_primitives::open_gpu(ordinal) {
        Ok(gpu) => Ok(Ok(gpu)),
        Err(Error::NoDevice(why)) => Ok(Err(Completion::ignored_with(format!(
            "needs a CUDA GPU; none here ({why})"
        )))),
        Err(Error::NoSuchDevice { ordinal, count }) => Ok(Err(Completion::ignored_with(format!(
            "needs GPU {ordinal}; {count} present"
        )))),
        Err(e) => Err(format!("opening GPU {ordinal}: {e}").into()),
    }
}

fn ok<T>(r: gpu_primitives::Result<T>) -> Result<T, Failed> {
    r.map_err(|e| Failed::from(format!("GPU call failed: {e}")))
}

const LEN: usize = 1 << 20;

/// A buffer dropped after its `Gpu` (and after a new `Gpu` of the same device opened, whose
/// allocation may take the same address) frees its own memory, in its own context, and nothing
/// else: the new `Gpu`'s buffers keep their contents.
fn buffer_outlives_gpu() -> Result<Completion, Failed> {
    let gpu = match open(0)? {
        Ok(gpu) => gpu,
        Err(ignored) => return Ok(ignored),
    };
    let old = ok(gpu.upload(&vec![1u32; LEN]))?;
    drop(gpu);
    let gpu = ok(gpu_primitives::open_gpu(0))?;
    let kept = ok(gpu.upload(&vec![2u32; LEN]))?;
    drop(old);
    // Were `kept`'s memory freed by that drop, this allocation could take it over.
    let other = ok(gpu.upload(&vec![3u32; LEN]))?;
    let found = ok(gpu.download(&kept))?;
    if let Some(i) = found.iter().position(|&v| v != 2) {
        return Err(format!("a buffer of the new Gpu changed at {i}: {}", found[i]).into());
    }
    drop(other);
    Ok(Completion::Completed)
}

/// A `Kernel` keeps its code and context: launched after its `Module` and `Gpu` were dropped,
/// on a new `Gpu` of the same device, it runs (a reduce of one block).
fn kernel_outlives_gpu() -> Result<Completion, Failed> {
    let gpu = match open(0)? {
        Ok(gpu) => gpu,
        Err(ignored) => return Ok(ignored),
    };
    let module = ok(gpu_primitives::module(&gpu))?;
    let kernel = ok(module.kernel::<ReduceParams<u32, u32>>("device_reduce_u32_sum"))?;
    drop(module);
    drop(gpu);
    let gpu = ok(gpu_primitives::open_gpu(0))?;
    let input = ok(gpu.upload(&vec![3u32; LEN]))?;
    let output = ok(gpu.alloc_zeroed::<u32>(1))?;
    let params = ReduceParams {
        input: input.as_device_ptr().as_raw() as *const u32,
        n: LEN,
        partials: output.as_device_ptr().as_raw() as *mut u32,
        result: output.as_device_ptr().as_raw() as *mut u32,
        blocks_done: std::ptr::null_mut(),
    };
    let config = LaunchConfig::new(1, REDUCE_BLOCK).with_shared_mem(DEVICE_SHARED_BYTES);
    // SAFETY: the reduce's contract for one block: `input` holds n u32, `partials` one u32 (the
    // result, as the library's one-block reduce passes it), no counter; REDUCE_BLOCK threads
    // with DEVICE_SHARED_BYTES; the buffers outlive the launch (downloaded below).
    ok(unsafe { gpu.stream().launch(&kernel, config, &params) })?;
    let sum = ok(gpu.download(&output))?[0];
    if sum as usize != 3 * LEN {
        return Err(format!("the reduce gave {sum}, expected {}", 3 * LEN).into());
    }
    Ok(Completion::Completed)
}

/// A stream, a workspace and a kernel of GPU 0 used with GPU 1, and memory of GPU 1 passed to a
/// call on GPU 0, are refused with `Error::WrongContext` before anything is queued.
fn other_gpu() -> Result<Completion, Failed> {
    let gpu0 = match open(0)? {
        Ok(gpu) => gpu,
        Err(ignored) => return Ok(ignored),
    };
    let gpu1 = match open(1)? {
        Ok(gpu) => gpu,
        Err(ignored) => return Ok(ignored),
    };
    let wrong = |what: &str, r: gpu_primitives::Result<()>| match r {
        Err(Error::WrongContext(_)) => Ok(()),
        other => Err(Failed::from(format!(
            "{what}: expected WrongContext, got {other:?}"
        ))),
    };
    wrong(
        "Gpu::on with another GPU's stream",
        gpu0.on(gpu1.stream()).map(|_| ()),
    )?;
    let x = ok(gpu0.upload(&[1u32, 2, 3]))?;
    let mut ws = DeviceWorkspace::new();
    ok(device::reduce::<u32, Sum>(&gpu0, &x, &mut ws))?;
    let y = ok(gpu1.upload(&[1u32, 2, 3]))?;
    wrong(
        "a workspace of GPU 0 used on GPU 1",
        device::reduce::<u32, Sum>(&gpu1, &y, &mut ws).map(|_| ()),
    )?;
    // GPU 0's own workspace (it served GPU 0 above): the refusal is the input's.
    wrong(
        "a runtime buffer of GPU 1 reduced on GPU 0",
        device::reduce::<u32, Sum>(&gpu0, &y, &mut ws).map(|_| ()),
    )?;
    let v = ok(DeviceVec::from_slice(&gpu1, &[1u32, 2, 3]))?;
    wrong(
        "a DeviceVec of GPU 1 reduced on GPU 0",
        device::reduce::<u32, Sum>(&gpu0, &v, &mut ws).map(|_| ()),
    )?;
    // The workspace was left as it was: GPU 0's calls still run with it.
    ok(device::reduce::<u32, Sum>(&gpu0, &x, &mut ws))?;
    let module = ok(gpu_primitives::module(&gpu0))?;
    let kernel = ok(module.kernel::<ReduceParams<u32, u32>>("device_reduce_u32_sum"))?;
    let params = ReduceParams::<u32, u32> {
        input: std::ptr::null(),
        n: 0,
        partials: std::ptr::null_mut(),
        result: std::ptr::null_mut(),
        blocks_done: std::ptr::null_mut(),
    };
    // SAFETY: refused before the launch (another context's kernel); were it launched, n = 0
    // reads and writes nothing.
    let launched = unsafe {
        gpu1.stream()
            .launch(&kernel, LaunchConfig::new(1, REDUCE_BLOCK), &params)
    };
    wrong("a kernel of GPU 0 launched on GPU 1's stream", launched)?;
    Ok(Completion::Completed)
}

/// A kernel of the caller's that faults (the library's reduce launched through the unsafe API
/// on an address nothing allocated) makes the context's error sticky: the library reports it as
/// `Error::Driver` at the next synchronising call and at every call after, without a panic or
/// a hang, and every handle drops without a panic (docs/safety.md, "Sticky errors"). Run in a
/// child process: the error lasts as long as the process.
fn sticky_error() -> Result<Completion, Failed> {
    if let Err(ignored) = open(0)? {
        return Ok(ignored);
    }
    let exe = std::env::current_exe().map_err(|e| format!("finding the test binary: {e}"))?;
    let mut child = std::process::Command::new(exe)
        .env(STICKY_CHILD, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting the child process: {e}"))?;
    // A hang is a failure: the child is given 120 s (it takes about one).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("waiting for the child: {e}"))?
        {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            return Err("the child process hung after the sticky error (killed after 120 s)".into());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let output = child
        .wait_with_output()
        .map_err(|e| format!("reading the child's output: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !status.success() {
        return Err(format!("the child process exited with {status}:\n{stdout}{stderr}").into());
    }
    print!("{stdout}");
    Ok(Completion::Completed)
}

/// The child of [`sticky_error`]: what each call returned after the fault, one line each.
fn sticky_child() -> Result<String, Failed> {
    let gpu = ok(gpu_primitives::open_gpu(0))?;
    let x = ok(gpu.upload(&vec![1u32; LEN]))?;
    let mut ws = DeviceWorkspace::new();
    let before = ok(device::reduce::<u32, Sum>(&gpu, &x, &mut ws))?;
    if before as usize != LEN {
        return Err(format!("the reduce before the fault gave {before}, expected {LEN}").into());
    }
    let module = ok(gpu_primitives::module(&gpu))?;
    let kernel = ok(module.kernel::<ReduceParams<u32, u32>>("device_reduce_u32_sum"))?;
    let output = ok(gpu.alloc_zeroed::<u32>(1))?;
    let params = ReduceParams {
        // Far past any allocation: the first load faults.
        input: 0x10 as *const u32,
        n: LEN,
        partials: output.as_device_ptr().as_raw() as *mut u32,
        result: output.as_device_ptr().as_raw() as *mut u32,
        blocks_done: std::ptr::null_mut(),
    };
    let config = LaunchConfig::new(1, REDUCE_BLOCK).with_shared_mem(DEVICE_SHARED_BYTES);
    // SAFETY: not sound, on purpose: `input` addresses no allocation, so the kernel faults on
    // the device. This process exists to see what follows a fault; its host memory is not
    // touched by the kernel (device addresses only), and nothing after it reads device memory
    // it trusts.
    ok(unsafe { gpu.stream().launch(&kernel, config, &params) })?;
    let mut report = Vec::new();
    let mut sticky = |what: &str, r: gpu_primitives::Result<()>| -> Result<(), Failed> {
        match r {
            Err(Error::Driver { name, .. })
                if name.contains("ILLEGAL_ADDRESS") || name.contains("LAUNCH_FAILED") =>
            {
                report.push(format!("{what}: {name}"));
                Ok(())
            }
            other => {
                Err(format!("{what} after the fault: expected the sticky driver error, got {other:?}").into())
            }
        }
    };
    sticky("Gpu::synchronize", gpu.synchronize())?;
    sticky("download", gpu.download(&x).map(|_| ()))?;
    sticky(
        "reduce",
        device::reduce::<u32, Sum>(&gpu, &x, &mut ws).map(|_| ()),
    )?;
    sticky(
        "reduce again",
        device::reduce::<u32, Sum>(&gpu, &x, &mut ws).map(|_| ()),
    )?;
    sticky("upload", gpu.upload(&[1u32]).map(|_| ()))?;
    // Every handle drops in that state without a panic (each leaks what its driver call fails
    // to release).
    drop((kernel, module, output, x, ws, gpu));
    Ok(report.join("\n"))
}
