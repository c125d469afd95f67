//! The caller's buffers and streams: algorithms queued on a stream the caller made, on the
//! legacy default stream wrapped from its raw handle, on sub-slices and raw device addresses,
//! from another thread, a kernel whose parameter struct does not match its PTX refused, and every
//! kernel of the library compiled alone (as the runtime compiles each on first use).

use crate::support::{GpuTest, check_eq, check_slices, ok, rng};
use gpu_primitives::device::{self, DeviceView, DeviceViewMut, DeviceWorkspace, Max, Sum};
use gpu_primitives::{Error, Gpu, Stream};
use libtest_mimic::Failed;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "streams::scan_and_reduce_on_a_stream_the_caller_made",
        caller_stream,
    ),
    (
        "streams::legacy_default_stream_and_library_stream_in_one_chain",
        legacy_default_stream,
    ),
    ("streams::sub_slices_and_raw_addresses", sub_slices),
    ("streams::gpu_used_from_another_thread", other_thread),
    ("streams::parameter_struct_checked_against_ptx", param_mismatch),
    ("streams::strided_copy_of_stride_0_is_refused", stride_0),
    ("streams::every_library_kernel_compiles_alone", compile_all),
];

/// The back-end interop tests of this build: cust's buffers and streams (feature `cust`),
/// cudarc's slices and streams (feature `cudarc`).
pub const BACKEND_TESTS: &[(&str, GpuTest)] = &[
    #[cfg(feature = "cust")]
    ("streams::algorithms_on_cust_buffers_and_stream", cust_interop),
    #[cfg(feature = "cudarc")]
    ("streams::algorithms_on_cudarc_slices_and_stream", cudarc_interop),
];

/// Runs reduce, argmin, argmax and segmented reduce on `input` (`x` on the device) and checks
/// them against the CPU references, then queues an exclusive scan of it into `output` and waits:
/// the caller checks the output ([`expected_scan`]).
fn check_all_algorithms(
    on: gpu_primitives::OnStream<'_>,
    x: &[u32],
    input: DeviceView<'_, u32>,
    output: DeviceViewMut<'_, u32>,
) -> Result<(), Failed> {
    use gpu_primitives::device::Min;
    use gpu_primitives::reference;
    let mut ws = DeviceWorkspace::new();
    check_eq(
        "reduce",
        ok(device::reduce::<u32, Sum>(on, input, &mut ws))?,
        reference::reduce::<u32, Sum>(x),
    )?;
    check_eq(
        "argmin",
        ok(device::argmin::<u32>(on, input, &mut ws))?,
        reference::argmin(x),
    )?;
    check_eq(
        "argmax",
        ok(device::argmax::<u32>(on, input, &mut ws))?,
        reference::argmax(x),
    )?;
    let row = 1000;
    let mut row_out = ok(on.stream().alloc_zeroed::<u32>(x.len() / row))?;
    ok(device::segmented_reduce::<u32, Min>(
        on,
        input.slice(0..x.len() / row * row),
        row,
        &mut row_out,
        &mut ws,
    ))?;
    check_slices(
        "segmented reduce",
        &ok(on.stream().download(&row_out))?,
        &reference::segmented_reduce::<u32, Min>(x, row),
        |_| false,
    )?;
    ok(device::exclusive_scan::<u32, Sum>(on, input, output, &mut ws))?;
    ok(on.stream().synchronize())
}

/// The exclusive sum scan of `x`.
fn expected_scan(x: &[u32]) -> Vec<u32> {
    gpu_primitives::reference::scan::<u32, Sum>(x, gpu_primitives::device::ScanKind::Exclusive)
}

