//! `--plot` writes one readable SVG per figure, drawn from the results.

use mcp_tasks_study::Silent;
use mcp_tasks_study::report::{self, Experiment, StudyParams};

#[tokio::test]
async fn every_figure_is_an_svg_with_the_results_in_it() {
    let mut params = StudyParams::default();
    // The figures of a small grid: cheap, and not the paper's numbers.
    params.e2.seeds = 2;
    params.e2.phases = 3;
    let mut r = report::run(Experiment::E2, &params, &Silent).await.unwrap();
    r.e3 = Some(mcp_tasks_study::e3::run(&params.e3, &Silent).unwrap());
    r.e4 = Some(mcp_tasks_study::e4::run(&params.e4, &Silent).await.unwrap());
    r.e5 = Some(mcp_tasks_study::e5::run(&params.e2, &params.e4, &Silent).await.unwrap());
    let dir = tempfile::tempdir().unwrap();
    let written = mcp_tasks_study::plot::write_all(r.figures(), dir.path()).unwrap();
    let names: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["e2-frontier.svg", "e3-costs.svg", "e4-survival.svg", "e5-hint.svg"]);
    let svg = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    for n in &names {
        let s = svg(n);
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"), "{n}");
    }
    assert!(svg("e2-frontier.svg").contains("~1800 s task"));
    assert!(svg("e3-costs.svg").contains("default: transient"));
    let grid = svg("e4-survival.svg");
    assert_eq!(grid.matches("orphaned at 780 s").count(), 2, "the paper's two orphaned cells, and none after the fix");
    assert_eq!(grid.matches("survived").count(), 6 + 8);
}

#[test]
fn an_unwritable_directory_is_a_plot_error() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let r = mcp_tasks_study::e3::run(&Default::default(), &Silent).unwrap();
    let figs = mcp_tasks_study::plot::Figures { e3: Some(&r), ..Default::default() };
    let err = mcp_tasks_study::plot::write_all(figs, &file.path().join("sub")).unwrap_err();
    assert!(err.to_string().starts_with("cannot write figure"), "{err}");
}
