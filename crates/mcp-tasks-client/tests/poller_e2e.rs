//! The poller against a real rmcp server over loopback HTTP.

use crate::support;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_client::rmcp::model::InputRequest;
use mcp_tasks_client::{
    ClientError, ClientOptions, DeclineAll, FnResponder, HandleBook, InputPrompt, Silent, Started, TaskEvent, TaskOutcome,
    TasksClient, elicit_accept,
};
use mcp_tasks_core::{PollPolicy, TaskStatus};
use serde_json::{Value, json};
use support::{Settings, TestServer, serve, serve_on};

fn options(url: &str) -> ClientOptions {
    let mut o = ClientOptions::new(url);
    o.poll = PollPolicy { initial_ms: 5.0, max_ms: 40.0, ..PollPolicy::default() };
    o.jitter_seed = Some(7);
    o
}

#[derive(Default, Clone)]
struct Recorder(Arc<Mutex<Vec<TaskEvent>>>);

impl Recorder {
    fn events(&self) -> Vec<TaskEvent> {
        self.0.lock().unwrap().clone()
    }
    fn observer(&self) -> impl Fn(&TaskEvent) + Send + Sync + use<> {
        let inner = self.0.clone();
        move |e: &TaskEvent| inner.lock().unwrap().push(e.clone())
    }
}