#[cfg(feature = "cust")]
fn cust_interop(gpu: &Gpu) -> Result<(), Failed> {
    use cust::memory::CopyDestination;
    use gpu_primitives::interop::{cust, cust_stream};
    let x = inputs(1 << 20, 5);
    let fail = |e: cust::error::CudaError| Failed::from(format!("cust: {e}"));
    let stream = cust::stream::Stream::new(cust::stream::StreamFlags::NON_BLOCKING, None).map_err(fail)?;
    let d_x = cust::memory::DeviceBuffer::from_slice(&x).map_err(fail)?;
    let mut d_y = cust::memory::DeviceBuffer::<u32>::zeroed(x.len()).map_err(fail)?;
    // SAFETY: the cust stream lives in GPU 0's primary context and outlives `ours`.
    let ours = unsafe { cust_stream(gpu, &stream) };
    check_all_algorithms(
        ok(gpu.on(&ours))?,
        &x,
        DeviceView::from(&d_x),
        DeviceViewMut::from(&mut d_y),
    )?;
    let mut y = vec![0u32; x.len()];
    d_y.copy_to(&mut y[..]).map_err(fail)?;
    check_slices(
        "exclusive scan into a cust buffer",
        &y,
        &expected_scan(&x),
        |_| false,
    )
}

#[cfg(feature = "cudarc")]
fn cudarc_interop(gpu: &Gpu) -> Result<(), Failed> {
    use gpu_primitives::interop::{CudarcInput, CudarcOutput, cudarc, cudarc_stream};
    let x = inputs(1 << 20, 6);
    let fail = |e: cudarc::driver::DriverError| Failed::from(format!("cudarc: {e}"));
    let ctx = cudarc::driver::CudaContext::new(0).map_err(fail)?;
    let cuda = ctx.new_stream().map_err(fail)?;
    let d_x = cuda.clone_htod(&x).map_err(fail)?;
    let mut d_y = cuda.alloc_zeros::<u32>(x.len()).map_err(fail)?;
    let stream = ok(cudarc_stream(gpu, &cuda))?;
    {
        let input = ok(CudarcInput::new(&d_x, &stream))?;
        let mut output = ok(CudarcOutput::new(&mut d_y, &stream))?;
        check_all_algorithms(
            ok(gpu.on(&stream))?,
            &x,
            DeviceView::from(&input),
            DeviceViewMut::from(&mut output),
        )?;
    }
    let y = cuda.clone_dtoh(&d_y).map_err(fail)?;
    check_slices(
        "exclusive scan into a cudarc slice",
        &y,
        &expected_scan(&x),
        |_| false,
    )?;
    // A slice borrowed for the cudarc stream, passed to a call on the Gpu's own stream (another
    // stream, not ordered after the slice's writes): refused before anything is queued.
    let input = ok(CudarcInput::new(&d_x, &stream))?;
    match device::reduce::<u32, Sum>(gpu, &input, &mut DeviceWorkspace::new()) {
        Err(Error::InvalidArgument(_)) => Ok(()),
        other => Err(format!(
            "a cudarc slice borrowed for another stream: expected InvalidArgument, got {other:?}"
        )
        .into()),
    }
}

fn inputs(n: usize, salt: u64) -> Vec<u32> {
    let mut r = rng(salt);
    (0..n).map(|_| r.random_range(0..1000)).collect()
}

fn scanned(x: &[u32]) -> Vec<u32> {
    x.iter()
        .scan(0u32, |acc, &v| {
            *acc = acc.wrapping_add(v);
            Some(*acc)
        })
        .collect()
}

fn caller_stream(gpu: &Gpu) -> Result<(), Failed> {
    let stream = ok(gpu.create_stream())?;
    let n = 3 << 20;
    let x = inputs(n, 1);
    // Upload, scan, reduce of the scan and download, all queued on the caller's stream.
    let d_x = ok(stream.upload(&x))?;
    let mut d_y = ok(stream.alloc_zeroed::<u32>(n))?;
    let mut ws = DeviceWorkspace::new();
    ok(device::inclusive_scan::<u32, Sum>(
        ok(gpu.on(&stream))?,
        &d_x,
        &mut d_y,
        &mut ws,
    ))?;
    let max = ok(device::reduce::<u32, Max>(ok(gpu.on(&stream))?, &d_y, &mut ws))?;
    let expected = scanned(&x);
    check_eq("max of the scan", max, *expected.last().unwrap())?;
    check_slices(
        "scan on the caller's stream",
        &ok(stream.download(&d_y))?,
        &expected,
        |_| false,
    )
}

