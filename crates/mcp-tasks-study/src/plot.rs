//! The study's figures, drawn with plotters as SVG: the E2 frontier, the E3
//! cost curves, the E4/E5 survival grids and the E5 hint frontier.

use std::path::{Path, PathBuf};

use mcp_tasks_core::FailureClass;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::e2::{E2Cell, E2Result, PollCellPolicy};
use crate::e3::E3Result;
use crate::e4::E4Result;
use crate::e5::E5Result;
use crate::error::StudyError;
use crate::num::short;

const SIZE: (u32, u32) = (960, 600);
const FONT: &str = "sans-serif";

fn palette(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(23, 190, 207),
    ];
    COLORS[i % COLORS.len()]
}

fn plot_err(path: &Path) -> impl Fn(String) -> StudyError + '_ {
    move |reason| StudyError::Plot { path: path.display().to_string(), reason }
}

/// Draws into an SVG at `path` and presents it.
fn draw_svg(
    path: &Path,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>,
) -> Result<(), StudyError> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path)(e.to_string()))?;
    draw(&root).map_err(plot_err(path))?;
    root.present().map_err(|e| plot_err(path)(e.to_string()))
}

/// An axis value without needless decimals (10, 0.1, 0.01).
fn short_axis(v: f64) -> String {
    if v >= 1.0 { format!("{v:.0}") } else { format!("{}", (v * 1000.0).round() / 1000.0) }
}

fn short_tag(p: PollCellPolicy) -> String {
    match p {
        PollCellPolicy::Fixed { interval_ms } => format!("{} s", short(interval_ms / 1000.0)),
        PollCellPolicy::Adaptive { max_ms } => format!("≤{} s", short(max_ms / 1000.0)),
        PollCellPolicy::Hinted { max_ms, .. } => format!("hint, ≤{} s", short(max_ms / 1000.0)),
        PollCellPolicy::HintPaced { hint_ms, .. } => format!("paced {} s", short(hint_ms / 1000.0)),
    }
}

/// Relative staleness below this (including none at all) is drawn at it, so
/// a log axis can show the cells that are never stale.
const STALE_FLOOR_PCT: f64 = 0.01;

/// A cell's relative staleness in %, on the log axis.
fn stale_pct(c: &E2Cell) -> f64 {
    (c.stale_ratio * 100.0).max(STALE_FLOOR_PCT)
}

/// The axis ranges that hold `cells` (polls and staleness %, both log).
fn frontier_ranges(cells: &[&E2Cell]) -> (f64, f64, f64) {
    let min_polls = cells.iter().map(|c| c.polls_mean).fold(f64::INFINITY, f64::min).max(0.1);
    let max_polls = cells.iter().map(|c| c.polls_mean).fold(1.0, f64::max);
    let max_ratio = cells.iter().map(|c| stale_pct(c)).fold(1.0, f64::max);
    (min_polls / 1.5, max_polls * 1.5, max_ratio * 2.0)
}

/// Both axes of a frontier figure: polls and relative staleness, log.
type LogLog = Cartesian2d<LogCoord<f64>, LogCoord<f64>>;

/// A frontier chart (polls against relative staleness, both log) titled
/// `caption`, with axes that hold `cells`.
fn frontier_chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: &str,
    caption_size: u32,
    cells: &[&E2Cell],
) -> Result<ChartContext<'a, SVGBackend<'b>, LogLog>, String> {
    let (x0, x1, y1) = frontier_ranges(cells);
    let mut chart = ChartBuilder::on(root)
        .caption(caption, (FONT, caption_size))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d((x0..x1).log_scale(), (STALE_FLOOR_PCT * 0.7..y1).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("polls per task (mean, log)")
        .y_desc("median staleness, % of task duration (log)")
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|x| short_axis(*x))
        .y_label_formatter(&|y| short_axis(*y))
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// Draws the legend of `chart`'s labelled series in its upper right corner.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(chart: &mut ChartContext<'a, DB, CT>) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()
        .map_err(|e| e.to_string())
}

