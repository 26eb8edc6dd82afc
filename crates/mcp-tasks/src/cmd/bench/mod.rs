//! `mcp-tasks bench`: the benchmark harness of issue 13. It starts the
//! server under test as a separate process (`mcp-tasks serve` on a fresh
//! store, then the `rmcp-task-peer` in-memory peer), loads it over real
//! loopback HTTP from this process, and reports every figure with its ratio
//! to the peer's, measured in the same run. See BENCHMARKS.md.

mod end_to_end;
mod http_load;
mod launcher;
mod load_shapes;
mod mcp_requests;
mod measurement;
mod pg_schema;
mod plan;
mod plot;
mod report;
mod spawned;
mod sqlite_commits;
mod sweeps;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use http_load::{Endpoint, Stop};
use launcher::{Launcher, Server, StoreKind};
use load_shapes::{check_filled, creations, fill_mixed, polls};
use mcp_requests::LIVE_MS;
use measurement::{Beside, Measurement, Scenario};
use plan::{Part, Plan};
use report::{Report, Setting};

/// Flags of `mcp-tasks bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The store `mcp-tasks serve` keeps tasks in while measured.
    #[arg(long, value_enum, default_value = "sqlite")]
    store: StoreKind,
    /// The PostgreSQL database for --store postgres (each measurement gets a
    /// fresh schema in it, dropped afterwards).
    #[arg(long, env = "MCP_TASKS_DATABASE_URL", value_name = "URL")]
    database_url: Option<String>,
    /// A short run (about a minute): fewer clients and stored tasks, 1 s
    /// per measurement, one run; for trying it out, not for numbers.
    #[arg(long)]
    quick: bool,
    /// Runs of each timed measurement; the table shows the median run
    /// (default 3, or 1 with --quick).
    #[arg(long, value_name = "N")]
    runs: Option<usize>,
    /// Seconds each timed measurement lasts (default 10, or 1 with --quick).
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<f64>,
    /// Stored tasks at which `tasks/get` is measured besides one, comma-separated
    /// (default 10000,100000,1000000, or 1000 with --quick).
    #[arg(long, value_delimiter = ',', value_name = "N,N,…")]
    sizes: Vec<u64>,
    /// Rows in the store of each reaper-sweep measurement, comma-separated
    /// (default 10000,100000,1000000, or 1000,10000 with --quick).
    #[arg(long, value_delimiter = ',', value_name = "N,N,…")]
    sweep_sizes: Vec<u64>,
    /// Trivial tasks per end-to-end run (default 20000, or 300 with --quick).
    #[arg(long, value_name = "N")]
    e2e_tasks: Option<u64>,
    /// Measure only these parts, comma-separated (default: all of them);
    /// for rerunning one figure, each beside its peer's as in a full run.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PART,…")]
    only: Vec<Part>,
    /// Print the report as JSON on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// Also draw latency against throughput into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Where SQLite files go (default: a new directory in the system's temporary directory).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Runs `mcp-tasks bench`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut plan = Plan::from_args(args.quick, args.runs, args.seconds, &args.sizes, &args.sweep_sizes, &args.only)?;
    if let Some(n) = args.e2e_tasks {
        anyhow::ensure!(n > 0, "--e2e-tasks must be at least 1");
        plan.e2e_tasks = n;
    }
    let scratch = match &args.dir {
        Some(dir) => tempfile::Builder::new().prefix("mcp-tasks-bench-").tempdir_in(dir)?,
        None => tempfile::Builder::new().prefix("mcp-tasks-bench-").tempdir()?,
    };
    let mut launcher = Launcher::new(args.store, args.database_url.clone(), scratch.path())?;
    let progress = ProgressBar::new(plan.steps())
        .with_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        )
        .with_message("starting");
    progress.enable_steady_tick(Duration::from_millis(200));
    // The figures with a ratio to the peer are measured on both servers
    // turn about, run by run, so drift on a shared machine falls on both.
    let servers = [Server::McpTasks, Server::RmcpPeer];
    let mut by_server = [Vec::new(), Vec::new()];
    if plan.includes(Part::Polls) || plan.includes(Part::Creations) {
        let [mut ours, peer] = one_stored(&plan, &mut launcher, servers, &progress).await?;
        for (ours, peer) in ours.iter_mut().zip(&peer) {
            ours.peer = Some(Beside::of(peer));
        }
        by_server[0].extend(ours);
        by_server[1].extend(peer);
    }
    for (server, out) in servers.into_iter().zip(&mut by_server) {
        if plan.includes(Part::StoredPolls) {
            out.extend(stored_polls(&plan, &mut launcher, server, &progress).await?);
        }
    }
    if plan.includes(Part::EndToEnd) {
        let [mut ours, peer] = end_to_end_both(&plan, &mut launcher, servers, &progress).await?;
        ours.peer = Some(Beside::of(&peer));
        by_server[0].push(ours);
        by_server[1].push(peer);
    }
    // Resident memory with live tasks (ours: the peer's sweep makes storing
    // many quadratic, and it keeps nothing durable to compare with).
    if plan.includes(Part::Memory) {
        by_server[0].push(resident_memory(&plan, &mut launcher, &progress).await?);
    }
    let mut all: Vec<Measurement> = by_server.into_iter().flatten().collect();
    if plan.includes(Part::RawCommits) {
        let mut raw = Vec::new();
        for _ in 0..plan.runs {
            progress.set_message("SQLite raw commits");
            let (dir, seconds) = (scratch.path().to_owned(), plan.seconds);
            raw.push(tokio::task::spawn_blocking(move || sqlite_commits::raw_commits(&dir, seconds)).await??);
            progress.inc(1);
        }
        all.push(Measurement::median(raw));
    }
    if plan.includes(Part::Sweeps) {
        for &rows in &plan.sweep_sizes {
            progress.set_message(format!("reaper sweep, {rows} rows"));
            let store_url = args.database_url.as_deref();
            all.push(sweeps::reaper_sweep(args.store, store_url, scratch.path(), rows, plan.runs).await?);
            progress.inc(1);
        }
    }
    if plan.includes(Part::Triage) {
        progress.set_message(format!("triage of {} lapsed leases", plan.lapsed_leases));
        let store_url = args.database_url.as_deref();
        all.push(sweeps::lapsed_lease_triage(args.store, store_url, scratch.path(), plan.lapsed_leases).await?);
        progress.inc(1);
    }
    progress.finish_and_clear();

    let setting = Setting {
        store: args.store,
        quick: args.quick,
        runs: plan.runs,
        seconds_per_measurement: plan.seconds.as_secs_f64(),
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let report = Report::new(setting, all);
    if args.json {
        println!("{}", report.json());
    } else {
        print!("{}", report.table());
    }
    if let Some(path) = &args.plot {
        plot::plot(&report, path)?;
        eprintln!("plot written to {}", path.display());
    }
    let failed = report.rows.iter().any(|r| r.measurement.errors > 0);
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// A fresh server with a small store: its ids, polled to warm it up.
struct SmallStore {
    server: Server,
    endpoint: Endpoint,
    ids: Arc<Vec<String>>,
    _running: launcher::Running,
}

impl SmallStore {
    /// Starts `server` and stores `stored` tasks in it as [`fill_mixed`]
    /// does (one: a live task; two: a finished one and a live one), then
    /// warms its connections up.
    async fn start(plan: &Plan, launcher: &mut Launcher, server: Server, stored: u64) -> anyhow::Result<SmallStore> {
        let running = launcher.fresh(server).await?;
        let endpoint = Endpoint::parse(&running.process.url)?;
        let ids = Arc::new(fill_mixed(&endpoint, 1, stored).await?);
        polls(&endpoint, plan.poll_clients[0], Stop::After(plan.warm_up), ids.clone()).await?;
        Ok(SmallStore { server, endpoint, ids, _running: running })
    }
}

/// With one task stored on each server: `tasks/get` at each client count,
/// then creations at each; every run of a figure on one server is followed
/// by the same run on the other.
async fn one_stored(
    plan: &Plan,
    launcher: &mut Launcher,
    servers: [Server; 2],
    progress: &ProgressBar,
) -> anyhow::Result<[Vec<Measurement>; 2]> {
    let [first, second] = servers;
    let started = [SmallStore::start(plan, launcher, first, 1).await?, SmallStore::start(plan, launcher, second, 1).await?];
    let mut out = [Vec::new(), Vec::new()];
    let poll_clients = if plan.includes(Part::Polls) { &plan.poll_clients[..] } else { &[] };
    for &clients in poll_clients {
        progress.set_message(format!("tasks/get, 1 stored, {clients} clients"));
        let medians = turn_about(plan.runs, &started, progress, async |s: &SmallStore| {
            let load = polls(&s.endpoint, clients, Stop::After(plan.seconds), s.ids.clone()).await?;
            Ok(Measurement::of_load(Scenario::Polls, s.server.subject(), clients, Some(1), &load))
        })
        .await?;
        for (out, median) in out.iter_mut().zip(medians) {
            out.push(median);
        }
    }
    let creation_clients = if plan.includes(Part::Creations) { &plan.creation_clients[..] } else { &[] };
    for &clients in creation_clients {
        progress.set_message(format!("creations, {clients} clients"));
        let medians = turn_about(plan.runs, &started, progress, async |s: &SmallStore| {
            let load = creations(&s.endpoint, clients, Stop::After(plan.seconds), LIVE_MS, false).await?;
            Ok(Measurement::of_load(Scenario::Creations, s.server.subject(), clients, None, &load))
        })
        .await?;
        for (out, median) in out.iter_mut().zip(medians) {
            out.push(median);
        }
    }
    Ok(out)
}

/// Runs `measure` `runs` times on each server, turn about, and returns each
/// server's median run (with every run's rate, in order, for paired ratios).
/// Each round measures every server once, in order, then the next round in
/// reverse order (A B C, C B A, …): a drift of the machine's speed across a
/// round falls on the servers alike instead of always on the last.
async fn turn_about<S, const N: usize>(
    runs: usize,
    servers: &[S; N],
    progress: &ProgressBar,
    measure: impl AsyncFn(&S) -> anyhow::Result<Measurement>,
) -> anyhow::Result<[Measurement; N]> {
    let mut measured = std::array::from_fn::<_, N, _>(|_| Vec::new());
    for round in 0..runs {
        for i in 0..N {
            let i = if round % 2 == 0 { i } else { N - 1 - i };
            measured[i].push(measure(&servers[i]).await?);
            progress.inc(1);
        }
    }
    Ok(measured.map(Measurement::median))
}

/// End to end on a fresh server of each kind, turn about run by run.
async fn end_to_end_both(
    plan: &Plan,
    launcher: &mut Launcher,
    servers: [Server; 2],
    progress: &ProgressBar,
) -> anyhow::Result<[Measurement; 2]> {
    progress.set_message(format!("end to end, {} tasks", plan.e2e_tasks));
    let [first, second] = servers;
    let started = [launcher.fresh(first).await?, launcher.fresh(second).await?];
    let endpoints = [Endpoint::parse(&started[0].process.url)?, Endpoint::parse(&started[1].process.url)?];
    let servers = [(first, &endpoints[0]), (second, &endpoints[1])];
    turn_about(plan.runs, &servers, progress, async |&(server, endpoint): &(Server, &Endpoint)| {
        end_to_end::end_to_end(endpoint, server.subject(), plan.fill_clients, plan.e2e_tasks).await
    })
    .await
}

/// `tasks/get` at each stored size (half finished, half live), each on a
/// server started fresh and filled for it, turn about (run by run) with two
/// fresh small servers of the same kind: one holding the same mix in the
/// smallest store (one finished task, one live), and one holding one live
/// task. A finished task's answer carries its result, so it costs more to
/// serve and to read than a live one's whatever the store's size: the
/// same-mix figure is what the size's flatness is taken against; the
/// one-task figure is shown too. Measured beside each other, a drift of the
/// shared machine falls on all three.
async fn stored_polls(
    plan: &Plan,
    launcher: &mut Launcher,
    server: Server,
    progress: &ProgressBar,
) -> anyhow::Result<Vec<Measurement>> {
    let (subject, label) = (server.subject(), server.label());
    let mut out = Vec::new();
    for &size in plan.sizes(server) {
        progress.set_message(format!("{label}: storing {size} tasks"));
        let running = launcher.fresh(server).await?;
        let endpoint = Endpoint::parse(&running.process.url)?;
        let ids = Arc::new(fill_mixed(&endpoint, plan.fill_clients, size).await?);
        progress.inc(1);
        polls(&endpoint, report::POLL_CLIENTS, Stop::After(plan.warm_up), ids.clone()).await?;
        let mix_store = SmallStore::start(plan, launcher, server, SAME_MIX_STORED).await?;
        let one_store = SmallStore::start(plan, launcher, server, 1).await?;
        progress.set_message(format!("{label}: tasks/get, {size} stored, {SAME_MIX_STORED} stored and 1 stored"));
        let three = [
            (&endpoint, &ids, size),
            (&mix_store.endpoint, &mix_store.ids, SAME_MIX_STORED),
            (&one_store.endpoint, &one_store.ids, 1),
        ];
        let [mut stored, same_mix, one_live] = turn_about(plan.runs, &three, progress, async |&(endpoint, ids, size)| {
            let load = polls(endpoint, report::POLL_CLIENTS, Stop::After(plan.seconds), ids.clone()).await?;
            Ok(Measurement::of_load(Scenario::Polls, subject, report::POLL_CLIENTS, Some(size), &load))
        })
        .await?;
        stored.same_mix = Some(Beside::of(&same_mix));
        stored.one_live = Some(Beside::of(&one_live));
        out.push(stored);
    }
    Ok(out)
}

/// The smallest store holding the stored sizes' mix: one finished task and one live.
const SAME_MIX_STORED: u64 = 2;

/// `mcp-tasks serve`'s resident memory after `plan.resident_live` live
/// tasks were created through it.
async fn resident_memory(plan: &Plan, launcher: &mut Launcher, progress: &ProgressBar) -> anyhow::Result<Measurement> {
    let server = Server::McpTasks;
    progress.set_message(format!("{}: resident memory, {} live tasks", server.label(), plan.resident_live));
    let running = launcher.fresh(server).await?;
    let endpoint = Endpoint::parse(&running.process.url)?;
    let load = creations(&endpoint, plan.fill_clients, Stop::Count(plan.resident_live), LIVE_MS, false).await?;
    check_filled(&load, plan.resident_live)?;
    let bytes = running.process.resident_bytes()?;
    progress.inc(1);
    Ok(Measurement {
        scenario: Scenario::ResidentMemory,
        subject: server.subject().to_owned(),
        clients: None,
        stored: Some(plan.resident_live),
        count: plan.resident_live,
        errors: 0,
        first_error: None,
        seconds: load.elapsed.as_secs_f64(),
        per_second: load.per_second(),
        latency: None,
        bytes: Some(bytes),
        same_mix: None,
        one_live: None,
        peer: None,
        run_rates: Vec::new(),
        runs: 1,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[tokio::test]
    async fn turn_about_alternates_the_servers_run_by_run_and_keeps_each_median() {
        let order = Mutex::new(Vec::new());
        // Given out in the order measured: a b c, then c b a, then a b c.
        let rates = Mutex::new(vec![5.0, 50.0, 500.0, 300.0, 10.0, 1.0, 3.0, 30.0, 100.0].into_iter());
        let medians = turn_about(3, &["a", "b", "c"], &ProgressBar::hidden(), async |&subject: &&str| {
            order.lock().unwrap().push(subject);
            let per_second = rates.lock().unwrap().next().unwrap();
            Ok(Measurement {
                scenario: Scenario::EndToEnd,
                subject: subject.to_owned(),
                clients: Some(1),
                stored: None,
                count: 1,
                errors: 0,
                first_error: None,
                seconds: 1.0 / per_second,
                per_second,
                latency: None,
                bytes: None,
                same_mix: None,
                one_live: None,
                peer: None,
                run_rates: Vec::new(),
                runs: 1,
            })
        })
        .await
        .unwrap();
        assert_eq!(*order.lock().unwrap(), ["a", "b", "c", "c", "b", "a", "a", "b", "c"]);
        let got: Vec<(&str, f64, usize)> = medians.iter().map(|m| (m.subject.as_str(), m.per_second, m.runs)).collect();
        assert_eq!(got, [("a", 3.0, 3), ("b", 30.0, 3), ("c", 300.0, 3)]);
        let runs: Vec<&[f64]> = medians.iter().map(|m| &m.run_rates[..]).collect();
        assert_eq!(
            runs,
            [&[5.0, 1.0, 3.0][..], &[50.0, 10.0, 30.0], &[500.0, 300.0, 100.0]],
            "each run's rate, in round order"
        );
    }
}
