//! `mcp-tasks call`: run a tool as a task and follow it to its result.
//!
//! Exit codes: 0 completed; 1 completed with a tool result flagged
//! `isError: true` (the task itself completed; the tool reported an error);
//! 3 failed (a JSON-RPC error); 4 cancelled; 5 the server no longer knows the
//! task (expired); 130 stopped waiting on a second Ctrl-C (the task keeps
//! running, `--resume` picks it up); 2 anything else (bad flags, unreachable
//! server). With `--resume` the worst code of all followed tasks is returned.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use mcp_tasks_client::rmcp::model::InputRequest;
use mcp_tasks_client::{
    BOOK_ENV, ClientError, ClientOptions, HandleBook, HandleRecord, InputPrompt, InputResponder, PacingMode, Started,
    TaskEvent, TaskHandle, TaskObserver, TaskOutcome, TasksClient, TransportFailure, elicit_accept, elicit_decline,
};
use mcp_tasks_core::TaskStatus;
use serde_json::{Map, Value, json};

use super::config_file::parse_duration;

/// Flags of `mcp-tasks call`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Exit codes: 0 completed; 1 completed with isError: true; 2 client error; \
3 failed; 4 cancelled; 5 task unknown to the server; 130 stopped waiting (resume with --resume).\n\
Ctrl-C once sends tasks/cancel and keeps following; twice stops waiting.")]
pub(crate) struct Args {
    /// The MCP endpoint, e.g. http://127.0.0.1:8080/mcp (with --resume: only resume handles on it).
    url: Option<String>,
    /// The tool to call.
    tool: Option<String>,
    /// The tool's arguments, a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    /// Bearer token sent as `Authorization: Bearer …` (never stored in the book).
    #[arg(long, value_name = "BEARER", env = "MCP_TASKS_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The handle book (default: the platform data dir's mcp-tasks/client.db).
    #[arg(long, value_name = "PATH", env = BOOK_ENV)]
    book: Option<PathBuf>,
    /// How the server's pollIntervalMs sets the pace: `hint` polls at the
    /// server's pace (jittered, never more than half its orphan window apart);
    /// `floor` backs off on its own, taking the hint only as a floor.
    #[arg(long, value_name = "MODE", default_value = "hint", value_parser = parse_pacing)]
    pacing: PacingMode,
    /// The largest gap between two polls this client's own backoff reaches, ms
    /// (the whole schedule with `--pacing floor`; with `hint`, until the server gives a hint).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_poll_ms: Option<u64>,
    /// Longest wait for the server's answer to one request (e.g. 30s, 2m).
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, default_value = "2m")]
    request_timeout: Duration,
    /// Print the outcome as JSON (`{status, taskId, result | error}`) instead of the result text.
    #[arg(long)]
    json: bool,
    /// Follow the unfinished handles in the book (all, or those on URL) instead of calling a tool.
    #[arg(long)]
    resume: bool,
}

const EXIT_OK: u8 = 0;
const EXIT_TOOL_ERROR: u8 = 1;
const EXIT_FAILED: u8 = 3;
const EXIT_CANCELLED: u8 = 4;
const EXIT_LOST: u8 = 5;
const EXIT_INTERRUPTED: u8 = 130;