#[tokio::test]
async fn a_task_is_polled_to_completion_and_its_handle_resolved() {
    let server = TestServer::new(Settings::default());
    let running = serve(server.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let book = HandleBook::open(dir.path().join("book.db")).unwrap();
    let client = TasksClient::connect(options(&running.url)).await.unwrap().with_book(book.clone());
    assert!(client.server_supports_tasks());

    let rec = Recorder::default();
    let outcome = client.call("sum", json!({"a": 40, "b": 2}), &DeclineAll, &rec.observer()).await.unwrap();
    let task_id = outcome.task_id().expect("became a task").to_owned();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    assert_eq!(outcome.text().as_deref(), Some("42"));
    assert!(!outcome.is_tool_error());
    assert!(server.journal().gets >= 1);

    let record = book.get(&running.url, &task_id).unwrap().expect("recorded");
    assert_eq!(record.tool, "sum");
    assert_eq!(record.arguments, json!({"a": 40, "b": 2}));
    assert_eq!(record.last_status, "completed");
    assert!(record.resolved_at.is_some());
    assert!(book.unfinished(None).unwrap().is_empty());
    assert!(matches!(rec.events().first(), Some(TaskEvent::Created { .. })));
    running.stop().await;
}

#[tokio::test]
async fn a_synchronous_answer_is_returned_without_a_task() {
    let running = serve(TestServer::new(Settings::default())).await;
    let client = TasksClient::connect(options(&running.url)).await.unwrap();
    let outcome = client.call("echo", json!({"x": 1}), &DeclineAll, &Silent).await.unwrap();
    assert_eq!(outcome.task_id(), None);
    assert_eq!(outcome.text().as_deref(), Some(r#"{"x":1}"#));
    running.stop().await;
}

#[tokio::test]
async fn status_messages_are_reported_in_order() {
    let running = serve(TestServer::new(Settings { step_ms: 60, ..Settings::default() })).await;
    let client = TasksClient::connect(options(&running.url)).await.unwrap();
    let rec = Recorder::default();
    let outcome = client.call("slow", json!({"steps": 3}), &DeclineAll, &rec.observer()).await.unwrap();
    assert_eq!(outcome.text().as_deref(), Some("3 steps done"));
    let messages: Vec<String> = rec
        .events()
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Status { status_message: Some(m), status: TaskStatus::Working, .. } => Some(m.clone()),
            _ => None,
        })
        .collect();
    // Polls every ≤ 40 ms against 60 ms steps: every step is seen, in order.
    assert_eq!(messages, ["step 1 of 3", "step 2 of 3", "step 3 of 3"]);
    running.stop().await;
}

#[tokio::test]
async fn failed_and_tool_error_outcomes_are_told_apart() {
    let running = serve(TestServer::new(Settings::default())).await;
    let dir = tempfile::tempdir().unwrap();
    let book = HandleBook::open(dir.path().join("book.db")).unwrap();
    let client = TasksClient::connect(options(&running.url)).await.unwrap().with_book(book.clone());

    let failed = client.call("fail", json!({}), &DeclineAll, &Silent).await.unwrap();
    let TaskOutcome::Failed { task_id, error } = &failed else { panic!("expected failed, got {failed:?}") };
    assert_eq!(error.code.0, -32603);
    assert_eq!(error.message, "upstream exploded");
    assert_eq!(error.data, Some(json!({"upstream": "db"})));
    assert_eq!(book.get(&running.url, task_id).unwrap().unwrap().last_status, "failed");

    let tool_error = client.call("tool_error", json!({}), &DeclineAll, &Silent).await.unwrap();
    assert_eq!(tool_error.status(), TaskStatus::Completed);
    assert!(tool_error.is_tool_error());
    assert_eq!(tool_error.text().as_deref(), Some("bad input"));
    running.stop().await;
}

#[tokio::test]
async fn an_input_request_is_answered_once_despite_stale_reads() {
    // After the answer, the server shows the old `input_required` view for
    // three more polls (eventually consistent ack): the user is asked once and
    // the answer sent once.
    let server = TestServer::new(Settings { stale_reads: 3, ..Settings::default() });
    let running = serve(server.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let book = HandleBook::open(dir.path().join("book.db")).unwrap();
    let client = TasksClient::connect(options(&running.url)).await.unwrap().with_book(book.clone());

    let asked = Arc::new(Mutex::new(Vec::<(Option<String>, String, String)>::new()));
    let responder = FnResponder({
        let asked = asked.clone();
        move |p: InputPrompt| {
            let asked = asked.clone();
            async move {
                let InputRequest::Elicitation(req) = &p.request else { return None };
                let message = serde_json::to_value(&req.params).unwrap()["message"].as_str().unwrap().to_owned();
                asked.lock().unwrap().push((p.task_id.clone(), p.key.clone(), message));
                Some(elicit_accept(json!({"answer": "yes"})))
            }
        }
    });
    let rec = Recorder::default();
    let outcome = client.call("ask", json!({}), &responder, &rec.observer()).await.unwrap();
    let task_id = outcome.task_id().unwrap().to_owned();
    assert_eq!(outcome.text().unwrap(), r#"answer: {"action":"accept","content":{"answer":"yes"}}"#);
    assert_eq!(*asked.lock().unwrap(), [(Some(task_id.clone()), "confirm".to_owned(), "Delete it?".to_owned())]);
    assert_eq!(server.journal().updates, [vec!["confirm".to_owned()]]);
    assert_eq!(book.answered(&running.url, &task_id).unwrap(), ["confirm"]);
    assert!(rec.events().iter().any(|e| matches!(e, TaskEvent::Status { status: TaskStatus::InputRequired, .. })));
    running.stop().await;
}

#[tokio::test]
async fn a_tools_call_input_round_is_answered_and_request_state_echoed() {
    let server = TestServer::new(Settings::default());
    let running = serve(server.clone()).await;
    let client = TasksClient::connect(options(&running.url)).await.unwrap();
    let responder = FnResponder(|p: InputPrompt| async move {
        assert_eq!(p.task_id, None);
        assert_eq!(p.key, "user_name");
        Some(elicit_accept(json!({"name": "Ada"})))
    });
    let outcome = client.call("greet_mrtr", json!({}), &responder, &Silent).await.unwrap();
    assert_eq!(outcome.text().as_deref(), Some("hello Ada"));
    assert_eq!(server.journal().calls, ["greet_mrtr", "greet_mrtr"]);
    running.stop().await;
}

#[tokio::test]
async fn a_declined_input_round_asked_again_stops_instead_of_looping() {
    // DeclineAll answers elicitation with `decline`; the fixture server then
    // cannot find a name and asks the same question again: the client stops
    // after the second identical round rather than running to the cap.
    let server = TestServer::new(Settings::default());
    let running = serve(server.clone()).await;
    let client = TasksClient::connect(options(&running.url)).await.unwrap();
    let err = client.call("greet_mrtr", json!({}), &DeclineAll, &Silent).await.unwrap_err();
    assert!(matches!(&err, ClientError::InputNotAccepted { keys } if keys == &["user_name"]), "{err}");
    assert_eq!(server.journal().calls.len(), 2);
    running.stop().await;
}

#[tokio::test]
async fn changing_answers_run_to_the_round_cap() {
    // A responder that answers differently each time (but never as the
    // server wants) is bounded by the round cap.
    let running = serve(TestServer::new(Settings::default())).await;
    let mut o = options(&running.url);
    o.max_input_rounds = 3;
    let client = TasksClient::connect(o).await.unwrap();
    let n = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let responder = FnResponder(move |_p: InputPrompt| {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        async move { Some(elicit_accept(json!({"nickname": i}))) }
    });
    let err = client.call("greet_mrtr", json!({}), &responder, &Silent).await.unwrap_err();
    assert!(matches!(err, ClientError::TooManyInputRounds { rounds: 3 }), "{err}");
    running.stop().await;
}

#[tokio::test]
async fn cancel_is_acknowledged_and_followed_to_cancelled() {
    let server = TestServer::new(Settings { step_ms: 200, ..Settings::default() });
    let running = serve(server.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let book = HandleBook::open(dir.path().join("book.db")).unwrap();
    let client = TasksClient::connect(options(&running.url)).await.unwrap().with_book(book.clone());
    let Started::Task(handle) = client.start("slow", json!({"steps": 50}), &DeclineAll, &Silent).await.unwrap() else {
        panic!("slow must become a task")
    };
    client.cancel(&handle.task_id).await.unwrap();
    let outcome = client.follow(&handle, &DeclineAll, &Silent).await.unwrap();
    assert_eq!(outcome, TaskOutcome::Cancelled { task_id: handle.task_id.clone() });
    assert_eq!(server.journal().cancels, std::slice::from_ref(&handle.task_id));
    assert_eq!(book.get(&running.url, &handle.task_id).unwrap().unwrap().last_status, "cancelled");
    // Cancelling a terminal task is still acknowledged.
    client.cancel(&handle.task_id).await.unwrap();
    running.stop().await;
}

#[tokio::test]
async fn an_unknown_task_is_a_typed_error_and_the_handle_is_marked_lost() {
    let running = serve(TestServer::new(Settings::default())).await;
    let dir = tempfile::tempdir().unwrap();
    let book = HandleBook::open(dir.path().join("book.db")).unwrap();
    book.record(&running.url, "no-such-task", "sum", &json!({}), TaskStatus::Working, None).unwrap();
    let client = TasksClient::connect(options(&running.url)).await.unwrap().with_book(book.clone());
    let results = client.resume(&DeclineAll, &Silent).await.unwrap();
    assert_eq!(results.len(), 1);
    let err = results[0].1.as_ref().unwrap_err();
    assert!(matches!(err, ClientError::TaskNotFound { task_id, .. } if task_id == "no-such-task"), "{err}");
    assert_eq!(book.get(&running.url, "no-such-task").unwrap().unwrap().last_status, "lost");
    assert!(book.unfinished(None).unwrap().is_empty());
    running.stop().await;
}

#[tokio::test]
async fn a_restarted_client_resumes_from_the_book() {
    let running = serve(TestServer::new(Settings { step_ms: 100, ..Settings::default() })).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.db");
    let task_id = {
        let client = TasksClient::connect(options(&running.url)).await.unwrap().with_book(HandleBook::open(&path).unwrap());
        let Started::Task(h) = client.start("slow", json!({"steps": 2}), &DeclineAll, &Silent).await.unwrap() else {
            panic!("task expected")
        };
        client.close().await;
        h.task_id
    };
    let book = HandleBook::open(&path).unwrap();
    let client = TasksClient::connect(options(&running.url)).await.unwrap().with_book(book.clone());
    let unfinished = client.unfinished().await.unwrap();
    assert_eq!(unfinished.iter().map(|r| r.task_id.as_str()).collect::<Vec<_>>(), [task_id.as_str()]);
    let results = client.resume(&DeclineAll, &Silent).await.unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1.as_ref().unwrap().text().as_deref(), Some("2 steps done"));
    assert!(book.unfinished(None).unwrap().is_empty());
    running.stop().await;
}

#[tokio::test]
async fn polling_survives_a_server_restart_on_the_same_port() {
    let server = TestServer::new(Settings { step_ms: 150, ..Settings::default() });
    let running = serve(server.clone()).await;
    let addr = running.addr;
    let client = TasksClient::connect(options(&running.url)).await.unwrap();
    let Started::Task(handle) = client.start("slow", json!({"steps": 4}), &DeclineAll, &Silent).await.unwrap() else {
        panic!("task expected")
    };
    let rec = Recorder::default();
    let observer = rec.observer();
    let follow = client.follow(&handle, &DeclineAll, &observer);
    let restart = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        running.stop().await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        serve_on(server.clone(), addr).await
    };
    let (outcome, restarted) = tokio::join!(follow, restart);
    assert_eq!(outcome.unwrap().text().as_deref(), Some("4 steps done"));
    assert!(
        rec.events().iter().any(|e| matches!(e, TaskEvent::Unreachable { .. })),
        "the outage was never seen: {:?}",
        rec.events()
    );
    restarted.stop().await;
}

#[tokio::test]
async fn poll_delays_honour_the_servers_floor_and_orphan_ceiling() {
    // pollIntervalMs 60 is the floor; the orphan window 100 caps every delay at 50:
    // the ceiling wins over the floor, exactly as the core schedule decides.
    let running = serve(TestServer::new(Settings {
        poll_interval_ms: 60,
        orphan_window_ms: Some(100),
        step_ms: 40,
        ..Settings::default()
    }))
    .await;
    let mut o = options(&running.url);
    o.poll = PollPolicy { initial_ms: 5.0, max_ms: 10_000.0, jitter: false, ..PollPolicy::default() };
    let client = TasksClient::connect(o).await.unwrap();
    let rec = Recorder::default();
    client.call("slow", json!({"steps": 4}), &DeclineAll, &rec.observer()).await.unwrap();
    let delays: Vec<u128> = rec
        .events()
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Waiting { delay, .. } => Some(delay.as_millis()),
            _ => None,
        })
        .collect();
    assert!(delays.len() >= 2, "{delays:?}");
    assert!(delays.iter().all(|d| *d == 50), "{delays:?}");
    running.stop().await;
}