fn legacy_default_stream(gpu: &Gpu) -> Result<(), Failed> {
    // SAFETY: null is the legacy default stream of the current (primary) context.
    let legacy = unsafe { Stream::from_raw(gpu, std::ptr::null_mut()) };
    let n = 5 << 20;
    let x = inputs(n, 2);
    let d_x = ok(legacy.upload(&x))?;
    // Zeroed on the legacy stream, then written by a scan on the legacy stream, then scanned
    // again on the library's (non-blocking) stream after a wait: each step must see the last.
    let mut d_y = ok(legacy.alloc_zeroed::<u32>(n))?;
    let mut ws = DeviceWorkspace::new();
    ok(device::inclusive_scan::<u32, Sum>(
        ok(gpu.on(&legacy))?,
        &d_x,
        &mut d_y,
        &mut ws,
    ))?;
    ok(legacy.synchronize())?;
    let mut d_z = ok(gpu.alloc_zeroed::<u32>(n))?;
    ok(device::exclusive_scan::<u32, Sum>(gpu, &d_y, &mut d_z, &mut ws))?;
    let y = scanned(&x);
    let mut z = vec![0u32; n];
    for i in 1..n {
        z[i] = z[i - 1].wrapping_add(y[i - 1]);
    }
    check_slices(
        "scan on the legacy stream",
        &ok(legacy.download(&d_y))?,
        &y,
        |_| false,
    )?;
    check_slices(
        "scan of it on the library's stream",
        &ok(gpu.download(&d_z))?,
        &z,
        |_| false,
    )
}

fn sub_slices(gpu: &Gpu) -> Result<(), Failed> {
    let n = 100_003;
    let x = inputs(n, 3);
    let d_x = ok(gpu.upload(&x))?;
    let mut d_y = ok(gpu.alloc_zeroed::<u32>(n))?;
    let mut ws = DeviceWorkspace::new();
    // Elements 7..n-5 of the input (not 16-byte aligned) into elements 3.. of the output.
    let input = DeviceView::from(&d_x).slice(7..n - 5);
    let mut output = DeviceViewMut::from(&mut d_y);
    ok(device::inclusive_scan::<u32, Sum>(
        gpu,
        input,
        output.slice(3..n),
        &mut ws,
    ))?;
    let expected = scanned(&x[7..n - 5]);
    let found = ok(gpu.download(&d_y))?;
    check_slices(
        "scan of a sub-slice",
        &found[3..3 + expected.len()],
        &expected,
        |_| false,
    )?;
    check_slices("left alone before", &found[..3], &[0, 0, 0], |_| false)?;
    // A raw device address and length, as cudarc's CudaSlice::device_ptr() gives.
    // SAFETY: d_x holds n u32 values and outlives the view.
    let raw = unsafe { DeviceView::<u32>::from_raw_parts(d_x.as_device_ptr().as_raw() + 4 * 11, 1000) };
    let sum = ok(device::reduce::<u32, Sum>(gpu, raw, &mut ws))?;
    check_eq("reduce of a raw range", sum, x[11..1011].iter().sum::<u32>())
}

fn other_thread(gpu: &Gpu) -> Result<(), Failed> {
    let x = inputs(1 << 20, 4);
    let expected: u32 = x.iter().sum();
    let gpu = gpu.clone();
    let found = std::thread::spawn(move || -> gpu_primitives::Result<u32> {
        let d_x = gpu.upload(&x)?;
        device::reduce::<u32, Sum>(&gpu, &d_x, &mut DeviceWorkspace::new())
    })
    .join()
    .map_err(|_| Failed::from("the other thread panicked"))?;
    check_eq("reduce on another thread", ok(found)?, expected)
}