/// A one-line key under a figure.
fn footnote(area: &DrawingArea<SVGBackend<'_>, Shift>, text: &str) -> Result<(), String> {
    area.draw(&Text::new(text.to_string(), (70, 4), (FONT, 13))).map_err(|e| e.to_string())
}

/// Figure 1: polls against relative staleness, one curve per duration.
pub fn e2_frontier(r: &E2Result, path: &Path) -> Result<(), StudyError> {
    draw_svg(path, |full| {
        let (root, foot) = full.split_vertically(SIZE.1 - 28);
        let root = &root;
        let cells: Vec<&E2Cell> = r.cells.iter().collect();
        let mut chart = frontier_chart(root, "E2: poll cost against staleness (relative to the task)", 22, &cells)?;
        for (i, &d) in r.params.durations_s.iter().enumerate() {
            let color = palette(i);
            let mut pts: Vec<(f64, f64, PollCellPolicy)> =
                r.cells.iter().filter(|c| c.duration_s == d).map(|c| (c.polls_mean, stale_pct(c), c.policy)).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.1)), color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(format!("~{} s task", short(d)))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart
                .draw_series(pts.iter().map(|p| match p.2 {
                    PollCellPolicy::Fixed { .. } => {
                        EmptyElement::at((p.0, p.1)) + Rectangle::new([(-4, -4), (4, 4)], color.filled())
                    }
                    _ => EmptyElement::at((p.0, p.1)) + Rectangle::new([(-4, -4), (4, 4)], color.stroke_width(2)),
                }))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(pts.iter().map(|p| {
                    EmptyElement::at((p.0, p.1)) + Text::new(short_tag(p.2), (6, -14), (FONT, 12).into_font().color(&color))
                }))
                .map_err(|e| e.to_string())?;
        }
        legend(&mut chart)?;
        footnote(
            &foot,
            "filled: fixed interval; open: adaptive backoff (label: its ceiling); never stale is drawn at 0.01 %",
        )
    })
}

/// Figure 2: E3's cost curves, one panel per default class.
pub fn e3_costs(r: &E3Result, path: &Path) -> Result<(), StudyError> {
    draw_svg(path, |root| {
        let (title, body) = root.split_vertically(40);
        title
            .draw(&Text::new("E3: what each default class costs, by how retryable the unknowns are", (20, 10), (FONT, 22)))
            .map_err(|e| e.to_string())?;
        let panels = body.split_evenly((1, 2));
        let y1 = r.rows.iter().map(|x| x.attempts).max().unwrap_or(1) as f64 * 1.1;
        type Measure = (&'static str, fn(&crate::e3::E3Row) -> u32);
        let measures: [Measure; 5] = [
            ("attempts", |x| x.attempts),
            ("recovered", |x| x.recovered),
            ("wasted retries", |x| x.wasted),
            ("lost work", |x| x.lost),
            ("dead-letters", |x| x.dead_letters),
        ];
        for (panel, default) in panels.iter().zip([FailureClass::Permanent, FailureClass::Transient]) {
            let mut chart = ChartBuilder::on(panel)
                .caption(format!("default: {default}"), (FONT, 18))
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(50)
                .build_cartesian_2d(0.0..100.0, 0.0..y1)
                .map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_desc("unrecognised failures truly transient, %")
                .y_desc("count (of 100 failures)")
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.0}"))
                .draw()
                .map_err(|e| e.to_string())?;
            let rows: Vec<_> = r.rows.iter().filter(|x| x.default == default).collect();
            for (i, (name, get)) in measures.iter().enumerate() {
                let color = palette(i);
                let pts: Vec<(f64, f64)> = rows.iter().map(|x| (x.fraction * 100.0, get(x) as f64)).collect();
                chart
                    .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                    .map_err(|e| e.to_string())?
                    .label(*name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
                chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled()))).map_err(|e| e.to_string())?;
            }
            legend(&mut chart)?;
        }
        Ok(())
    })
}

