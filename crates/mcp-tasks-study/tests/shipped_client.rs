//! E5's client rows are the shipped client's: the study runs the core's
//! `Follow` state machine with `FollowConfig::default()` — what
//! `mcp-tasks-client` and `mcp-tasks call` follow tasks with — so changing
//! the shipped configuration changes Table 6a, and the shipped one prints it
//! exactly as published.

use mcp_tasks_core::{FollowConfig, PacingMode, PollPolicy};
use mcp_tasks_study::Silent;
use mcp_tasks_study::e2::E2Params;
use mcp_tasks_study::e4::E4Params;
use mcp_tasks_study::e5::{self, E5Result};

const HINT_PACED_ROW: &str =
    "hint-paced (server sets pace) | 67.4 | 0.46 s | 0.8% | 67.4 | 2.30 s | 0.8% | 67.4 | 13.78 s | 0.8%";

fn row(r: &E5Result, label: &str) -> String {
    let t = r.table6a();
    t.rows.iter().find(|row| row[0] == label).unwrap_or_else(|| panic!("no row {label}")).join(" | ")
}

#[tokio::test]
async fn table_6a_is_the_shipped_clients_and_moves_with_it() {
    let (e2, e4) = (E2Params::default(), E4Params::default());
    let shipped = e5::run(&e2, &e4, &Silent).await.unwrap();
    assert_eq!(row(&shipped, "hint-paced (server sets pace)"), HINT_PACED_ROW);
    let explicit = e5::run_with_client(&e2, &e4, &FollowConfig::default(), &Silent).await.unwrap();
    assert_eq!(explicit, shipped, "run() is the shipped client");

    // The same row from a client that ships without jitter, or in the floor mode.
    let unjittered = FollowConfig { poll: PollPolicy { jitter: false, ..PollPolicy::default() }, ..FollowConfig::default() };
    let changed = e5::run_with_client(&e2, &e4, &unjittered, &Silent).await.unwrap();
    assert_ne!(row(&changed, "hint-paced (server sets pace)"), HINT_PACED_ROW);
    let floor = FollowConfig { pacing: PacingMode::HintAsFloor, ..FollowConfig::default() };
    let changed = e5::run_with_client(&e2, &e4, &floor, &Silent).await.unwrap();
    let floored = row(&changed, "hint-paced (server sets pace)");
    assert_ne!(floored, HINT_PACED_ROW);
    // In the floor mode the 30 min task's staleness is set by the client's own 10 s ceiling, not the hint.
    assert!(!floored.ends_with("0.8%"), "{floored}");

    // A slower own backoff moves the paper's adaptive rows (the floor-mode client) too.
    let slower = FollowConfig { poll: PollPolicy { multiplier: 2.0, ..PollPolicy::default() }, ..FollowConfig::default() };
    let changed = e5::run_with_client(&e2, &e4, &slower, &Silent).await.unwrap();
    assert_ne!(row(&changed, "adaptive, max 30 s"), row(&shipped, "adaptive, max 30 s"));
}

#[tokio::test]
async fn table_6b_every_honouring_client_survives() {
    let r = e5::run(&E2Params::default(), &E4Params::default(), &Silent).await.unwrap();
    let t = r.table6b();
    let cells: Vec<String> = t.rows.iter().map(|row| row.join(" | ")).collect();
    assert_eq!(
        cells,
        [
            "10 s | survived | survived",
            "60 s | survived | survived",
            "300 s | survived | survived",
            "900 s | survived | survived"
        ]
    );
}