fn param_mismatch(gpu: &Gpu) -> Result<(), Failed> {
    let module = ok(gpu_primitives::module(gpu))?;
    match module.kernel::<[u64; 2]>("device_reduce_f32_sum") {
        Err(Error::ParamMismatch { host_bytes, .. }) if host_bytes == "[16]" => {}
        Err(e) => return Err(format!("expected ParamMismatch, got {e}").into()),
        Ok(_) => return Err("a 16-byte struct was accepted for the reduce kernel".into()),
    }
    // Positional arguments: `sum_naive` takes (input, out, n: usize); a u32 `n` is refused
    // before anything is launched.
    let d_x = ok(gpu.upload(&[1.0f32, 2.0]))?;
    let d_out = ok(gpu.alloc_zeroed::<f32>(1))?;
    let args = (d_x.as_device_ptr(), d_out.as_device_ptr(), 2u32);
    // SAFETY: the argument check refuses this launch before it reaches the driver.
    match unsafe { gpu.launch("sum_naive", gpu_primitives::LaunchConfig::new(1, 1), args) } {
        Err(Error::ParamMismatch {
            ptx_bytes,
            host_bytes,
            ..
        }) => {
            check_eq("PTX parameter sizes", ptx_bytes.as_str(), "[8, 8, 8]")?;
            check_eq("host argument sizes", host_bytes.as_str(), "[8, 8, 4]")
        }
        Err(e) => Err(format!("expected ParamMismatch, got {e}").into()),
        Ok(()) => Err("a u32 was accepted for a usize parameter".into()),
    }
}

/// `Stream::copy_strided` with a stride of 0 elements: [`Error::ZeroArgument`], nothing copied.
fn stride_0(gpu: &Gpu) -> Result<(), Failed> {
    let src = ok(gpu.upload(&[1u32, 2, 3, 4]))?;
    let dst = ok(gpu.upload(&[9u32; 2]))?;
    let (src_address, dst_address) = (src.as_device_ptr().as_raw(), dst.as_device_ptr().as_raw());
    // SAFETY: 2 elements of `src` at any stride up to 2 and `dst`'s 2, both live for the call;
    // a stride of 0 is refused before anything is queued.
    let r = unsafe { gpu.stream().copy_strided::<u32>(src_address, 0, dst_address, 2) };
    match r {
        Err(Error::ZeroArgument {
            what: "copy_strided", ..
        }) => {}
        other => return Err(format!("stride 0: expected ZeroArgument, got {other:?}").into()),
    }
    check_eq("dst untouched", ok(gpu.download(&dst))?, vec![9u32; 2])
}

/// Device memory that the compiled kernels may take, on average a kernel: the budget this test
/// holds the runtime's one-module-a-kernel loading to.
const COMPILED_KERNEL_BYTES: usize = 1 << 20;

/// Every kernel of the library's module compiles on this GPU alone, as the runtime compiles each
/// on first use (`Module::compile_all`); prints the time and the device memory the compiled
/// kernels took, and holds the latter to `COMPILED_KERNEL_BYTES` a kernel.
fn compile_all(gpu: &Gpu) -> Result<(), Failed> {
    let module = ok(gpu_primitives::module(gpu))?;
    let free = || {
        let (mut free, mut total) = (0usize, 0usize);
        ok(gpu.bind())?;
        // SAFETY: valid out-pointers; the context was made current just above.
        let status = unsafe { gpu_primitives::runtime::sys::cuMemGetInfo_v2(&mut free, &mut total) };
        if status != gpu_primitives::runtime::sys::cudaError_enum::CUDA_SUCCESS {
            return Err(Failed::from(format!("cuMemGetInfo: {status:?}")));
        }
        Ok(free)
    };
    let before = free()?;
    let start = std::time::Instant::now();
    let compiled = ok(module.compile_all())?;
    let seconds = start.elapsed().as_secs_f64();
    let taken = before.saturating_sub(free()?);
    println!(
        "compiled {compiled} kernels alone in {seconds:.1} s; device memory taken: {:.1} MiB, {:.1} KiB a kernel",
        taken as f64 / (1 << 20) as f64,
        taken as f64 / 1024.0 / compiled.max(1) as f64,
    );
    // Everything is compiled now: a second call finds nothing left.
    check_eq("kernels left to compile", ok(module.compile_all())?, 0)?;
    if taken > COMPILED_KERNEL_BYTES * compiled.max(1) {
        return Err(format!("{compiled} compiled kernels took {taken} bytes of device memory, past {COMPILED_KERNEL_BYTES} a kernel").into());
    }
    Ok(())
}
