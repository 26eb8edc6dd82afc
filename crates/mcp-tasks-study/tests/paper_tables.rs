//! Every number of the paper's Tables 1–5, pinned exactly as printed: each
//! table is formatted by the study and compared cell by cell.

use mcp_tasks_study::e2::{self, E2Params, PollCellPolicy};
use mcp_tasks_study::e3::{self, E3Params};
use mcp_tasks_study::{Silent, Table};

/// Compares every body cell of `table` with the paper's rows, each written
/// as the paper prints it with its cells separated by " | ".
fn assert_cells(table: &Table, paper: &[&str]) {
    assert_eq!(table.rows.len(), paper.len(), "row count of {}", table.title);
    for (i, (got, want)) in table.rows.iter().zip(paper).enumerate() {
        let want: Vec<&str> = want.split(" | ").collect();
        assert_eq!(got.len(), want.len(), "column count of row {i} of {}", table.title);
        for (j, (g, w)) in got.iter().zip(want.iter()).enumerate() {
            assert_eq!(g, w, "{}: row {i} ({}), column {j}", table.title, want[0]);
        }
    }
}

#[test]
fn table_2_polls_and_staleness() {
    let r = e2::run(&E2Params::default(), &Silent).unwrap();
    assert_cells(
        &r.table2(),
        &[
            "fixed 250 ms | 240.4 | 0.10 s | 1200.0 | 0.00 s | 7200.2 | 0.00 s",
            "fixed 1000 ms | 60.4 | 0.40 s | 300.0 | 0.00 s | 1800.2 | 0.00 s",
            "fixed 5000 ms | 12.5 | 2.40 s | 60.4 | 2.00 s | 360.5 | 2.00 s",
            "adaptive, max 10 s | 15.0 | 3.98 s | 46.7 | 3.97 s | 247.1 | 3.40 s",
            "adaptive, max 30 s | 11.9 | 12.98 s | 22.4 | 11.60 s | 89.3 | 11.60 s",
            "adaptive, max 60 s | 11.8 | 21.65 s | 17.3 | 22.01 s | 50.4 | 22.69 s",
        ],
    );
    assert_eq!(r.table2().header[0][1], "~60 s task");
    assert_eq!(r.table2().header[1][1..3], ["polls".to_string(), "stale p50".to_string()]);
}

#[test]
fn table_3_relative_staleness() {
    let r = e2::run(&E2Params::default(), &Silent).unwrap();
    assert_cells(
        &r.table3(),
        &[
            "fixed 5000 ms | 4.0% | 0.7% | 0.1%",
            "adaptive, max 10 s | 6.6% | 1.3% | 0.2%",
            "adaptive, max 30 s | 21.6% | 3.9% | 0.6%",
            "adaptive, max 60 s | 36.1% | 7.3% | 1.3%",
        ],
    );
}

#[test]
fn e2_means_are_the_models_exact_doubles() {
    let r = e2::run(&E2Params::default(), &Silent).unwrap();
    let polls = |d: f64, policy| r.cell(d, policy).unwrap().polls_mean;
    // Sums of integer poll counts divided by the run count, computed here
    // from the model's fractions: 2644/11, 3293/220, 10280/220, 54367/220.
    assert_eq!(polls(60.0, PollCellPolicy::Fixed { interval_ms: 250.0 }), 2644.0 / 11.0);
    assert_eq!(polls(60.0, PollCellPolicy::Adaptive { max_ms: 10_000.0 }), 3293.0 / 220.0);
    assert_eq!(polls(300.0, PollCellPolicy::Adaptive { max_ms: 10_000.0 }), 10280.0 / 220.0);
    assert_eq!(polls(1800.0, PollCellPolicy::Adaptive { max_ms: 10_000.0 }), 54367.0 / 220.0);
    // The study's own means, printed as study-model.md gives them.
    let printed = |d: f64, p: PollCellPolicy, places: usize| format!("{:.*}", places, polls(d, p));
    assert_eq!(printed(60.0, PollCellPolicy::Fixed { interval_ms: 250.0 }, 4), "240.3636");
    assert_eq!(printed(60.0, PollCellPolicy::Adaptive { max_ms: 10_000.0 }, 6), "14.968182");
    assert_eq!(printed(300.0, PollCellPolicy::Adaptive { max_ms: 10_000.0 }, 6), "46.727273");
    assert_eq!(printed(1800.0, PollCellPolicy::Adaptive { max_ms: 10_000.0 }, 6), "247.122727");
    // 11.85 prints as 11.8 because the stored double is 11.8499…
    let m = polls(60.0, PollCellPolicy::Adaptive { max_ms: 60_000.0 });
    assert_eq!(m, 2607.0 / 220.0);
    assert!(format!("{m:.20}").starts_with("11.8499"), "{m:.20}");
}

#[test]
fn table_4_cost_of_each_default() {
    let r = e3::run(&E3Params::default(), &Silent).unwrap();
    assert_cells(
        &r.table4(),
        &[
            "0% | permanent | 120 | 20 | 0 | 0 | 0",
            "0% | transient | 240 | 20 | 120 | 0 | 60",
            "25% | permanent | 120 | 20 | 0 | 15 | 0",
            "25% | transient | 225 | 35 | 90 | 0 | 45",
            "50% | permanent | 120 | 20 | 0 | 30 | 0",
            "50% | transient | 210 | 50 | 60 | 0 | 30",
            "75% | permanent | 120 | 20 | 0 | 45 | 0",
            "75% | transient | 195 | 65 | 30 | 0 | 15",
            "100% | permanent | 120 | 20 | 0 | 60 | 0",
            "100% | transient | 180 | 80 | 0 | 0 | 0",
        ],
    );
}

#[tokio::test]
async fn table_5_backoff_against_the_orphan_window() {
    let r = mcp_tasks_study::e4::run(&mcp_tasks_study::e4::E4Params::default(), &Silent).await.unwrap();
    assert_cells(
        &r.table5(),
        &[
            "10 s | survived | survived",
            "60 s | survived | survived",
            "300 s | survived | orphaned at 780 s",
            "900 s | survived | orphaned at 780 s",
        ],
    );
    assert_eq!(r.table5().header[0][1..], ["orphan window 900 s".to_string(), "orphan window 120 s".to_string()]);
}

#[tokio::test]
async fn table_1_handle_survival_across_a_restart() {
    let r = mcp_tasks_study::e1::run(&Silent).await.unwrap();
    assert_cells(&r.table1(), &["in-memory | 0 | 20 | 0 | 0%", "SQLite (WAL, synchronous=FULL) | 20 | 0 | 8 | 100%"]);
    // The memory store lost the completed results too; SQLite kept all twelve.
    assert_eq!(r.rows[0].results_kept, 0);
    assert_eq!(r.rows[1].results_kept, 12);
}
