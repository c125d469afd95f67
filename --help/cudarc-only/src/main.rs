use gpu_primitives::device::{self, DeviceView, DeviceWorkspace, Max, Sum};
use gpu_primitives::interop::cudarc::driver::CudaContext;
use gpu_primitives::interop::{CudarcInput, CudarcOutput, cudarc_stream};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = CudaContext::new(0)?; // the primary context of GPU 0
    let cuda = ctx.new_stream()?;
    let x: Vec<u32> = (0..100_000).collect();
    let d_x = cuda.clone_htod(&x)?;
    let mut d_y = cuda.alloc_zeros::<u32>(x.len())?;

    let gpu = gpu_primitives::open_gpu(0)?; // the same primary context
    let stream = cudarc_stream(&gpu, &cuda)?; // the library's calls queue on cudarc's stream
    let mut ws = DeviceWorkspace::new();
    let largest;
    {
        let input = CudarcInput::new(&d_x, &cuda);
        let mut output = CudarcOutput::new(&mut d_y, &cuda);
        device::inclusive_scan::<u32, Sum>(gpu.on(&stream), &input, &mut output, &mut ws)?;
        largest = device::reduce::<u32, Max>(gpu.on(&stream), DeviceView::from(&input), &mut ws)?;
    }
    let y = cuda.clone_dtoh(&d_y)?; // cudarc waits on its stream
    let expected = (x.len() as u64 * (x.len() as u64 - 1) / 2) as u32;
    println!("last of the scan: {} (expected {expected}), max {largest}", y[y.len() - 1]);
    assert_eq!(y[y.len() - 1], expected);
    Ok(())
}
