//! The tasks client: calls a tool declaring the tasks extension, and follows
//! a returned task with `tasks/get` on the adaptive schedule, answering input
//! requests and recording the handle in the book.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_tasks_core::follow::DEFAULT_GIVE_UP_AFTER;
use mcp_tasks_core::{Follow, FollowConfig, FollowStep, GiveUp, PacingMode, PollPolicy, PyRandom, TaskStatus, Timestamp};
use mcp_tasks_wire::{IDEMPOTENCY_KEY_META_KEY, core_status, honours_idempotent_calls, server_hints};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig, ErrorCode, ErrorData,
    GetTaskParams, GetTaskResult, Implementation, InputRequests, InputResponses, JsonObject, ProtocolVersion,
    RequestMetaObject, TaskPayload, Tool, UpdateTaskParams,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::book::{HandleBook, HandleRecord, Resolution};
use crate::error::{BookError, ClientError};
use crate::events::{TaskEvent, TaskObserver};
use crate::failure::{Attempt, TransportFailure};
use crate::input::{InputPrompt, InputResponder};
use crate::ledger::InputLedger;
use crate::outcome::TaskOutcome;
use crate::pacer::ServerHints;
use crate::resend::{ResendSchedule, new_idempotency_key};

/// Default longest wait for the answer to one request (`server/discover`,
/// `tools/call`, `tasks/*`): a server that accepts the connection but never
/// answers is a timed-out failure, not a hang.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Default cap on `tools/call` input rounds (rmcp's own default).
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// How to reach a server and how to pace polls.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`.
    pub url: String,
    /// A bearer token sent as `Authorization: Bearer …`.
    pub bearer_token: Option<String>,
    /// How the server's `pollIntervalMs` sets the pace: by default the hint
    /// *is* the pace ([`PacingMode::HintPaced`], what the study's E5 measures:
    /// about 67 polls and 0.8 % staleness at every duration), capped under half
    /// the advertised orphan window; [`PacingMode::HintAsFloor`] is the
    /// paper's client, whose own backoff (`poll`) the hint only floors.
    pub pacing: PacingMode,
    /// The client's own backoff: the whole schedule in the floor mode (its
    /// `max_ms` is then the largest gap), and the schedule until the server
    /// gives a hint when hint-paced.
    pub poll: PollPolicy,
    /// Seed for the jitter source (each followed task gets `seed + n`);
    /// `None` seeds from the operating system.
    pub jitter_seed: Option<u64>,
    /// How long to keep polling a server that does not answer.
    pub give_up_after: Duration,
    /// Cap on `tools/call` input rounds before the call becomes a result or a task.
    pub max_input_rounds: usize,
    /// Longest wait for the answer to one request; `None` waits forever.
    pub request_timeout: Option<Duration>,
}

impl ClientOptions {
    /// Defaults for `url`.
    pub fn new(url: impl Into<String>) -> Self {
        ClientOptions {
            url: url.into(),
            bearer_token: None,
            pacing: PacingMode::default(),
            poll: PollPolicy::default(),
            jitter_seed: None,
            give_up_after: DEFAULT_GIVE_UP_AFTER,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
        }
    }

    /// The configuration of the core follow loop [`TasksClient::follow`]
    /// drives; with the defaults, [`FollowConfig::default`] (the client the
    /// study's E5 measures).
    pub fn follow_config(&self) -> FollowConfig {
        FollowConfig { pacing: self.pacing, poll: self.poll.clone(), give_up_after: self.give_up_after }
    }
}

/// A task the server created for a call: what the client needs to follow it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskHandle {
    /// The server's task id.
    pub task_id: String,
    /// The tool that was called.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// The last status seen.
    pub status: TaskStatus,
    /// The last status message seen.
    pub status_message: Option<String>,
    /// The server's latest hints (poll interval, TTL, orphan window).
    pub hints: ServerHints,
}

impl TaskHandle {
    /// A handle rebuilt from the book, for resuming.
    pub fn from_record(record: &HandleRecord) -> Self {
        TaskHandle {
            task_id: record.task_id.clone(),
            tool: record.tool.clone(),
            arguments: record.arguments.clone(),
            status: record.last_status.parse().unwrap_or(TaskStatus::Working),
            status_message: record.status_message.clone(),
            hints: ServerHints::default(),
        }
    }
}

