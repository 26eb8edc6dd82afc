//! `mcp-tasks bench --quick` end to end: it starts `mcp-tasks serve` on
//! SQLite and the rmcp peer as processes, loads both over loopback HTTP, and
//! reports every scenario; the JSON has the structure the table is built
//! from, every count is positive and consistent with its rate, ratios are
//! the quotients of the rows they name, and the plot is drawn. No timing is
//! asserted: the machine is shared.

use std::process::Command;

use serde_json::Value;

/// The rows of `subject` for `scenario` (JSON names).
fn rows<'a>(report: &'a Value, scenario: &str, subject: &str) -> Vec<&'a Value> {
    report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["scenario"] == scenario && r["subject"] == subject)
        .collect()
}

fn clients(rows: &[&Value]) -> Vec<u64> {
    rows.iter().map(|r| r["clients"].as_u64().expect("clients")).collect()
}

#[test]
fn a_quick_bench_on_sqlite_reports_every_scenario_with_consistent_counts() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("bench.svg");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["bench", "--quick", "--json", "--store", "sqlite", "--seconds", "0.3", "--sizes", "100"])
        .args(["--sweep-sizes", "200,1000"])
        .arg("--dir")
        .arg(dir.path())
        .arg("--plot")
        .arg(&svg)
        .output()
        .expect("mcp-tasks bench runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "bench failed: {stderr}");
    let report: Value = serde_json::from_slice(&output.stdout).expect("--json prints JSON");
    assert_eq!(report["setting"]["store"], "sqlite");
    assert_eq!(report["setting"]["quick"], true);

    for subject in ["mcp-tasks", "rmcp in-memory"] {
        let one_stored: Vec<&Value> = rows(&report, "polls", subject).into_iter().filter(|r| r["stored"] == 1).collect();
        assert_eq!(clients(&one_stored), [1, 32, 64], "{subject}");
        assert_eq!(clients(&rows(&report, "creations", subject)), [1, 16, 64], "{subject}");
        let stored: Vec<&Value> = rows(&report, "polls", subject).into_iter().filter(|r| r["stored"] == 100).collect();
        assert_eq!(clients(&stored), [32], "{subject}");
        // Paired run by run with the small stores measured turn about with it.
        let run_rates = |row: &Value| -> Vec<f64> {
            row["run_rates"].as_array().expect("run_rates").iter().map(|r| r.as_f64().unwrap()).collect()
        };
        let stored_ratio = |against: &str| {
            let ratios = stored[0]["ratios"].as_array().unwrap();
            ratios.iter().find(|r| r["against"] == against).expect(against)["ratio"].as_f64().unwrap()
        };
        for (against, key) in [("own, same mix, 2 stored", "same_mix"), ("own, 1 live stored", "one_live")] {
            let (ours, theirs) = (run_rates(stored[0]), run_rates(&stored[0][key]));
            assert_eq!((ours.len(), theirs.len()), (1, 1), "one run each with --quick ({subject})");
            assert!((stored_ratio(against) - ours[0] / theirs[0]).abs() < 1e-9, "{subject}: {}", stored[0]);
        }
        let e2e = rows(&report, "end-to-end", subject);
        assert_eq!(e2e.len(), 1, "{subject}");
        assert_eq!(e2e[0]["count"], 300, "every end-to-end task is seen completed ({subject})");
    }
    let memory = rows(&report, "resident-memory", "mcp-tasks");
    assert_eq!(memory.len(), 1);
    assert!(memory[0]["bytes"].as_u64().unwrap() > 1_000_000, "{}", memory[0]);
    assert_eq!(rows(&report, "sqlite-raw-commits", "SQLite").len(), 1);
    let sweeps = rows(&report, "reaper-sweep", "mcp-tasks");
    let swept: Vec<(u64, u64)> =
        sweeps.iter().map(|r| (r["stored"].as_u64().unwrap(), r["count"].as_u64().unwrap())).collect();
    assert_eq!(swept, [(200, 100), (1000, 100)], "each sweep fails exactly the 100 overdue tasks");
    let ratio = sweeps[1]["ratios"][0]["ratio"].as_f64().unwrap();
    let times = sweeps[1]["seconds"].as_f64().unwrap() / sweeps[0]["seconds"].as_f64().unwrap();
    assert!((ratio - times).abs() < 1e-9, "a sweep's ratio is its time over the smallest store's");
    let triage = rows(&report, "lease-triage", "mcp-tasks");
    assert_eq!(triage.len(), 1);
    assert_eq!(triage[0]["count"], 1000, "every lapsed lease is triaged");

    for row in report["rows"].as_array().unwrap() {
        assert_eq!(row["errors"], 0, "{row}");
        let (count, seconds, rate) =
            (row["count"].as_f64().unwrap(), row["seconds"].as_f64().unwrap(), row["per_second"].as_f64().unwrap());
        assert!(count > 0.0 && seconds > 0.0 && rate > 0.0, "{row}");
        assert!((rate - count / seconds).abs() <= 1e-6 * rate, "the rate is count / seconds: {row}");
        if let Some(latency) = row["latency"].as_object() {
            let p = |k: &str| latency[k].as_f64().unwrap();
            assert!(0.0 < p("p50_ms") && p("p50_ms") <= p("p99_ms") && p("p99_ms") <= p("p999_ms"), "{row}");
        }
    }

    // Ratios are the quotients of the rows they name, from this one run.
    let ours = rows(&report, "creations", "mcp-tasks").into_iter().find(|r| r["clients"] == 64).unwrap().clone();
    let peer = rows(&report, "creations", "rmcp in-memory").into_iter().find(|r| r["clients"] == 64).unwrap().clone();
    let raw = rows(&report, "sqlite-raw-commits", "SQLite")[0].clone();
    let ratio = |against: &str| {
        ours["ratios"].as_array().unwrap().iter().find(|r| r["against"] == against).expect(against)["ratio"]
            .as_f64()
            .unwrap()
    };
    let rate = |r: &Value| r["per_second"].as_f64().unwrap();
    assert!((ratio("rmcp in-memory") - rate(&ours) / rate(&peer)).abs() < 1e-9);
    assert_eq!(ours["peer"]["per_second"], peer["per_second"], "the peer's figure measured turn about, beside ours");
    assert!((ratio("SQLite raw commits") - rate(&ours) / rate(&raw)).abs() < 1e-9);
    let targets: Vec<&str> = report["targets"].as_array().unwrap().iter().map(|t| t["target"].as_str().unwrap()).collect();
    assert!(targets.contains(&"creations, 64 clients, vs rmcp in-memory"), "{targets:?}");

    let drawn = std::fs::read_to_string(&svg).expect("--plot writes the SVG");
    assert!(drawn.starts_with("<svg") && drawn.contains("Latency against throughput"), "{}", &drawn[..200]);
    // Nothing is left behind but what was asked for.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, [std::ffi::OsString::from("bench.svg")], "{left:?}");
}

