use gpu_primitives::device::{self, DeviceVec, DeviceViewMut, DeviceWorkspace, Max, Predicate, ScanKind, Sum};

fn main() -> Result<(), gpu_primitives::Error> {
    let gpu = gpu_primitives::open_gpu(0)?;
    let x: Vec<f32> = (0..1_000_000).map(|i| (i % 7) as f32).collect();
    let d_x = DeviceVec::from_slice(&gpu, &x)?; // copy to the GPU once
    let mut ws = DeviceWorkspace::new(); // temporary storage, reused

    let total = device::reduce::<f32, Sum>(&gpu, &d_x, &mut ws)?; // returns to the host
    let largest = device::reduce::<f32, Max>(&gpu, &d_x, &mut ws)?;

    // Any device memory is an input or an output: here a buffer you own, then a sub-range of
    // it, on a stream of your own.
    let stream = gpu.create_stream()?;
    let mut d_y = stream.alloc_zeroed::<f32>(x.len())?;
    device::inclusive_scan::<f32, Sum>(gpu.on(&stream), &d_x, &mut d_y, &mut ws)?; // queued
    let mut d_z = stream.alloc_zeroed::<f32>(1000)?;
    let first_1000 = gpu_primitives::device::DeviceView::from(&d_y).slice(0..1000);
    device::exclusive_scan::<f32, Max>(gpu.on(&stream), first_1000, DeviceViewMut::from(&mut d_z), &mut ws)?;
    let y = stream.download(&d_y)?; // waits for the stream, copies back

    let (smallest, at) = device::argmin::<f32>(&gpu, &d_x, &mut ws)?.expect("not empty");
    let dot = device::dot::<f32>(&gpu, &d_x, &d_x, &mut ws)?;
    let mut row_max = gpu.alloc_zeroed::<f32>(1000)?; // 1000 rows of 1000 elements
    device::segmented_reduce::<f32, Max>(&gpu, &d_x, 1000, &mut row_max)?;
    let halves: Vec<half::f16> = x.iter().map(|&v| half::f16::from_f32(v)).collect();
    let half_scan = device::scan_slice::<half::f16, Sum>(&gpu, &halves, ScanKind::Inclusive)?; // in f32

    println!("sum {total}, max {largest}, last of the scan {}, argmin {smallest} at {at}", y[y.len() - 1]);
    // Stream compaction: the items below 3 in input order, their number in device memory.
    let mut kept = DeviceVec::<f32>::zeroed(&gpu, x.len())?;
    let mut count = gpu.alloc_zeroed::<u64>(1)?;
    device::select_if(&gpu, &d_x, Predicate::less(3.0), &mut kept, &mut count, &mut ws)?;
    let runs = device::unique_slice(&gpu, &[1u32, 1, 2, 2, 2, 7, 1])?; // [1, 2, 7, 1]

    println!("dot {dot}, f16 scan's last {}", half_scan[half_scan.len() - 1]);
    println!("kept {} of {} below 3; unique {runs:?}", gpu.download(&count)?[0], x.len());
    assert_eq!(y[y.len() - 1], total);
    assert_eq!(gpu.download(&row_max)?[0], 6.0);
    assert_eq!(gpu.download(&count)?[0], x.iter().filter(|&&v| v < 3.0).count() as u64);
    assert_eq!(runs, [1, 2, 7, 1]);
    Ok(())
}