/// Draws one survival grid into `area`.
fn grid_panel(area: &DrawingArea<SVGBackend<'_>, Shift>, r: &E4Result, title: &str) -> Result<(), String> {
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    area.draw(&Text::new(title.to_string(), (20, 10), (FONT, 17))).map_err(|e| e.to_string())?;
    let (left, top) = (150, 80);
    let ncols = r.params.orphan_window_s.len().max(1) as i32;
    let nrows = r.params.max_backoff_ms.len().max(1) as i32;
    let cw = (w - left - 20) / ncols;
    let ch = ((h - top - 40) / nrows).min(90);
    area.draw(&Text::new("server orphan window →", (left, top - 50), (FONT, 14))).map_err(|e| e.to_string())?;
    area.draw(&Text::new("client max backoff ↓", (10, top - 25), (FONT, 14))).map_err(|e| e.to_string())?;
    for (j, wnd) in r.params.orphan_window_s.iter().enumerate() {
        let x = left + j as i32 * cw;
        area.draw(&Text::new(format!("{} s", short(*wnd)), (x + cw / 2 - 20, top - 25), (FONT, 15)))
            .map_err(|e| e.to_string())?;
    }
    for (i, m) in r.params.max_backoff_ms.iter().enumerate() {
        let y = top + i as i32 * ch;
        area.draw(&Text::new(format!("{} s", short(m / 1000.0)), (40, y + ch / 2 - 8), (FONT, 15)))
            .map_err(|e| e.to_string())?;
        for (j, wnd) in r.params.orphan_window_s.iter().enumerate() {
            let x = left + j as i32 * cw;
            let cell = r.cell(*m, *wnd).ok_or("missing cell")?;
            let fill = if cell.orphaned { RGBColor(244, 170, 160) } else { RGBColor(170, 222, 170) };
            area.draw(&Rectangle::new([(x + 2, y + 2), (x + cw - 2, y + ch - 2)], fill.filled()))
                .map_err(|e| e.to_string())?;
            area.draw(&Text::new(cell.outcome(), (x + 12, y + ch / 2 - 16), (FONT, 15))).map_err(|e| e.to_string())?;
            area.draw(&Text::new(
                format!("longest poll gap {} s", short(cell.longest_gap_s)),
                (x + 12, y + ch / 2 + 4),
                (FONT, 12),
            ))
            .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Figure 3: survival grids side by side, each with its panel title.
pub fn survival(panels: &[(&E4Result, &str)], path: &Path) -> Result<(), StudyError> {
    draw_svg(path, |root| {
        let (title, body) = root.split_vertically(40);
        title
            .draw(&Text::new("E4: does a live task survive its own client's backoff?", (20, 10), (FONT, 22)))
            .map_err(|e| e.to_string())?;
        let areas = body.split_evenly((1, panels.len().max(1)));
        for (area, (r, t)) in areas.iter().zip(panels) {
            grid_panel(area, r, t)?;
        }
        Ok(())
    })
}

/// Figure 4: E5(a), each adaptive client without and with the server's
/// duration-aware hint as a floor, and the hint-paced client, one colour per
/// duration.
pub fn e5_hint(r: &E5Result, path: &Path) -> Result<(), StudyError> {
    draw_svg(path, |full| {
        let (root, foot) = full.split_vertically(SIZE.1 - 28);
        let cells: Vec<&E2Cell> = r.frontier.iter().collect();
        let caption = "E5: a client paced by the server's hint is in the same regime at every duration";
        let mut chart = frontier_chart(&root, caption, 20, &cells)?;
        let point = |c: &E2Cell| (c.polls_mean, stale_pct(c));
        let mut paced = Vec::new();
        for (i, &d) in r.e2.durations_s.iter().enumerate() {
            let color = palette(i);
            let of = |hinted: bool| -> Vec<(f64, f64)> {
                r.frontier
                    .iter()
                    .filter(|c| c.duration_s == d && matches!(c.policy, PollCellPolicy::Hinted { .. }) == hinted)
                    .filter(|c| !matches!(c.policy, PollCellPolicy::HintPaced { .. }))
                    .map(point)
                    .collect()
            };
            let (plain, hinted) = (of(false), of(true));
            for (a, b) in plain.iter().zip(&hinted) {
                chart.draw_series(LineSeries::new([*a, *b], color.mix(0.5).stroke_width(1))).map_err(|e| e.to_string())?;
            }
            chart
                .draw_series(plain.iter().map(|p| Circle::new(*p, 5, color.stroke_width(2))))
                .map_err(|e| e.to_string())?
                .label(format!("~{} s task (hint {} s)", short(d), short(r.hint_for(d) / 1000.0)))
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
            chart.draw_series(hinted.iter().map(|p| Circle::new(*p, 5, color.filled()))).map_err(|e| e.to_string())?;
            if let Some(c) = r.hint_paced(d) {
                paced.push((point(c), color, c.policy));
            }
        }
        // The hint-paced points, one per duration, drawn largest first so
        // that points which coincide (as they do when the hint scales with
        // the duration) still all show.
        chart
            .draw_series(
                paced
                    .iter()
                    .enumerate()
                    .map(|(i, (p, color, _))| TriangleMarker::new(*p, 16 - 4 * i.min(3) as i32, color.filled())),
            )
            .map_err(|e| e.to_string())?
            .label("hint-paced client (a triangle per duration)")
            .legend(|(x, y)| TriangleMarker::new((x + 10, y), 7, BLACK.filled()));
        chart
            .draw_series(paced.iter().enumerate().map(|(i, (p, color, policy))| {
                // Stacked labels: the paced points nearly coincide by design.
                let dy = -30 - 16 * i as i32;
                EmptyElement::at(*p) + Text::new(short_tag(*policy), (10, dy), (FONT, 12).into_font().color(color))
            }))
            .map_err(|e| e.to_string())?;
        legend(&mut chart)?;
        footnote(
            &foot,
            "open circle: adaptive client; filled: the same client taking the hint as a floor; triangle: client paced by the hint",
        )
    })
}

/// The figure files `write_all` writes for what was run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Figures<'a> {
    /// E2, if run.
    pub e2: Option<&'a E2Result>,
    /// E3, if run.
    pub e3: Option<&'a E3Result>,
    /// E4, if run.
    pub e4: Option<&'a E4Result>,
    /// E5, if run.
    pub e5: Option<&'a E5Result>,
}

/// Writes every figure for what was run into `dir` (created if missing);
/// returns the files written.
pub fn write_all(figures: Figures<'_>, dir: &Path) -> Result<Vec<PathBuf>, StudyError> {
    std::fs::create_dir_all(dir).map_err(|e| StudyError::Plot { path: dir.display().to_string(), reason: e.to_string() })?;
    let mut written = Vec::new();
    let mut out = |name: &str| {
        let p = dir.join(name);
        written.push(p.clone());
        p
    };
    if let Some(r) = figures.e2 {
        e2_frontier(r, &out("e2-frontier.svg"))?;
    }
    if let Some(r) = figures.e3 {
        e3_costs(r, &out("e3-costs.svg"))?;
    }
    const UNAWARE: &str = "client unaware of the orphan window (Table 5)";
    const CAPPED: &str = "client caps backoff under the window (E5b)";
    match (figures.e4, figures.e5) {
        (Some(e4), Some(e5)) => survival(&[(e4, UNAWARE), (&e5.grid, CAPPED)], &out("e4-survival.svg"))?,
        (Some(e4), None) => survival(&[(e4, UNAWARE)], &out("e4-survival.svg"))?,
        (None, Some(e5)) => survival(&[(&e5.grid, CAPPED)], &out("e5-survival.svg"))?,
        (None, None) => {}
    }
    if let Some(r) = figures.e5 {
        e5_hint(r, &out("e5-hint.svg"))?;
    }
    Ok(written)
}