#[test]
fn only_measures_the_parts_named_each_beside_the_peer() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["bench", "--quick", "--json", "--seconds", "0.2", "--only", "end-to-end,sweeps", "--e2e-tasks", "50"])
        .args(["--sweep-sizes", "200"])
        .arg("--dir")
        .arg(dir.path())
        .output()
        .expect("mcp-tasks bench runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "bench failed: {stderr}");
    let report: Value = serde_json::from_slice(&output.stdout).expect("--json prints JSON");
    let measured: Vec<(&str, &str)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["scenario"].as_str().unwrap(), r["subject"].as_str().unwrap()))
        .collect();
    assert_eq!(
        measured,
        [("end-to-end", "mcp-tasks"), ("end-to-end", "rmcp in-memory"), ("reaper-sweep", "mcp-tasks")],
        "only the parts named, ours beside the peer's"
    );
    let ours = rows(&report, "end-to-end", "mcp-tasks")[0];
    assert_eq!(ours["count"], 50);
    assert!(ours["ratios"][0]["against"] == "rmcp in-memory", "{ours}");

    let unknown = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["bench", "--quick", "--only", "everything"])
        .output()
        .expect("mcp-tasks bench runs");
    assert_eq!(unknown.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(stderr.contains("invalid value 'everything' for '--only"), "{stderr}");
}

#[test]
fn postgres_without_a_database_url_is_refused_by_name() {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["bench", "--quick", "--store", "postgres"])
        .env_remove("MCP_TASKS_DATABASE_URL")
        .output()
        .expect("mcp-tasks bench runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--store postgres needs --database-url"), "{stderr}");
}
