//! `mcp-tasks study` through the built binary: JSON shapes, tables, figures,
//! and one-line errors for bad parameters.

use std::process::{Command, Output};

use serde_json::Value;

fn study(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-tasks")).arg("study").args(args).output().expect("run mcp-tasks")
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = study(&all);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

#[test]
fn e1_json_shape() {
    let v = json(&["e1"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["store"], "memory");
    assert_eq!(rows[1]["store"], "sqlite");
    for r in rows {
        assert_eq!(r["issued"], 20);
        assert_eq!(r["in_flight"], 8);
        assert_eq!(num(r, "resolved") + num(r, "lost"), 20.0);
        assert!((0.0..=1.0).contains(&num(r, "survival")));
    }
    assert_eq!(
        (rows[0]["resolved"].clone(), rows[0]["lost"].clone(), rows[0]["survival"].clone()),
        (0.into(), 20.into(), 0.0.into())
    );
    assert_eq!(
        (rows[1]["resolved"].clone(), rows[1]["resumable"].clone(), rows[1]["survival"].clone()),
        (20.into(), 8.into(), 1.0.into())
    );
}

#[test]
fn e2_json_shape() {
    let v = json(&["e2"]);
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 18);
    let first = &cells[0];
    assert_eq!(first["duration_s"], 60);
    assert_eq!(first["policy"], "fixed");
    assert_eq!(first["interval_ms"], 250);
    assert_eq!(num(first, "polls_mean"), 2644.0 / 11.0);
    let adaptive =
        cells.iter().find(|c| c["policy"] == "adaptive" && c["max_ms"] == 10000 && c["duration_s"] == 1800).unwrap();
    assert_eq!(num(adaptive, "polls_mean"), 54367.0 / 220.0);
    for c in cells {
        for k in ["polls_mean", "stale_p50_s", "stale_p95_s", "stale_ratio"] {
            num(c, k);
        }
        assert!(c.get("interval_ms").is_some() != c.get("max_ms").is_some(), "{c}");
        // (serde_json's default float parsing may differ from the printed double in the last bit)
        let ratio = num(c, "stale_p50_s") / num(c, "duration_s");
        assert!((num(c, "stale_ratio") - ratio).abs() <= 1e-12 * ratio.abs().max(1.0), "{c}");
    }
}

#[test]
fn e3_json_shape() {
    let v = json(&["e3"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    assert_eq!(rows[2]["fraction"], 0.25);
    assert_eq!(rows[2]["default"], "permanent");
    assert_eq!(rows[3]["default"], "transient");
    for (k, want) in [("attempts", 225), ("recovered", 35), ("wasted", 90), ("lost", 0), ("dead_letters", 45)] {
        assert_eq!(rows[3][k], want, "{k}");
    }
}

#[test]
fn e4_json_shape() {
    let v = json(&["e4"]);
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 8);
    let c = cells.iter().find(|c| c["max_backoff_ms"] == 300000 && c["orphan_window_s"] == 120).unwrap();
    assert_eq!(c["orphaned"], true);
    assert_eq!(c["cancelled_at_s"], 780.0);
    let s = cells.iter().find(|c| c["max_backoff_ms"] == 300000 && c["orphan_window_s"] == 900).unwrap();
    assert_eq!(s["orphaned"], false);
    assert!(s["cancelled_at_s"].is_null());
}

#[test]
fn all_json_holds_every_experiment_and_e5_survives_everywhere() {
    let v = json(&["all"]);
    for k in ["e1", "e2", "e3", "e4", "e5"] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    assert_eq!(v["e5"]["all_survived"], true);
    assert!(v["e5"]["grid"]["cells"].as_array().unwrap().iter().all(|c| c["orphaned"] == false));
    let frontier = v["e5"]["frontier"].as_array().unwrap();
    assert!(frontier.iter().any(|c| c["policy"] == "hinted" && c["hint_ms"] == 36000));
    // One hint-paced cell per duration, each with the hint and orphan window the server advertised.
    let paced: Vec<&Value> = frontier.iter().filter(|c| c["policy"] == "hint_paced").collect();
    assert_eq!(paced.iter().map(|c| c["duration_s"].clone()).collect::<Vec<_>>(), [60, 300, 1800]);
    for (c, h) in paced.iter().zip(v["e5"]["hints"].as_array().unwrap()) {
        assert_eq!((&c["hint_ms"], &c["orphan_window_ms"]), (&h["hint_ms"], &h["orphan_window_ms"]), "{c}");
        assert!(num(c, "stale_ratio") < 0.02, "{c}");
    }
    assert!(v["e5"]["reading"].as_str().unwrap().starts_with("Reading: "));
}

#[test]
fn tables_print_in_the_papers_order() {
    let out = study(&[]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("missing {s:?}"));
    let order = ["Table 1 —", "Table 2 —", "Table 3 —", "Table 4 —", "Table 5 —", "Table 6a —", "Table 6b —"].map(at);
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(text.contains("orphaned at 780 s"));
    // Table 6a ends with the hint-paced row, then the footnote that reads it.
    let t6a = &text[order[5]..order[6]];
    assert!(t6a.lines().any(|l| l.starts_with("hint-paced (server sets pace)")), "{t6a}");
    assert!(t6a.contains("\nReading: "), "{t6a}");
    // No progress bar when stderr is not a terminal.
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn parameters_change_the_run() {
    let v = json(&[
        "e2",
        "--durations",
        "120",
        "--fixed-ms",
        "500",
        "--adaptive-max-ms",
        "4000",
        "--seeds",
        "2",
        "--phases",
        "3",
    ]);
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    // Phases 0.9, 1.0, 1.1 of 120 s polled every 0.5 s: 216, 240, 264 polls.
    assert_eq!(num(&cells[0], "polls_mean"), 240.0);
    assert_eq!(cells[1]["runs"], 6);
    // A 100 s backoff under a 60 s window is orphaned, at a sweep instant
    // (a multiple of the sweep interval given) and before the task would end.
    for sweep in [10u32, 7] {
        let v = json(&[
            "e4",
            "--max-backoff-ms",
            "100000",
            "--orphan-window-s",
            "60",
            "--sweep-interval-s",
            &sweep.to_string(),
            "--task-duration-s",
            "600",
        ]);
        let cells = v["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0]["orphaned"], true, "{v}");
        let at = num(&cells[0], "cancelled_at_s");
        assert!(at > 60.0 && at <= 600.0 && at % f64::from(sweep) == 0.0, "sweep {sweep} s: cancelled at {at}");
    }
    // A task shorter than the window ends before anyone can call it orphaned.
    let v = json(&["e4", "--max-backoff-ms", "100000", "--orphan-window-s", "60", "--task-duration-s", "30"]);
    assert_eq!(v["cells"][0]["orphaned"], false, "{v}");
    assert!(v["cells"][0]["cancelled_at_s"].is_null(), "{v}");
}

#[test]
fn plot_writes_svg_figures() {
    let dir = tempfile_dir();
    let out = study(&["all", "--plot", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for f in ["e2-frontier.svg", "e3-costs.svg", "e4-survival.svg", "e5-hint.svg"] {
        let s = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(s.starts_with("<svg"), "{f}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("mcp-tasks-study-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A bad parameter: non-zero exit, exactly one line on stderr naming it, no panic.
fn refused(args: &[&str], names: &str) {
    let out = study(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("error: ") && err.contains(names), "{args:?}: {err}");
    assert!(!err.contains("panicked"));
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_parameters_get_one_line_errors() {
    refused(&["e2", "--durations", "-60"], "--durations");
    refused(&["e2", "--durations", "60,-300"], "-300");
    refused(&["e3", "--fractions", "1.5"], "--fractions");
    refused(&["e3", "--fractions", "-0.1"], "outside [0, 1]");
    refused(&["e2", "--seeds", "0"], "--seeds");
    refused(&["e2", "--phases", "-3"], "--phases");
    refused(&["e3", "--max-attempts", "0"], "--max-attempts");
    refused(&["e9"], "unknown experiment \"e9\"");
    refused(&["e4", "--orphan-window-s", "0"], "--orphan-window-s");
    refused(&["e4", "--sweep-interval-s", "-30"], "--sweep-interval-s");
    refused(&["e2", "--fixed-ms", "0.000001"], "--fixed-ms");
    refused(&["e2", "--seeds", "4000000000"], "--seeds");
}