/// What `tools/call` gave back.
#[derive(Debug, Clone, PartialEq)]
pub enum Started {
    /// The server answered at once (no task).
    Complete(TaskOutcome),
    /// The server created a task.
    Task(TaskHandle),
}

type Service = RunningService<RoleClient, ClientConfig>;

/// A client of one MCP server, speaking 2026-07-28 and declaring the tasks
/// extension on every request. Reconnects (re-discovers) by itself after a
/// transport failure, so a server restart does not end a follow.
pub struct TasksClient {
    options: ClientOptions,
    service: Mutex<Option<Arc<Service>>>,
    supports_tasks: std::sync::atomic::AtomicBool,
    book: Option<HandleBook>,
    followed: AtomicU64,
}

impl std::fmt::Debug for TasksClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TasksClient").field("url", &self.options.url).field("book", &self.book).finish_non_exhaustive()
    }
}

/// The capabilities this client declares: the tasks extension and form elicitation.
pub fn client_capabilities() -> ClientCapabilities {
    let caps = json!({
        "extensions": { rmcp::model::TASKS_EXTENSION_ID: {} },
        "elicitation": { "form": {} },
        "roots": {},
    });
    serde_json::from_value(caps).unwrap_or_default()
}

fn is_http_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let rest = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/'))
}

fn error_data(error: JsonObject) -> ErrorData {
    let raw = Value::Object(error);
    serde_json::from_value(raw.clone()).unwrap_or_else(|_| ErrorData {
        code: ErrorCode::INTERNAL_ERROR,
        message: "the server's task error is not a JSON-RPC error object".into(),
        data: Some(raw),
    })
}

impl TasksClient {
    /// Connects to `options.url` (`server/discover`, protocol 2026-07-28).
    pub async fn connect(options: ClientOptions) -> Result<Self, ClientError> {
        if !is_http_url(&options.url) {
            return Err(ClientError::InvalidUrl { url: options.url.clone() });
        }
        let client = TasksClient {
            options,
            service: Mutex::new(None),
            supports_tasks: std::sync::atomic::AtomicBool::new(false),
            book: None,
            followed: AtomicU64::new(0),
        };
        client.service().await?;
        Ok(client)
    }

    /// Records every task handle in `book` from now on.
    pub fn with_book(mut self, book: HandleBook) -> Self {
        self.book = Some(book);
        self
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.options.url
    }

    /// The options in force.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// The handle book, if one is attached.
    pub fn book(&self) -> Option<&HandleBook> {
        self.book.as_ref()
    }

    /// Whether the server advertised the tasks extension at the last discovery.
    pub fn server_supports_tasks(&self) -> bool {
        self.supports_tasks.load(Ordering::Relaxed)
    }

    /// Ends the session.
    pub async fn close(self) {
        if let Some(service) = self.service.lock().await.take()
            && let Ok(service) = Arc::try_unwrap(service)
        {
            let _ = service.cancel().await;
        }
    }

    async fn service(&self) -> Result<Arc<Service>, ClientError> {
        let mut slot = self.service.lock().await;
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.options.url.clone());
        if let Some(token) = &self.options.bearer_token {
            config = config.auth_header(token.clone());
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let info =
            ClientConfig::new(client_capabilities(), Implementation::new("mcp-tasks-client", env!("CARGO_PKG_VERSION")));
        let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        let service = match self.timed(info.serve_with_lifecycle(transport, lifecycle)).await {
            Ok(r) => r.map_err(|e| ClientError::from_initialize(self.attempt(), &e))?,
            Err(_) => {
                return Err(ClientError::Connect { url: self.options.url.clone(), failure: TransportFailure::TimedOut });
            }
        };
        let supports = service.peer().peer_info().is_some_and(|p| p.capabilities.supports_tasks());
        self.supports_tasks.store(supports, Ordering::Relaxed);
        let service = Arc::new(service);
        *slot = Some(service.clone());
        Ok(service)
    }

    /// Drops a session whose transport failed, so the next call reconnects.
    async fn forget(&self, broken: &Arc<Service>) {
        let mut slot = self.service.lock().await;
        if slot.as_ref().is_some_and(|s| Arc::ptr_eq(s, broken)) {
            *slot = None;
        }
    }