#[tokio::test]
async fn arguments_must_be_an_object_and_urls_http() {
    let err = TasksClient::connect(ClientOptions::new("ftp://x")).await.unwrap_err();
    assert!(matches!(err, ClientError::InvalidUrl { .. }), "{err}");
    let running = serve(TestServer::new(Settings::default())).await;
    let client = TasksClient::connect(options(&running.url)).await.unwrap();
    let err = client.call("sum", json!([1, 2]), &DeclineAll, &Silent).await.unwrap_err();
    assert!(matches!(err, ClientError::ArgumentsNotAnObject { got: "an array" }), "{err}");
    let err = client.call("nope", Value::Null, &DeclineAll, &Silent).await.unwrap_err();
    assert!(matches!(err, ClientError::Rpc { method: "tools/call", code: -32602, .. }), "{err}");
    running.stop().await;
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = TasksClient::connect(ClientOptions::new(format!("http://{addr}/mcp"))).await.unwrap_err();
    assert!(matches!(err, ClientError::Connect { .. }), "{err}");
}

#[tokio::test]
async fn a_follower_gives_up_after_its_budget() {
    let running = serve(TestServer::new(Settings { step_ms: 10_000, ..Settings::default() })).await;
    let mut o = options(&running.url);
    o.give_up_after = Duration::from_millis(150);
    let client = TasksClient::connect(o).await.unwrap();
    let Started::Task(handle) = client.start("slow", json!({"steps": 1}), &DeclineAll, &Silent).await.unwrap() else {
        panic!("task expected")
    };
    running.stop().await;
    let err = client.follow(&handle, &DeclineAll, &Silent).await.unwrap_err();
    assert!(matches!(&err, ClientError::Unreachable { task_id, .. } if *task_id == handle.task_id), "{err}");
}

#[test]
fn the_client_declares_the_tasks_extension_and_form_elicitation() {
    let caps = mcp_tasks_client::client_capabilities();
    assert!(caps.supports_tasks());
    assert!(caps.elicitation.is_some());
}

#[tokio::test]
async fn transport_failures_are_sorted_into_what_happened() {
    use mcp_tasks_client::TransportFailure;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = TasksClient::connect(ClientOptions::new(format!("http://{addr}/mcp"))).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Connect { failure: TransportFailure::ConnectionRefused { address }, .. } if *address == addr.to_string()),
        "{err}"
    );

    let running = serve(TestServer::new(Settings::default())).await;
    let wrong = running.url.replace("/mcp", "/nope");
    let err = TasksClient::connect(options(&wrong)).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Connect { failure: TransportFailure::NotFound { path }, .. } if path == "/nope"),
        "{err}"
    );

    // A request after the server went away: a transport failure, transient.
    let client = TasksClient::connect(options(&running.url)).await.unwrap();
    running.stop().await;
    let err = client.get("any").await.unwrap_err();
    assert!(matches!(&err, ClientError::Transport { method: "tasks/get", failure, .. } if failure.is_transient()), "{err}");
    assert!(err.is_transient());
}
