//! The shipped Grafana dashboard (`deploy/grafana/mcp-tasks.json`) and
//! Prometheus alert rules (`deploy/prometheus/alerts.yml`) parse, and every
//! metric they name is one the server exports (nothing loads them at run
//! time, so this is what keeps them true).

use std::collections::BTreeSet;
use std::path::PathBuf;

use mcp_tasks_server::metrics::exported_names;
use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

fn deploy(file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy").join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `mcp_tasks_*` metric names in a PromQL expression, histogram series
/// suffixes taken off.
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = expr;
    while let Some(start) = rest.find("mcp_tasks_") {
        let tail = &rest[start..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        let name = &tail[..end];
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix).filter(|b| exported_names().contains(b)))
            .unwrap_or(name);
        names.insert(base.to_owned());
        rest = &tail[end..];
    }
    names
}

fn assert_exported(expr: &str, r#where: &str) {
    let names = metric_names(expr);
    assert!(!names.is_empty(), "{where}: names no mcp-tasks metric: {expr}");
    let exported = exported_names();
    for name in names {
        assert!(exported.contains(&name.as_str()), "{where}: {name} is not exported by the server (in {expr})");
    }
}

#[test]
fn the_dashboard_parses_and_names_only_exported_metrics() {
    let dashboard: Value = serde_json::from_str(&deploy("grafana/mcp-tasks.json")).expect("the dashboard is JSON");
    assert_eq!(dashboard["uid"], "mcp-tasks");
    let panels = dashboard["panels"].as_array().expect("panels");
    assert!(panels.len() >= 10, "{} panels", panels.len());
    let mut covered = BTreeSet::new();
    for panel in panels {
        let title = panel["title"].as_str().expect("every panel has a title");
        let targets = panel["targets"].as_array().unwrap_or_else(|| panic!("{title}: no targets"));
        assert!(!targets.is_empty(), "{title}: no targets");
        for target in targets {
            let expr = target["expr"].as_str().unwrap_or_else(|| panic!("{title}: a target without expr"));
            assert_exported(expr, title);
            covered.extend(metric_names(expr));
        }
    }
    // Tasks by status and tool (the gauge's two labels) have a panel.
    let exprs: Vec<&str> = panels
        .iter()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .filter_map(|t| t["expr"].as_str())
        .collect();
    assert!(
        exprs.iter().any(|e| e.contains("mcp_tasks_tasks{") && e.contains("by (tool, status)")),
        "no panel shows tasks by tool and status"
    );
    // The other direction: the dashboard shows everything the server exports.
    let missing: Vec<_> = exported_names().into_iter().filter(|n| !covered.contains(*n)).collect();
    assert!(missing.is_empty(), "exported but on no panel: {missing:?}");
}

#[test]
fn the_alert_rules_parse_and_name_only_exported_metrics() {
    let docs = YamlLoader::load_from_str(&deploy("prometheus/alerts.yml")).expect("the rules are YAML");
    let groups = docs[0]["groups"].as_vec().expect("groups");
    let mut alerts = BTreeSet::new();
    for group in groups {
        assert!(group["name"].as_str().is_some(), "a group without a name");
        for rule in group["rules"].as_vec().expect("rules") {
            let alert = rule["alert"].as_str().expect("every rule is an alert");
            let expr = rule["expr"].as_str().unwrap_or_else(|| panic!("{alert}: no expr"));
            assert_exported(expr, alert);
            assert!(rule["for"].as_str().is_some(), "{alert}: no `for`");
            assert!(matches!(rule["labels"]["severity"], Yaml::String(_)), "{alert}: no severity");
            assert!(rule["annotations"]["summary"].as_str().is_some(), "{alert}: no summary");
            alerts.insert(alert.to_owned());
        }
    }
    let expected: BTreeSet<String> =
        ["McpTasksDeadLettersGrowing", "McpTasksReaperNotRunning", "McpTasksLeaseTakeovers"].map(String::from).into();
    assert_eq!(alerts, expected);
}

#[test]
fn a_name_the_server_does_not_export_is_caught() {
    // The check itself can fail: a misspelt metric is not among the exported names.
    let names = metric_names("rate(mcp_tasks_created_totals[5m]) + mcp_tasks_http_request_duration_seconds_bucket");
    assert!(names.contains("mcp_tasks_created_totals"));
    assert!(names.contains("mcp_tasks_http_request_duration_seconds"));
    assert!(!exported_names().contains(&"mcp_tasks_created_totals"));
}