/// Runs `mcp-tasks call`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let book_path = args.book.clone().unwrap_or_else(HandleBook::default_path);
    if args.resume {
        if args.tool.is_some() {
            bail!("--resume takes no TOOL (it follows the handles already in the book)");
        }
        let book = HandleBook::open(&book_path)?;
        return resume(&args, book, &Ui::new(std::io::stderr().is_terminal())).await;
    }
    let (Some(url), Some(tool)) = (args.url.clone(), args.tool.clone()) else {
        bail!("usage: mcp-tasks call URL TOOL [--args JSON] (or mcp-tasks call --resume [URL])");
    };
    let arguments: Value = serde_json::from_str(&args.args).context("--args is not valid JSON")?;
    if !arguments.is_object() {
        bail!("--args must be a JSON object, e.g. '{{\"n\": 3}}'");
    }
    let book = HandleBook::open(&book_path)?;
    let ui = Ui::new(std::io::stderr().is_terminal());
    let client = TasksClient::connect(options(&args, &url)).await.map_err(explained)?.with_book(book);
    let responder = TerminalResponder::new(ui.clone());
    let started = client.start(&tool, arguments, &responder, &ui).await.map_err(explained)?;
    let code = match started {
        Started::Complete(outcome) => report(&ui, &outcome, args.json, None),
        Started::Task(handle) => follow(&client, &handle, &responder, &ui, args.json, None).await?,
    };
    ui.finish();
    Ok(ExitCode::from(code))
}

fn parse_pacing(s: &str) -> Result<PacingMode, String> {
    s.parse().map_err(|e: mcp_tasks_core::pacing::UnknownPacing| e.to_string())
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err("must be longer than zero".to_owned());
    }
    Ok(d)
}

fn options(args: &Args, url: &str) -> ClientOptions {
    let mut o = ClientOptions::new(url);
    o.bearer_token = args.token.clone();
    o.pacing = args.pacing;
    o.request_timeout = Some(args.request_timeout);
    if let Some(max) = args.max_poll_ms {
        o.poll.max_ms = max as f64;
        o.poll.initial_ms = o.poll.initial_ms.min(o.poll.max_ms);
    }
    o
}

/// Follows every unfinished handle, grouped by server, oldest first.
async fn resume(args: &Args, book: HandleBook, ui: &Ui) -> anyhow::Result<ExitCode> {
    let handles = book.unfinished(args.url.as_deref())?;
    if handles.is_empty() {
        ui.line(&format!("no unfinished task handles in {}", book.path().display()));
        return Ok(ExitCode::from(EXIT_OK));
    }
    let mut by_url: BTreeMap<String, Vec<HandleRecord>> = BTreeMap::new();
    for h in handles {
        by_url.entry(h.server_url.clone()).or_default().push(h);
    }
    let mut worst = EXIT_OK;
    for (url, records) in by_url {
        let client = TasksClient::connect(options(args, &url)).await.map_err(explained)?.with_book(book.clone());
        let responder = TerminalResponder::new(ui.clone());
        for record in records {
            ui.line(&format!("resuming task {} ({}) on {url}", record.task_id, record.tool));
            let handle = TaskHandle::from_record(&record);
            let code = follow(&client, &handle, &responder, ui, args.json, Some(&record)).await?;
            worst = worst.max(code);
            if code == EXIT_INTERRUPTED {
                ui.finish();
                return Ok(ExitCode::from(code));
            }
        }
    }
    ui.finish();
    Ok(ExitCode::from(worst))
}

/// Follows one task; the first Ctrl-C sends `tasks/cancel`, the second stops waiting.
async fn follow(
    client: &TasksClient,
    handle: &TaskHandle,
    responder: &TerminalResponder,
    ui: &Ui,
    json_out: bool,
    resumed: Option<&HandleRecord>,
) -> anyhow::Result<u8> {
    let follow = client.follow(handle, responder, ui);
    tokio::pin!(follow);
    let mut cancel_sent = false;
    let result = loop {
        tokio::select! {
            r = &mut follow => break r,
            _ = tokio::signal::ctrl_c() => {
                if cancel_sent {
                    ui.line(&format!(
                        "stopped waiting; task {} keeps its handle: `mcp-tasks call --resume {}`",
                        handle.task_id, client.url()
                    ));
                    return Ok(EXIT_INTERRUPTED);
                }
                cancel_sent = true;
                ui.line(&format!("cancelling task {} (Ctrl-C again to stop waiting)", handle.task_id));
                if let Err(e) = client.cancel(&handle.task_id).await {
                    ui.line(&format!("tasks/cancel failed: {e}"));
                }
            }
        }
    };
    match result {
        Ok(outcome) => Ok(report(ui, &outcome, json_out, resumed)),
        Err(e @ ClientError::TaskNotFound { .. }) => {
            ui.line(&format!("error: {e}"));
            if json_out {
                let mut v = json!({ "status": "lost", "taskId": handle.task_id, "error": e.to_string() });
                add_context(&mut v, resumed);
                ui.result(&v.to_string());
            }
            Ok(EXIT_LOST)
        }
        Err(e) => Err(explained(e)),
    }
}