    /// What error classification needs to know about this client's requests.
    fn attempt(&self) -> Attempt<'_> {
        Attempt { url: &self.options.url, token_sent: self.options.bearer_token.is_some() }
    }

    /// `fut` within [`ClientOptions::request_timeout`].
    async fn timed<T>(&self, fut: impl Future<Output = T>) -> Result<T, tokio::time::error::Elapsed> {
        match self.options.request_timeout {
            Some(limit) => tokio::time::timeout(limit, fut).await,
            None => Ok(fut.await),
        }
    }

    /// A request's answer (or its timing out) as the client's result. A
    /// transient failure drops the session, so the next request reconnects.
    async fn checked<T>(
        &self,
        service: &Arc<Service>,
        method: &'static str,
        task_id: Option<&str>,
        r: Result<Result<T, rmcp::ServiceError>, tokio::time::error::Elapsed>,
    ) -> Result<T, ClientError> {
        let e = match r {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => ClientError::from_service(method, self.attempt(), task_id, e),
            Err(_) => ClientError::Transport { method, url: self.options.url.clone(), failure: TransportFailure::TimedOut },
        };
        if e.is_transient() {
            self.forget(service).await;
        }
        Err(e)
    }

    /// `tools/list`, every page: the server's tools as it lists them. Each
    /// tool's task support (required, optional, forbidden) is
    /// [`TaskSupport::of`](mcp_tasks_wire::TaskSupport::of) its entry.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let s = self.service().await?;
        let r = self.timed(s.peer().list_all_tools()).await;
        self.checked(&s, "tools/list", None, r).await
    }

    /// `tasks/get`: the task's current state, as the server sent it.
    pub async fn get(&self, task_id: &str) -> Result<GetTaskResult, ClientError> {
        let s = self.service().await?;
        let r = self.timed(s.peer().get_task(GetTaskParams::new(task_id))).await;
        self.checked(&s, "tasks/get", Some(task_id), r).await
    }

    /// `tasks/cancel`: asks the server to cancel; acknowledged at once,
    /// cooperative (the task may still complete). Follow it to see the end.
    pub async fn cancel(&self, task_id: &str) -> Result<(), ClientError> {
        let s = self.service().await?;
        let r = self.timed(s.peer().cancel_task(CancelTaskParams::new(task_id))).await;
        self.checked(&s, "tasks/cancel", Some(task_id), r).await
    }

    /// `tasks/update`: delivers answers to input requests.
    pub async fn answer(&self, task_id: &str, responses: InputResponses) -> Result<(), ClientError> {
        let s = self.service().await?;
        let r = self.timed(s.peer().update_task(UpdateTaskParams::new(task_id, responses))).await;
        self.checked(&s, "tasks/update", Some(task_id), r).await
    }

    /// Calls `tool`, answering `tools/call` input rounds through `responder`,
    /// until the server either answers or creates a task (recorded in the book).
    ///
    /// Every call carries a fresh idempotency key in `_meta`
    /// ([`IDEMPOTENCY_KEY_META_KEY`]). When the answer is lost to a transient
    /// transport failure (a balancer's 502 after the instance died, a
    /// dropped connection, a timeout) and the server lists `tool` among those
    /// whose keyed calls it deduplicates, the same call is sent again, waiting
    /// 100 ms doubling to 2 s, for up to [`ClientOptions::give_up_after`]: the
    /// server returns the task the first send created, or creates it once.
    /// Any other tool's call is not resent: it may already have run.
    pub async fn start(
        &self,
        tool: &str,
        arguments: Value,
        responder: &dyn InputResponder,
        observer: &dyn TaskObserver,
    ) -> Result<Started, ClientError> {
        let args = match &arguments {
            Value::Object(m) => m.clone(),
            Value::Null => JsonObject::new(),
            other => return Err(ClientError::ArgumentsNotAnObject { got: mcp_tasks_wire::json_kind(other) }),
        };
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        let mut meta = RequestMetaObject::default();
        meta.0.insert(IDEMPOTENCY_KEY_META_KEY.to_owned(), Value::from(new_idempotency_key()));
        params.meta = Some(meta);
        for _ in 0..self.options.max_input_rounds {
            match self.send_call(tool, &params).await? {
                CallToolResponse::Complete(result) => {
                    let result = serde_json::to_value(&result).map_err(|e| ClientError::Protocol {
                        method: "tools/call",
                        detail: format!("result does not serialise: {e}"),
                    })?;
                    return Ok(Started::Complete(TaskOutcome::Completed { task_id: None, result }));
                }
                CallToolResponse::Task(created) => {
                    let handle = TaskHandle {
                        task_id: created.task.task_id.clone(),
                        tool: tool.to_owned(),
                        arguments: if arguments.is_null() { json!({}) } else { arguments.clone() },
                        status: core_status(created.task.status),
                        status_message: created.task.status_message.clone(),
                        hints: server_hints(&created.task, created.meta.as_ref()),
                    };
                    self.record_handle(&handle).await?;
                    observer.on_event(&TaskEvent::Created {
                        task_id: handle.task_id.clone(),
                        status: handle.status,
                        status_message: handle.status_message.clone(),
                    });
                    return Ok(Started::Task(handle));
                }
                CallToolResponse::InputRequired(round) => {
                    let requests = round.input_requests.unwrap_or_default();
                    let mut responses = InputResponses::new();
                    for (key, request) in requests {
                        let prompt = InputPrompt { task_id: None, tool: tool.to_owned(), key: key.clone(), request };
                        if let Some(answer) = responder.respond(&prompt).await {
                            responses.insert(key, answer);
                        }
                    }
                    if !responses.is_empty() {
                        observer.on_event(&TaskEvent::InputAnswered {
                            task_id: None,
                            keys: responses.keys().cloned().collect(),
                        });
                    }
                    let responses = (!responses.is_empty()).then_some(responses);
                    // A stateless server given the very same request answers the
                    // same way: resending identical answers to an identical
                    // question would only loop until the round cap.
                    if params.input_responses.is_some()
                        && responses == params.input_responses
                        && round.request_state == params.request_state
                    {
                        let keys = responses.map(|r| r.into_keys().collect()).unwrap_or_default();
                        return Err(ClientError::InputNotAccepted { keys });
                    }
                    params.input_responses = responses;
                    params.request_state = round.request_state;
                }
                _ => {
                    return Err(ClientError::Protocol {
                        method: "tools/call",
                        detail: "an unknown kind of tools/call result".to_owned(),
                    });
                }
            }
        }
        Err(ClientError::TooManyInputRounds { rounds: self.options.max_input_rounds })
    }

    /// One round of a `tools/call`, sent again while its answer is lost to a
    /// transient failure and the server deduplicates `tool`'s keyed calls.
    async fn send_call(&self, tool: &str, params: &CallToolRequestParams) -> Result<CallToolResponse, ClientError> {
        let mut resends = ResendSchedule::new(self.options.give_up_after);
        let mut sent = false;
        loop {
            let error = match self.service().await {
                Ok(s) => {
                    let honoured = s.peer().peer_info().is_some_and(|p| honours_idempotent_calls(&p.capabilities, tool));
                    let r = self.timed(s.peer().call_tool_once(params.clone())).await;
                    match self.checked(&s, "tools/call", None, r).await {
                        Ok(response) => return Ok(response),
                        // Not sent twice unless the server promised to make
                        // the second send return the first one's task.
                        Err(e) if !honoured => return Err(e),
                        Err(e) => e,
                    }
                }
                // Before the first send nothing happened: the caller decides.
                Err(e) if !sent => return Err(e),
                Err(e) => e,
            };
            sent = true;
            match resends.next_delay() {
                Some(delay) if error.is_transient() => {
                    tracing::info!(tool, error = %error, ?delay, "the answer to tools/call was lost; sending the same keyed call again");
                    tokio::time::sleep(delay).await;
                }
                _ => return Err(error),
            }
        }
    }

    /// [`TasksClient::start`], then [`TasksClient::follow`] to the end.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        responder: &dyn InputResponder,
        observer: &dyn TaskObserver,
    ) -> Result<TaskOutcome, ClientError> {
        match self.start(tool, arguments, responder, observer).await? {
            Started::Complete(outcome) => Ok(outcome),
            Started::Task(handle) => self.follow(&handle, responder, observer).await,
        }
    }

    /// Polls `tasks/get` until the task is terminal, when and for as long as
    /// the core's follow loop ([`Follow`], configured by
    /// [`ClientOptions::follow_config`]) decides: by default at the server's
    /// `pollIntervalMs` pace, jittered, never more than half the orphan window
    /// (else `ttlMs`) apart. New input keys go to `responder` once each;
    /// answers go back with `tasks/update` (resent until acknowledged).
    /// Transient transport failures are retried until the server has been
    /// unreachable for [`ClientOptions::give_up_after`]; a failure asking again
    /// cannot fix (HTTP 401, 403, 404, not MCP, ...) ends the follow at once.
    pub async fn follow(
        &self,
        handle: &TaskHandle,
        responder: &dyn InputResponder,
        observer: &dyn TaskObserver,
    ) -> Result<TaskOutcome, ClientError> {
        let task_id = handle.task_id.as_str();
        let mut machine = Follow::new(&self.options.follow_config(), self.jitter_source());
        // The machine only compares the instants it is given: a monotonic
        // count from the start of this follow, immune to wall-clock steps.
        let origin = Instant::now();
        let now = || Timestamp::from_millis(i64::try_from(origin.elapsed().as_millis()).unwrap_or(i64::MAX));
        let answered = self.book_op({
            let (url, id) = (self.options.url.clone(), handle.task_id.clone());
            move |b| b.answered(&url, &id)
        });
        let mut ledger = InputLedger::with_acknowledged(answered.await?.unwrap_or_default());
        let mut last_seen = (handle.status, handle.status_message.clone());
        let mut step = machine.start(now(), handle.hints);
        loop {
            let delay = match step {
                FollowStep::Poll { .. } => step.delay().unwrap_or_default(),
                // The machine ends a follow only from an answer or a failure, handled below.
                FollowStep::Done { .. } | FollowStep::GiveUp(_) => {
                    return Err(ClientError::Protocol {
                        method: "tasks/get",
                        detail: "the follow loop stopped without an outcome".to_owned(),
                    });
                }
            };
            observer.on_event(&TaskEvent::Waiting { task_id: task_id.to_owned(), delay });
            tokio::time::sleep(delay).await;
            let got = match self.get(task_id).await {
                Ok(got) => got,
                Err(e) => {
                    let Some(failure) = e.transport_failure() else {
                        if let ClientError::TaskNotFound { .. } = e {
                            self.resolve_handle(task_id, Resolution::Lost).await;
                        }
                        return Err(e);
                    };
                    step = machine.on_failure(now(), failure.is_transient());
                    match step {
                        FollowStep::Poll { .. } => {
                            observer.on_event(&TaskEvent::Unreachable { task_id: task_id.to_owned(), error: e.to_string() });
                            continue;
                        }
                        FollowStep::GiveUp(GiveUp::Unreachable { waited, .. }) => {
                            return Err(ClientError::Unreachable {
                                task_id: task_id.to_owned(),
                                waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                                last_error: e.to_string(),
                            });
                        }
                        FollowStep::GiveUp(GiveUp::NotTransient) | FollowStep::Done { .. } => return Err(e),
                    }
                }
            };
            let status = core_status(got.task.status());
            step = machine.on_answer(now(), status, server_hints(&got.task.task, got.meta.as_ref()));
            let seen = (status, got.task.task.status_message.clone());
            if seen != last_seen {
                observer.on_event(&TaskEvent::Status {
                    task_id: task_id.to_owned(),
                    status: seen.0,
                    status_message: seen.1.clone(),
                });
                if seen.0.is_live() {
                    self.note_status(task_id, seen.0, seen.1.clone()).await;
                }
                last_seen = seen;
            }
            match got.task.payload {
                TaskPayload::Completed { result } => {
                    self.resolve_handle(task_id, Resolution::Terminal(TaskStatus::Completed)).await;
                    return Ok(TaskOutcome::Completed { task_id: Some(task_id.to_owned()), result: Value::Object(result) });
                }
                TaskPayload::Failed { error } => {
                    self.resolve_handle(task_id, Resolution::Terminal(TaskStatus::Failed)).await;
                    return Ok(TaskOutcome::Failed { task_id: task_id.to_owned(), error: error_data(error) });
                }
                TaskPayload::Cancelled => {
                    self.resolve_handle(task_id, Resolution::Terminal(TaskStatus::Cancelled)).await;
                    return Ok(TaskOutcome::Cancelled { task_id: task_id.to_owned() });
                }
                TaskPayload::InputRequired { input_requests } => {
                    self.answer_inputs(handle, &input_requests, &mut ledger, responder, observer).await?;
                }
                _ => {}
            }
        }
    }

    /// Asks `responder` for the keys not yet handled and sends every answer
    /// not yet acknowledged. A transport failure keeps them for the next poll.
    async fn answer_inputs(
        &self,
        handle: &TaskHandle,
        requests: &InputRequests,
        ledger: &mut InputLedger,
        responder: &dyn InputResponder,
        observer: &dyn TaskObserver,
    ) -> Result<(), ClientError> {
        for key in ledger.to_ask(requests.keys()) {
            let Some(request) = requests.get(&key).cloned() else { continue };
            let prompt =
                InputPrompt { task_id: Some(handle.task_id.clone()), tool: handle.tool.clone(), key: key.clone(), request };
            match responder.respond(&prompt).await {
                Some(answer) => ledger.answer(key, answer),
                None => ledger.skip(key),
            }
        }
        let unsent = ledger.unsent();
        if unsent.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = unsent.keys().cloned().collect();
        match self.answer(&handle.task_id, unsent).await {
            Ok(()) => {
                ledger.acknowledge(&keys);
                let (url, id, k) = (self.options.url.clone(), handle.task_id.clone(), keys.clone());
                if let Err(e) = self.book_op(move |b| b.record_answered(&url, &id, &k)).await {
                    tracing::warn!(task_id = %handle.task_id, error = %e, "could not note answered input keys");
                }
                observer.on_event(&TaskEvent::InputAnswered { task_id: Some(handle.task_id.clone()), keys });
                Ok(())
            }
            Err(e) if e.is_transient() => {
                observer.on_event(&TaskEvent::Unreachable { task_id: handle.task_id.clone(), error: e.to_string() });
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// The unfinished handles in the book for this server (empty without a book).
    pub async fn unfinished(&self) -> Result<Vec<HandleRecord>, ClientError> {
        let url = self.options.url.clone();
        Ok(self.book_op(move |b| b.unfinished(Some(&url))).await?.unwrap_or_default())
    }

    /// Follows every unfinished handle in the book for this server, one after
    /// another (so input questions never interleave), oldest first.
    pub async fn resume(
        &self,
        responder: &dyn InputResponder,
        observer: &dyn TaskObserver,
    ) -> Result<Vec<(HandleRecord, Result<TaskOutcome, ClientError>)>, ClientError> {
        let mut out = Vec::new();
        for record in self.unfinished().await? {
            let outcome = self.follow(&TaskHandle::from_record(&record), responder, observer).await;
            out.push((record, outcome));
        }
        Ok(out)
    }

    fn jitter_source(&self) -> PyRandom {
        let n = self.followed.fetch_add(1, Ordering::Relaxed);
        match self.options.jitter_seed {
            Some(seed) => PyRandom::new(seed.wrapping_add(n)),
            None => PyRandom::new(seed_from_os()),
        }
    }

    /// Runs a book call off the async threads; `Ok(None)` when there is no book.
    async fn book_op<T: Send + 'static>(
        &self,
        f: impl FnOnce(&HandleBook) -> Result<T, BookError> + Send + 'static,
    ) -> Result<Option<T>, BookError> {
        let Some(book) = self.book.clone() else { return Ok(None) };
        tokio::task::spawn_blocking(move || f(&book)).await.map_err(|e| BookError::Worker(e.to_string()))?.map(Some)
    }

    async fn record_handle(&self, handle: &TaskHandle) -> Result<(), ClientError> {
        let (url, h) = (self.options.url.clone(), handle.clone());
        self.book_op(move |b| b.record(&url, &h.task_id, &h.tool, &h.arguments, h.status, h.status_message.as_deref()))
            .await
            .map_err(|source| ClientError::Unrecorded { task_id: handle.task_id.clone(), source })?;
        Ok(())
    }

    /// Book updates after the handle is recorded only refine it; a failure is
    /// logged rather than ending a follow that can still deliver the result.
    async fn note_status(&self, task_id: &str, status: TaskStatus, message: Option<String>) {
        let (url, id) = (self.options.url.clone(), task_id.to_owned());
        if let Err(e) = self.book_op(move |b| b.update_status(&url, &id, status, message.as_deref())).await {
            tracing::warn!(task_id, error = %e, "could not note the task's status in the handle book");
        }
    }

    async fn resolve_handle(&self, task_id: &str, how: Resolution) {
        let (url, id) = (self.options.url.clone(), task_id.to_owned());
        if let Err(e) = self.book_op(move |b| b.resolve(&url, &id, how)).await {
            tracing::warn!(task_id, error = %e, "could not mark the task resolved in the handle book");
        }
    }
}

/// A jitter seed from the OS's randomness (std's hasher keys), drawn here at
/// the edge: the core's scheduler only ever gets a seeded source.
fn seed_from_os() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}
