//! The benchmark's plot: GB/s against n for reduce and scan (f32 sum), with the device-to-device
//! copy measured in the same run as the reference line. PNG, drawn with plotters; text in the
//! embedded DejaVu Sans font, so no system fonts are needed.

use crate::bench::BenchRow;
use plotters::prelude::*;
use std::path::Path;

/// One line of the plot: legend label, points (log2 n, GB/s), colour.
type Series = (String, Vec<(f64, f64)>, RGBColor);

/// Draw the rows of the size sweep (the first row's type) into `path` as a PNG of 1000 x 600
/// pixels: one series per algorithm, plus the copy; x axis log2(n), y axis GB/s. Written
/// atomically ([`crate::output::replace_atomically`]: a failure leaves `path` as it was).
///
/// # Errors
/// Drawing or file errors, as text.
pub fn plot(path: &Path, rows: &[BenchRow]) -> Result<(), String> {
    let mut drawn = Ok(());
    let written = crate::output::replace_atomically(path, |file| {
        drawn = draw(file, path, rows);
        drawn.clone().map_err(std::io::Error::other)
    });
    drawn?;
    written.map_err(|e| format!("{}: {e}", path.display()))
}

/// Draw the plot into `file` (a PNG); errors name `path`, the file the user asked for.
fn draw(file: &Path, path: &Path, rows: &[BenchRow]) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded font could not be loaded".to_owned())?;
    let Some(dtype) = rows.first().map(|r| r.dtype.clone()) else {
        return Err(format!("{}: no measurements to plot", path.display()));
    };
    let f32_rows: Vec<&BenchRow> = rows.iter().filter(|r| r.dtype == dtype).collect();
    let log2 = |n: usize| n.trailing_zeros() as f64;
    let (x_min, x_max) = f32_rows.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| {
        (lo.min(log2(r.n)), hi.max(log2(r.n)))
    });
    let y_max = f32_rows
        .iter()
        .map(|r| r.gb_per_s.max(r.copy_gb_per_s))
        .fold(0.0, f64::max)
        * 1.1;

    let root = BitMapBackend::new(file, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let title = format!("Device-wide reduce and scan on {} ({dtype})", f32_rows[0].gpu);
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

    let mut algorithms: Vec<&str> = f32_rows.iter().map(|r| r.algorithm.as_str()).collect();
    algorithms.sort_unstable();
    algorithms.dedup();
    let mut copy: Vec<(f64, f64)> = f32_rows.iter().map(|r| (log2(r.n), r.copy_gb_per_s)).collect();
    copy.dedup();
    let palette = [BLUE, RED, GREEN, MAGENTA, CYAN, RGBColor(255, 140, 0)];
    let mut lines: Vec<Series> = algorithms
        .iter()
        .zip(palette.iter().cycle())
        .map(|(a, &color)| {
            let bytes = if a.starts_with("reduce") {
                "bytes read"
            } else {
                "read + write"
            };
            let points = f32_rows
                .iter()
                .filter(|r| r.algorithm == *a)
                .map(|r| (log2(r.n), r.gb_per_s))
                .collect();
            (format!("{a} ({bytes})"), points, color)
        })
        .collect();
    lines.push(("device-to-device copy (read + write)".into(), copy, BLACK));
    for (name, points, color) in lines {
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
