//! Dot product with a shared-memory tree (puzzle 12).

use crate::support::{GpuTest, check_eq, grid_values, ok, rng};
use gpu_primitives::{Error, Gpu, LaunchConfig, reference};
use gpu_primitives_lessons::dot_product;
use libtest_mimic::Failed;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("dot_product::puzzle12_size8_tpb8_is_140", puzzle12),
    ("dot_product::block_sizes_x_lengths_exact", block_sizes_x_lengths),
    ("dot_product::random_floats_within_error_bound", random_floats),
    ("dot_product::rejects_bad_input", rejects_bad_input),
];

fn puzzle12(gpu: &Gpu) -> Result<(), Failed> {
    let a: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let found = ok(dot_product::dot_product_with(
        gpu,
        &a,
        &a,
        LaunchConfig::new(1, 8),
    ))?;
    check_eq("puzzle 12", found, 140.0)
}

fn block_sizes_x_lengths(gpu: &Gpu) -> Result<(), Failed> {
    for block in [1u32, 2, 8, 32, 64, 128, 256, 512, 1024] {
        for n in [0usize, 1, 7, 8, 9, 255, 256, 257, 1023, 1024, 1025, 4097, 100_003] {
            let a = grid_values(n, n as u64);
            let b = grid_values(n, n as u64 + 1);
            for grid in [1u32, 3, 64] {
                let found = ok(dot_product::dot_product_with(
                    gpu,
                    &a,
                    &b,
                    LaunchConfig::new(grid, block),
                ))?;
                check_eq(
                    &format!("n={n} block={block} grid={grid}"),
                    found as f64,
                    reference::dot_product(&a, &b),
                )?;
            }
        }
    }
    Ok(())
}

fn random_floats(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(12);
    for n in [1usize << 10, 1 << 20, 3_000_017] {
        let a: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect();
        let b: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect();
        let found = ok(dot_product::dot_product(gpu, &a, &b))?;
        let expected = reference::dot_product(&a, &b);
        let abs: f64 = a.iter().zip(&b).map(|(x, y)| (*x as f64 * *y as f64).abs()).sum();
        // one rounding per product on top of the summation bound
        let bound = reference::f32_sum_error_bound(n + 1, abs);
        if (found as f64 - expected).abs() > bound {
            return Err(format!("n={n}: found {found}, expected {expected}, bound {bound}").into());
        }
    }
    Ok(())
}

fn rejects_bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let a = vec![1.0f32; 10];
    let b = vec![1.0f32; 9];
    match dot_product::dot_product(gpu, &a, &b) {
        Err(Error::LengthMismatch {
            expected: 10,
            found: 9,
            ..
        }) => {}
        other => return Err(format!("mismatched lengths gave {other:?}").into()),
    }
    match dot_product::dot_product_with(gpu, &a, &a, LaunchConfig::new(1, 96)) {
        Err(Error::InvalidLaunch(msg)) if msg.contains("power-of-two") => {}
        other => return Err(format!("block 96 gave {other:?}").into()),
    }
    check_eq("empty input", ok(dot_product::dot_product(gpu, &[], &[]))?, 0.0)
}
