//! The report's plot: latency against throughput (SVG), one curve per
//! server and request kind, through its points at 1, 16/32 and 64 clients;
//! p50 solid, p99 dashed-looking (thin, triangle marks).

use std::path::Path;

use anyhow::anyhow;
use plotters::prelude::*;

use super::measurement::Scenario;
use super::report::{OURS, PEER, Report};

/// One curve: its legend, colour, and (throughput, p50 ms, p99 ms) points.
struct Curve {
    label: String,
    color: RGBColor,
    points: Vec<(f64, f64, f64)>,
}

/// The curves of a report: creations and `tasks/get` (one task stored), per server.
fn curves(report: &Report) -> Vec<Curve> {
    let mut out = Vec::new();
    let kinds = [(Scenario::Creations, None, "creations"), (Scenario::Polls, Some(1), "tasks/get (1 stored)")];
    let colors =
        [(OURS, [RGBColor(31, 119, 180), RGBColor(44, 160, 44)]), (PEER, [RGBColor(214, 39, 40), RGBColor(255, 127, 14)])];
    for (subject, palette) in colors {
        for ((scenario, stored, name), color) in kinds.iter().zip(palette) {
            let mut points: Vec<(f64, f64, f64)> = report
                .rows
                .iter()
                .map(|r| &r.measurement)
                .filter(|m| m.subject == subject && m.scenario == *scenario && m.stored == *stored)
                .filter_map(|m| m.latency.map(|l| (m.per_second, l.p50_ms, l.p99_ms)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            if !points.is_empty() {
                out.push(Curve { label: format!("{subject}: {name}"), color, points });
            }
        }
    }
    out
}

/// Draws the report's latency-against-throughput plot to `path` (SVG).
pub(crate) fn plot(report: &Report, path: &Path) -> anyhow::Result<()> {
    let curves = curves(report);
    if curves.is_empty() {
        return Err(anyhow!("nothing to plot: the report has no latency figures"));
    }
    let max_x = curves.iter().flat_map(|c| c.points.iter().map(|p| p.0)).fold(1.0, f64::max) * 1.1;
    let all_y = || curves.iter().flat_map(|c| c.points.iter().flat_map(|p| [p.1, p.2]));
    let min_y = all_y().fold(f64::INFINITY, f64::min).max(0.001) / 1.5;
    let max_y = all_y().fold(0.0, f64::max).max(min_y * 2.0) * 1.5;
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
        root.fill(&WHITE)?;
        let title = format!(
            "Latency against throughput — store {:?}, {} cores, loopback HTTP",
            report.setting.store, report.setting.cores
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..max_x, (min_y..max_y).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("requests answered per second")
            .y_desc("latency, ms (log): p50 ● solid, p99 ▲ thin")
            .draw()?;
        for curve in &curves {
            let color = curve.color;
            chart
                .draw_series(LineSeries::new(curve.points.iter().map(|p| (p.0, p.1)), color.stroke_width(2)))?
                .label(curve.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            chart.draw_series(curve.points.iter().map(|p| Circle::new((p.0, p.1), 4, color.filled())))?;
            chart.draw_series(LineSeries::new(curve.points.iter().map(|p| (p.0, p.2)), color.stroke_width(1)))?;
            chart.draw_series(curve.points.iter().map(|p| TriangleMarker::new((p.0, p.2), 5, color.filled())))?;
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw()?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))
}
