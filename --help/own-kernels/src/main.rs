use gpu_primitives::device::{self, DeviceWorkspace, Max};
use gpu_primitives::{Gpu, LaunchConfig};

include!(concat!(env!("OUT_DIR"), "/my_kernels_ptx.rs")); // PTX_VARIANTS

fn main() -> Result<(), gpu_primitives::Error> {
    let gpu = Gpu::open(0, gpu_primitives::WARP_SIZE)?;
    gpu.module("my-kernels", PTX_VARIANTS)?; // yours, loaded once
    let x: Vec<f32> = (0..10_000).map(|i| ((i * 37) % 1000) as f32).collect();
    let blocks = x.len().div_ceil(256) as u32;
    let d_x = gpu.upload(&x)?;
    let d_out = gpu.alloc_zeroed::<f32>(blocks as usize)?;
    // SAFETY: block_max takes (x, out, n) with n elements and one output per block.
    unsafe {
        gpu.launch(
            "block_max",
            LaunchConfig::new(blocks, 256),
            (d_x.as_device_ptr(), d_out.as_device_ptr(), x.len()),
        )?
    };
    // The library's reduce over your kernel's output, on the same stream.
    let max = device::reduce::<f32, Max>(&gpu, &d_out, &mut DeviceWorkspace::new())?;
    println!("max of {} block maxima: {max}", blocks);
    assert_eq!(max, 999.0);
    Ok(())
}