/// A client error as the one line the CLI prints: the client's own text
/// (which already names the cause; its sources would only repeat it), plus
/// the flag that fixes it where there is one.
pub(super) fn explained(e: ClientError) -> anyhow::Error {
    let failure = match &e {
        ClientError::Connect { failure, .. } | ClientError::Transport { failure, .. } => Some(failure),
        _ => None,
    };
    let hint = match failure {
        Some(TransportFailure::Unauthorized { token_sent: false }) => Some("pass --token or set MCP_TASKS_TOKEN"),
        Some(TransportFailure::Unauthorized { token_sent: true } | TransportFailure::Forbidden) => {
            Some("check the token given by --token or MCP_TASKS_TOKEN")
        }
        _ => None,
    };
    match hint {
        Some(hint) => anyhow::anyhow!("{e}; {hint}"),
        None => anyhow::anyhow!("{e}"),
    }
}

fn add_context(v: &mut Value, resumed: Option<&HandleRecord>) {
    if let (Some(r), Some(obj)) = (resumed, v.as_object_mut()) {
        obj.insert("serverUrl".into(), json!(r.server_url));
        obj.insert("tool".into(), json!(r.tool));
    }
}

/// Prints the outcome (result text on stdout, or JSON) and picks the exit code.
fn report(ui: &Ui, outcome: &TaskOutcome, json_out: bool, resumed: Option<&HandleRecord>) -> u8 {
    if json_out {
        let mut v = outcome.to_json();
        add_context(&mut v, resumed);
        ui.result(&v.to_string());
    }
    match outcome {
        TaskOutcome::Completed { .. } => {
            if !json_out {
                ui.result(&outcome.text().unwrap_or_default());
            }
            if outcome.is_tool_error() {
                ui.line("the tool reported an error (isError: true)");
                EXIT_TOOL_ERROR
            } else {
                EXIT_OK
            }
        }
        TaskOutcome::Failed { task_id, error } => {
            ui.line(&format!("task {task_id} failed: JSON-RPC error {}: {}", error.code.0, error.message));
            EXIT_FAILED
        }
        TaskOutcome::Cancelled { task_id } => {
            ui.line(&format!("task {task_id} was cancelled"));
            EXIT_CANCELLED
        }
    }
}

/// Status display: a spinner when stderr is a terminal, plain lines otherwise.
#[derive(Clone)]
struct Ui {
    bar: Option<ProgressBar>,
}

