//! The handle book: records survive a reopen, resolve once, and list what a
//! restarted client must resume.

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_client::{BookError, HandleBook, Resolution};
use mcp_tasks_core::{ManualClock, TaskStatus, Timestamp};
use serde_json::json;

const URL_A: &str = "http://127.0.0.1:8080/mcp";
const URL_B: &str = "http://127.0.0.1:9090/mcp";

#[test]
fn handles_survive_a_reopen_and_resume_lists_the_unfinished() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/book.db");
    let clock = ManualClock::new(Timestamp::from_secs(1_000));
    {
        let book = HandleBook::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
        book.record(URL_A, "t1", "report", &json!({"n": 1}), TaskStatus::Working, Some("queued")).unwrap();
        clock.advance(Duration::from_secs(1));
        book.record(URL_B, "t2", "flaky", &json!({}), TaskStatus::Working, None).unwrap();
        clock.advance(Duration::from_secs(1));
        book.record(URL_A, "t3", "ask", &json!({"q": "?"}), TaskStatus::Working, None).unwrap();
        book.update_status(URL_A, "t3", TaskStatus::InputRequired, Some("waiting for you")).unwrap();
        book.record_answered(URL_A, "t3", &["confirm".to_owned()]).unwrap();
        assert!(book.resolve(URL_B, "t2", Resolution::Terminal(TaskStatus::Completed)).unwrap());
    }
    let book = HandleBook::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
    let all = book.unfinished(None).unwrap();
    assert_eq!(all.iter().map(|r| r.task_id.as_str()).collect::<Vec<_>>(), ["t1", "t3"]);
    let t1 = &all[0];
    assert_eq!((t1.server_url.as_str(), t1.tool.as_str()), (URL_A, "report"));
    assert_eq!(t1.arguments, json!({"n": 1}));
    assert_eq!(t1.created_at, Timestamp::from_secs(1_000));
    assert_eq!(t1.status_message.as_deref(), Some("queued"));
    let t3 = &all[1];
    assert_eq!(t3.last_status, "input_required");
    assert_eq!(t3.status_message.as_deref(), Some("waiting for you"));
    assert_eq!(book.answered(URL_A, "t3").unwrap(), ["confirm"]);
    assert!(book.unfinished(Some(URL_B)).unwrap().is_empty());
    let t2 = book.get(URL_B, "t2").unwrap().unwrap();
    assert_eq!(t2.last_status, "completed");
    assert_eq!(t2.resolved_at, Some(Timestamp::from_secs(1_002)));
}

#[test]
fn a_handle_resolves_once_and_then_ignores_status_updates() {
    let dir = tempfile::tempdir().unwrap();
    let book = HandleBook::open(dir.path().join("b.db")).unwrap();
    book.record(URL_A, "t", "x", &json!({}), TaskStatus::Working, None).unwrap();
    assert!(book.resolve(URL_A, "t", Resolution::Lost).unwrap());
    assert!(!book.resolve(URL_A, "t", Resolution::Terminal(TaskStatus::Completed)).unwrap());
    book.update_status(URL_A, "t", TaskStatus::Working, Some("late")).unwrap();
    let r = book.get(URL_A, "t").unwrap().unwrap();
    assert_eq!(r.last_status, "lost");
    assert_eq!(r.status_message, None);
    assert!(!r.is_unfinished());
    assert!(!book.resolve(URL_A, "unknown", Resolution::Lost).unwrap());
}

#[test]
fn recording_twice_keeps_the_first_record() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Timestamp::from_secs(5));
    let book = HandleBook::open_with_clock(dir.path().join("b.db"), Arc::new(clock.clone())).unwrap();
    book.record(URL_A, "t", "first", &json!({"v": 1}), TaskStatus::Working, None).unwrap();
    clock.advance(Duration::from_secs(9));
    book.record(URL_A, "t", "second", &json!({"v": 2}), TaskStatus::Working, None).unwrap();
    let r = book.get(URL_A, "t").unwrap().unwrap();
    assert_eq!((r.tool.as_str(), r.arguments.clone(), r.created_at), ("first", json!({"v": 1}), Timestamp::from_secs(5)));
    // The same id on another server is another handle.
    book.record(URL_B, "t", "other", &json!({}), TaskStatus::Working, None).unwrap();
    assert_eq!(book.unfinished(None).unwrap().len(), 2);
}

#[test]
fn a_damaged_row_is_a_typed_error_naming_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.db");
    let book = HandleBook::open(&path).unwrap();
    book.record(URL_A, "t9", "x", &json!({}), TaskStatus::Working, None).unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute("UPDATE handles SET arguments = '{not json' WHERE task_id = 't9'", []).unwrap();
    let err = book.unfinished(None).unwrap_err();
    assert!(matches!(&err, BookError::CorruptArguments { task_id, .. } if task_id == "t9"), "{err}");
    assert!(err.to_string().contains("t9"));
}

#[test]
fn a_book_that_is_not_sqlite_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.db");
    std::fs::write(&path, b"this is not a database, just some text that is long enough to matter").unwrap();
    let err = HandleBook::open(&path).unwrap_err();
    assert!(matches!(err, BookError::Sqlite { .. }), "{err}");
    assert!(err.to_string().contains("b.db"), "{err}");
}
