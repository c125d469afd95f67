//! The benchmark's plot: GB/s against n for reduce and scan (f32 sum), with the device-to-device
//! copy measured in the same run as the reference line. PNG, drawn with plotters; text in the
//! embedded DejaVu Sans font, so no system fonts are needed.

use crate::bench::BenchRow;
use plotters::prelude::*;
use std::path::Path;

/// Draw `rows` (f32 rows only; one series per algorithm plus the copy) into `path` as a PNG of
/// 1000 x 600 pixels, x axis log2(n), y axis GB/s.
///
/// # Errors
/// Drawing or file errors, as text.
pub fn plot(path: &Path, rows: &[BenchRow]) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded font could not be loaded".to_owned())?;
    let f32_rows: Vec<&BenchRow> = rows.iter().filter(|r| r.dtype == "f32").collect();
    if f32_rows.is_empty() {
        return Err(format!("{}: no f32 measurements to plot", path.display()));
    }
    let log2 = |n: usize| n.trailing_zeros() as f64;
    let (x_min, x_max) = f32_rows.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| {
        (lo.min(log2(r.n)), hi.max(log2(r.n)))
    });
    let y_max = f32_rows
        .iter()
        .map(|r| r.gb_per_s.max(r.copy_gb_per_s))
        .fold(0.0, f64::max)
        * 1.1;

    let root = BitMapBackend::new(path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let title = format!("Device-wide sum on {} (f32)", f32_rows[0].gpu);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x_min..x_max, 0.0..y_max)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("n (elements, log2)")
        .y_desc("GB/s")
        .x_labels((x_max - x_min) as usize + 1)
        .x_label_formatter(&|x| format!("2^{x:.0}"))
        .draw()
        .map_err(|e| err(&e))?;

    let series = |algorithm: &str| -> Vec<(f64, f64)> {
        f32_rows
            .iter()
            .filter(|r| r.algorithm == algorithm)
            .map(|r| (log2(r.n), r.gb_per_s))
            .collect()
    };
    let mut copy: Vec<(f64, f64)> = f32_rows.iter().map(|r| (log2(r.n), r.copy_gb_per_s)).collect();
    copy.dedup();
    for (name, points, color) in [
        ("reduce sum (bytes read)", series("reduce sum"), BLUE),
        (
            "inclusive scan sum (read + write)",
            series("inclusive scan sum"),
            RED,
        ),
        ("device-to-device copy (read + write)", copy, BLACK),
    ] {
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
