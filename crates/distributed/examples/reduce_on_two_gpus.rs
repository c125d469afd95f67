//! One process over two GPUs, a thread a rank: the maximum of an array sharded across them.
//!
//! `NCCL_NVLS_ENABLE=0 cargo run --release -p gpu-primitives-distributed --example reduce_on_two_gpus`.
//! docs/user-guide.md, "4. Past one GPU".

use gpu_primitives::device::{DeviceVec, DeviceWorkspace, Max};
use gpu_primitives_distributed::{self as dist, Communicator, DEFAULT_TIMEOUT};

fn main() -> Result<(), dist::Error> {
    let gpus = [gpu_primitives::open_gpu(0)?, gpu_primitives::open_gpu(1)?];
    let comms = Communicator::local(&[&gpus[0], &gpus[1]], DEFAULT_TIMEOUT)?;
    let maxima = std::thread::scope(|s| {
        let ranks: Vec<_> = comms
            .into_iter()
            .zip(&gpus)
            .map(|(mut comm, gpu)| {
                s.spawn(move || -> Result<f32, dist::Error> {
                    let n = 1 << 20;
                    let shard: Vec<f32> = (0..n).map(|i| (i * (comm.rank() + 1) % 1000) as f32).collect();
                    let d_shard = DeviceVec::from_slice(gpu, &shard)?;
                    dist::reduce::<f32, Max>(&mut comm, gpu, &d_shard, &mut DeviceWorkspace::new())
                })
            })
            .collect();
        let results = ranks
            .into_iter()
            .map(|rank| rank.join().expect("a rank panicked"));
        results.collect::<Result<Vec<f32>, dist::Error>>()
    })?;
    assert_eq!(maxima, [999.0, 999.0]); // every rank has the whole array's maximum
    Ok(())
}
