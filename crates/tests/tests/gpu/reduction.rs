//! The reduction lesson's kernels: hierarchical block_sum and the naive one-thread sum.

use crate::support::{GpuTest, check_eq, check_slices, grid_values, ok};
use gpu_primitives::{Gpu, LaunchConfig, reference};
use gpu_primitives_lessons::reduction::{self, SumKernel};
use libtest_mimic::Failed;

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "reduction::block_sum_block_sizes_x_tile_boundaries",
        block_sum_shapes,
    ),
    ("reduction::block_sum_default_shape_large_n", block_sum_large),
    ("reduction::sum_naive_matches_reference", naive),
    ("reduction::inputs_unchanged", inputs_unchanged),
];

fn block_sum_shapes(gpu: &Gpu) -> Result<(), Failed> {
    for block in [1u32, 7, 32, 65, 128, 256, 1024] {
        let b = block as usize;
        for n in [0usize, 1, 31, 32, 33, b - 1, b, b + 1, 2 * b + 1, 100_003] {
            let x = grid_values(n, n as u64 ^ 0xb10c);
            let d_in = ok(gpu.upload(&x))?;
            for grid in [1u32, 5, 200] {
                let d_out = ok(gpu.alloc_zeroed::<f32>(1))?;
                ok(reduction::launch(
                    gpu,
                    SumKernel::Hierarchical,
                    &d_in,
                    &d_out,
                    LaunchConfig::new(grid, block),
                ))?;
                let found = ok(gpu.download(&d_out))?[0];
                check_eq(
                    &format!("n={n} block={block} grid={grid}"),
                    found as f64,
                    reference::sum(&x),
                )?;
            }
        }
    }
    Ok(())
}

fn block_sum_large(gpu: &Gpu) -> Result<(), Failed> {
    for n in [1usize << 20, (1 << 24) + 3] {
        let x = grid_values(n, 24);
        let found = ok(reduction::block_sum(gpu, &x))?;
        check_eq(&format!("n={n}"), found as f64, reference::sum(&x))?;
    }
    Ok(())
}

fn naive(gpu: &Gpu) -> Result<(), Failed> {
    for n in [0usize, 1, 1000, 65_537] {
        let x = grid_values(n, 7);
        check_eq(
            &format!("n={n}"),
            ok(reduction::sum_naive(gpu, &x))? as f64,
            reference::sum(&x),
        )?;
    }
    Ok(())
}

fn inputs_unchanged(gpu: &Gpu) -> Result<(), Failed> {
    let x = grid_values(10_000, 3);
    let d_in = ok(gpu.upload(&x))?;
    let d_out = ok(gpu.alloc_zeroed::<f32>(1))?;
    for kernel in [SumKernel::Hierarchical, SumKernel::Naive] {
        ok(reduction::launch(
            gpu,
            kernel,
            &d_in,
            &d_out,
            reduction::hierarchical_config(gpu, x.len()),
        ))?;
    }
    check_slices("input after both sums", &ok(gpu.download(&d_in))?, &x, |_| false)
}