impl Ui {
    fn new(terminal: bool) -> Self {
        let bar = terminal.then(|| {
            // Cleared, not left behind, however `call` ends (an error included).
            let bar =
                ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_finish(ProgressFinish::AndClear);
            bar.set_style(
                ProgressStyle::with_template("{spinner} {wide_msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar.set_message("calling…");
            bar
        });
        Ui { bar }
    }

    /// A line that stays (above the spinner when there is one).
    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    /// The result, on stdout. The spinner is taken off the terminal while it
    /// prints (and drawn again below it), so no spinner line stays above it.
    fn result(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| println!("{text}")),
            None => println!("{text}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn status(&self, task_id: &str, status: TaskStatus, message: Option<&str>) {
        let text = status_line(task_id, status, message);
        match &self.bar {
            Some(bar) => bar.set_message(text),
            None => eprintln!("{text}"),
        }
    }
}

impl TaskObserver for Ui {
    fn on_event(&self, event: &TaskEvent) {
        match event {
            TaskEvent::Created { task_id, status, status_message } => {
                self.line(&format!("task {task_id} created"));
                self.status(task_id, *status, status_message.as_deref());
            }
            TaskEvent::Status { task_id, status, status_message } => {
                self.status(task_id, *status, status_message.as_deref())
            }
            TaskEvent::Unreachable { error, .. } => self.line(&format!("server unreachable, still trying: {error}")),
            TaskEvent::InputAnswered { keys, .. } => self.line(&format!("sent answers: {}", keys.join(", "))),
            TaskEvent::Waiting { .. } => {}
        }
    }
}

/// Asks elicitation questions on the terminal: prints the message, reads one
/// line per requested field. With no terminal on stdin, or at end of input, it
/// declines. Roots: none. Sampling: not answered (no model here).
struct TerminalResponder {
    ui: Ui,
    interactive: bool,
    /// One question at a time.
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl TerminalResponder {
    fn new(ui: Ui) -> Self {
        TerminalResponder { ui, interactive: std::io::stdin().is_terminal(), lock: Arc::default() }
    }
}

#[mcp_tasks_client::async_trait]
impl InputResponder for TerminalResponder {
    async fn respond(&self, prompt: &InputPrompt) -> Option<Value> {
        match &prompt.request {
            InputRequest::Elicitation(_) => {}
            InputRequest::ListRoots(_) => return Some(json!({ "roots": [] })),
            _ => {
                self.ui.line(&format!(
                    "the server asked for {} ({}); this client cannot answer it",
                    prompt.key,
                    method(prompt)
                ));
                return None;
            }
        }
        let params = serde_json::to_value(&prompt.request).ok()?.get("params").cloned().unwrap_or(Value::Null);
        if !self.interactive {
            self.ui.line(&format!(
                "declined input request {} (stdin is not a terminal): {}",
                prompt.key,
                params["message"].as_str().unwrap_or("")
            ));
            return Some(elicit_decline());
        }
        let _one_at_a_time = self.lock.lock().await;
        let bar = self.ui.bar.clone();
        let ask = move || match &bar {
            Some(bar) => bar.suspend(|| ask_on_terminal(&params)),
            None => ask_on_terminal(&params),
        };
        tokio::task::spawn_blocking(ask).await.unwrap_or_else(|_| elicit_decline()).into()
    }
}

fn method(prompt: &InputPrompt) -> String {
    serde_json::to_value(&prompt.request)
        .ok()
        .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "an unknown request".to_owned())
}

/// One elicitation on the terminal; decline on end of input or an empty required field.
fn ask_on_terminal(params: &Value) -> Value {
    let mut err = std::io::stderr();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let _ = writeln!(err, "\n{}", params["message"].as_str().unwrap_or("The server asks for input."));
    if let Some(url) = params["url"].as_str() {
        let _ = write!(err, "Open {url} and press Enter when done (Ctrl-D to decline): ");
        let _ = err.flush();
        return match lines.next() {
            Some(Ok(_)) => json!({ "action": "accept" }),
            _ => elicit_decline(),
        };
    }
    let schema = &params["requestedSchema"];
    let required: Vec<&str> =
        schema["required"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let mut content = Map::new();
    for (name, field) in schema["properties"].as_object().cloned().unwrap_or_default() {
        let is_required = required.contains(&name.as_str());
        loop {
            let _ = write!(err, "{}", field_prompt(&name, &field, is_required));
            let _ = err.flush();
            let Some(Ok(line)) = lines.next() else { return elicit_decline() };
            let line = line.trim();
            if line.is_empty() {
                if is_required {
                    return elicit_decline();
                }
                break;
            }
            match parse_field(line, &field) {
                Ok(v) => {
                    content.insert(name.clone(), v);
                    break;
                }
                Err(why) => {
                    let _ = writeln!(err, "  {why}; try again");
                }
            }
        }
    }
    elicit_accept(Value::Object(content))
}

fn field_prompt(name: &str, field: &Value, required: bool) -> String {
    let title = field["title"].as_str().unwrap_or(name);
    let kind = match field["enum"].as_array() {
        Some(options) => options
            .iter()
            .map(|o| o.as_str().map(str::to_owned).unwrap_or_else(|| o.to_string()))
            .collect::<Vec<_>>()
            .join("/"),
        None => match field["type"].as_str().unwrap_or("string") {
            "boolean" => "y/n".to_owned(),
            other => other.to_owned(),
        },
    };
    let hint = if required { "empty declines" } else { "empty skips" };
    match field["description"].as_str() {
        Some(d) => format!("{title} ({d}) [{kind}, {hint}]: "),
        None => format!("{title} [{kind}, {hint}]: "),
    }
}

/// Turns a typed line into the JSON the field's schema asks for.
fn parse_field(line: &str, field: &Value) -> Result<Value, String> {
    if let Some(options) = field["enum"].as_array() {
        return options
            .iter()
            .find(|o| o.as_str() == Some(line))
            .cloned()
            .ok_or_else(|| "not one of the choices".to_owned());
    }
    match field["type"].as_str().unwrap_or("string") {
        "boolean" => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer y or n".to_owned()),
        },
        "integer" => line.parse::<i64>().map(Value::from).map_err(|_| "not an integer".to_owned()),
        "number" => line
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "not a number".to_owned()),
        _ => Ok(Value::String(line.to_owned())),
    }
}

/// `task ID: STATUS — MESSAGE`, without a message that only repeats the
/// status (a completed task's message is "completed").
fn status_line(task_id: &str, status: TaskStatus, message: Option<&str>) -> String {
    match message.filter(|m| *m != status.as_str()) {
        Some(m) => format!("task {task_id}: {} — {m}", status.as_str()),
        None => format!("task {task_id}: {}", status.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use mcp_tasks_client::DEFAULT_REQUEST_TIMEOUT;
    use mcp_tasks_core::{Clock, Follow, FollowStep, HintPolicy, ManualClock, PyRandom, ServerHints, Timestamp};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parsed(flags: &[&str]) -> Args {
        let argv = ["call", "http://127.0.0.1:1/mcp", "long_running_report"].iter().chain(flags);
        Cli::try_parse_from(argv).expect("flags parse").args
    }

    /// Polls and staleness of `call`'s client (`options` as the flags give
    /// them) following a task that completes `duration_s` after creation,
    /// under a manual clock: the server answers `working` with `hints` until
    /// a poll comes at or after the completion. Seeds 0–19 and the study's 11
    /// phases, as Table 6 runs them; returns (mean polls, median staleness s).
    fn measure(options: &ClientOptions, duration_s: f64, hints: ServerHints) -> (f64, f64) {
        let (mut polls, mut stale) = (Vec::new(), Vec::new());
        for seed in 0..20 {
            for phase in mcp_tasks_study::e2::phases(11) {
                let done_at = duration_s * phase;
                let clock = ManualClock::new(Timestamp::from_secs(1_000_000));
                let mut follow = Follow::new(&options.follow_config(), PyRandom::new(seed));
                let (mut elapsed, mut n) = (0.0f64, 0u32);
                let mut step = follow.start(clock.now(), hints);
                while let FollowStep::Poll { at, delay_ms } = step {
                    elapsed += delay_ms / 1000.0;
                    n += 1;
                    clock.set(at);
                    let status = if elapsed >= done_at { TaskStatus::Completed } else { TaskStatus::Working };
                    step = follow.on_answer(clock.now(), status, hints);
                }
                assert_eq!(step, FollowStep::Done { status: TaskStatus::Completed });
                polls.push(f64::from(n));
                stale.push(elapsed - done_at);
            }
        }
        (mcp_tasks_study::stats::mean(&polls), mcp_tasks_study::stats::median(&stale))
    }

    #[tokio::test]
    async fn by_default_call_paces_by_the_hint_and_measures_as_table_6() {
        let args = parsed(&[]);
        assert_eq!(args.pacing, PacingMode::HintPaced);
        assert_eq!(args.request_timeout, DEFAULT_REQUEST_TIMEOUT);
        let shipped = options(&args, "http://127.0.0.1:1/mcp");
        assert_eq!(shipped.pacing, PacingMode::HintPaced);
        // Table 6a's hint-paced row, as published: (duration, polls, stale p50, of task).
        for (d, want_polls, want_stale, want_share) in [(60.0, "67.4", "0.46", "0.8"), (1800.0, "67.4", "13.78", "0.8")] {
            // What a real server advertises for a tool declaring this duration.
            let advertised = mcp_tasks_study::e5::advertised(&HintPolicy::default(), d).await.unwrap();
            let hints = ServerHints {
                poll_interval_ms: Some(advertised.hint_ms as u64),
                orphan_window_ms: Some(advertised.orphan_window_ms as u64),
                ttl_ms: None,
            };
            let (polls, stale) = measure(&shipped, d, hints);
            assert_eq!(format!("{polls:.1}"), want_polls, "polls on a {d} s task");
            assert_eq!(format!("{stale:.2}"), want_stale, "median staleness on a {d} s task");
            assert_eq!(format!("{:.1}", stale / d * 100.0), want_share, "staleness share on a {d} s task");
        }
        // `--pacing floor` is the paper's client: on the 30 min task its own 10 s ceiling sets the pace.
        let floor = options(&parsed(&["--pacing", "floor"]), "http://127.0.0.1:1/mcp");
        assert_eq!(floor.pacing, PacingMode::HintAsFloor);
        let hints = ServerHints { poll_interval_ms: Some(36_000), orphan_window_ms: Some(900_000), ttl_ms: None };
        let (polls, _) = measure(&floor, 1800.0, hints);
        assert!(polls > 150.0, "{polls}");
    }

    #[test]
    fn pacing_and_timeout_flags_are_checked() {
        assert_eq!(parsed(&["--request-timeout", "300ms"]).request_timeout, Duration::from_millis(300));
        let bad = Cli::try_parse_from(["call", "u", "t", "--pacing", "fast"]).err().unwrap().to_string();
        assert!(bad.contains("hint or floor"), "{bad}");
        let zero = Cli::try_parse_from(["call", "u", "t", "--request-timeout", "0s"]).err().unwrap().to_string();
        assert!(zero.contains("longer than zero"), "{zero}");
    }

    #[test]
    fn a_status_line_does_not_repeat_the_status() {
        assert_eq!(status_line("t1", TaskStatus::Completed, Some("completed")), "task t1: completed");
        assert_eq!(status_line("t1", TaskStatus::Working, Some("section 2 of 5")), "task t1: working — section 2 of 5");
        assert_eq!(status_line("t1", TaskStatus::Failed, None), "task t1: failed");
    }

    #[test]
    fn fields_parse_by_their_schema_type() {
        assert_eq!(parse_field("Yes", &json!({"type": "boolean"})), Ok(json!(true)));
        assert_eq!(parse_field("n", &json!({"type": "boolean"})), Ok(json!(false)));
        assert!(parse_field("maybe", &json!({"type": "boolean"})).is_err());
        assert_eq!(parse_field("42", &json!({"type": "integer"})), Ok(json!(42)));
        assert!(parse_field("4.2", &json!({"type": "integer"})).is_err());
        assert_eq!(parse_field("4.5", &json!({"type": "number"})), Ok(json!(4.5)));
        assert_eq!(parse_field("red", &json!({"type": "string", "enum": ["red", "blue"]})), Ok(json!("red")));
        assert!(parse_field("green", &json!({"type": "string", "enum": ["red", "blue"]})).is_err());
        assert_eq!(parse_field("a b", &json!({"type": "string"})), Ok(json!("a b")));
    }
}
