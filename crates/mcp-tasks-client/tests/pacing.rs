//! The poll-delay wiring: in the floor mode the server's `pollIntervalMs`
//! reaches every delay as the floor, and in every mode the orphan window
//! (else `ttlMs`) is the ceiling, checked against a bare core scheduler with
//! the same `PyRandom` seed; hint-paced (the default), the hint is the pace.

use mcp_tasks_client::rmcp::model::{MetaObject, Task, TaskStatus as WireStatus};
use mcp_tasks_client::{ClientOptions, ORPHAN_WINDOW_META_KEY, PacingMode, PollPacer, ServerHints, server_hints};
use mcp_tasks_core::{PollPolicy, PollScheduler, PyRandom};
use serde_json::json;

fn task(poll: Option<u64>, ttl: Option<u64>) -> Task {
    let mut t = Task::new("t", WireStatus::Working, "2026-12-02T00:00:00Z", "2026-12-02T00:00:00Z");
    t.poll_interval_ms = poll;
    t.ttl_ms = ttl;
    t
}

fn meta(window: serde_json::Value) -> MetaObject {
    let mut m = MetaObject::new();
    m.0.insert(ORPHAN_WINDOW_META_KEY.to_owned(), window);
    m
}

#[test]
fn the_vendor_key_is_outside_the_reserved_prefixes() {
    let prefix = ORPHAN_WINDOW_META_KEY.split('/').next().unwrap();
    let second_label = prefix.split('.').nth(1).unwrap();
    assert!(second_label != "modelcontextprotocol" && second_label != "mcp", "{ORPHAN_WINDOW_META_KEY}");
}

#[test]
fn hints_are_read_from_the_task_and_its_meta() {
    let h = server_hints(&task(Some(1500), Some(60_000)), Some(&meta(json!(20_000))));
    assert_eq!(h, ServerHints { poll_interval_ms: Some(1500), ttl_ms: Some(60_000), orphan_window_ms: Some(20_000) });
    assert_eq!(h.ceiling_window_ms(), Some(20_000));
    // A float window is accepted; garbage is ignored and the TTL takes over.
    assert_eq!(server_hints(&task(None, None), Some(&meta(json!(2500.0)))).orphan_window_ms, Some(2500));
    let junk = server_hints(&task(None, Some(9000)), Some(&meta(json!("soon"))));
    assert_eq!(junk.orphan_window_ms, None);
    assert_eq!(junk.ceiling_window_ms(), Some(9000));
    assert_eq!(server_hints(&task(None, None), None).ceiling_window_ms(), None);
}

#[test]
fn the_floor_is_passed_to_every_delay_seed_0() {
    let policy = PollPolicy::default();
    let mut pacer = PollPacer::new(PacingMode::HintAsFloor, policy.clone(), PyRandom::new(0));
    let mut bare = PollScheduler::new(policy, PyRandom::new(0));
    pacer.observe(server_hints(&task(Some(2000), None), None));
    for _ in 0..12 {
        assert_eq!(pacer.next_delay_ms(), bare.next_delay_ms(Some(2000.0)));
    }
    // Without the floor the sequence would differ from the first delay on.
    let mut unfloored = PollScheduler::new(PollPolicy::default(), PyRandom::new(0));
    let mut floored = PollPacer::new(PacingMode::HintAsFloor, PollPolicy::default(), PyRandom::new(0));
    floored.observe(server_hints(&task(Some(2000), None), None));
    assert_ne!(floored.next_delay_ms(), unfloored.next_delay_ms(None));
}

#[test]
fn a_later_answer_that_omits_the_hint_keeps_the_floor() {
    let mut pacer = PollPacer::new(PacingMode::HintAsFloor, PollPolicy::default(), PyRandom::new(7));
    let mut bare = PollScheduler::new(PollPolicy::default(), PyRandom::new(7));
    pacer.observe(server_hints(&task(Some(900), Some(60_000)), None));
    // The hint disappears before the first delay is drawn: the floor stays.
    pacer.observe(server_hints(&task(None, Some(60_000)), None));
    assert_eq!(pacer.hints().poll_interval_ms, Some(900));
    let first = pacer.next_delay_ms();
    assert_eq!(first, bare.next_delay_ms(Some(900.0)));
    let mut unfloored = PollScheduler::new(PollPolicy::default(), PyRandom::new(7));
    assert_ne!(first, unfloored.next_delay_ms(None), "the floor must show in the first delay");
    assert_eq!(pacer.next_delay_ms(), bare.next_delay_ms(Some(900.0)));
}

#[test]
fn the_orphan_window_is_the_ceiling_seed_7() {
    let policy = PollPolicy { max_ms: 300_000.0, ..PollPolicy::default() };
    let mut pacer = PollPacer::new(PacingMode::HintAsFloor, policy.clone(), PyRandom::new(7));
    let mut bare = PollScheduler::new(policy, PyRandom::new(7));
    bare.set_orphan_window_ms(Some(8_000.0));
    pacer.observe(server_hints(&task(Some(250), Some(3_600_000)), Some(&meta(json!(8_000)))));
    assert_eq!(pacer.ceiling_ms(), Some(4_000.0));
    for _ in 0..20 {
        let d = pacer.next_delay_ms();
        assert_eq!(d, bare.next_delay_ms(Some(250.0)));
        assert!(d <= 4_000.0, "{d}");
    }
}

#[test]
fn without_a_window_the_ttl_is_the_ceiling() {
    let policy = PollPolicy { max_ms: 300_000.0, jitter: false, ..PollPolicy::default() };
    let mut pacer = PollPacer::new(PacingMode::HintAsFloor, policy, PyRandom::new(3));
    pacer.observe(server_hints(&task(None, Some(10_000)), None));
    assert_eq!(pacer.ceiling_ms(), Some(5_000.0));
    let delays: Vec<f64> = (0..12).map(|_| pacer.next_delay_ms()).collect();
    assert_eq!(delays.iter().cloned().fold(0.0, f64::max), 5_000.0);
    // A window advertised later replaces the TTL as the ceiling.
    pacer.observe(server_hints(&task(None, Some(10_000)), Some(&meta(json!(2_000)))));
    assert_eq!(pacer.ceiling_ms(), Some(1_000.0));
    assert_eq!(pacer.next_delay_ms(), 1_000.0);
}

#[test]
fn unlimited_ttl_and_no_window_leave_only_the_clients_own_cap() {
    let policy = PollPolicy { max_ms: 3_000.0, jitter: false, ..PollPolicy::default() };
    let mut pacer = PollPacer::new(PacingMode::HintAsFloor, policy, PyRandom::new(1));
    pacer.observe(server_hints(&task(None, None), None));
    assert_eq!(pacer.ceiling_ms(), None);
    let last = (0..30).map(|_| pacer.next_delay_ms()).last().unwrap();
    assert_eq!(last, 3_000.0);
}

#[test]
fn hint_paced_is_the_default_and_the_hint_is_the_pace() {
    let options = ClientOptions::new("http://127.0.0.1:1/mcp");
    assert_eq!(options.pacing, PacingMode::HintPaced);
    assert_eq!(options.follow_config(), mcp_tasks_core::FollowConfig::default());
    // Hint 36 s, own ceiling 10 s: hint-paced polls in [18 s, 36 s]; the floor mode never past 10 s.
    let hints = server_hints(&task(Some(36_000), Some(3_600_000)), Some(&meta(json!(900_000))));
    let mut paced = PollPacer::new(options.pacing, options.poll.clone(), PyRandom::new(4));
    let mut floored = PollPacer::new(PacingMode::HintAsFloor, options.poll.clone(), PyRandom::new(4));
    paced.observe(hints);
    floored.observe(hints);
    for _ in 0..20 {
        let d = paced.next_delay_ms();
        assert!((18_000.0..=36_000.0).contains(&d), "{d}");
        assert!(floored.next_delay_ms() <= 10_000.0);
    }
    // Half the orphan window still caps the pace.
    paced.observe(server_hints(&task(None, None), Some(&meta(json!(20_000)))));
    assert!(paced.next_delay_ms() <= 10_000.0);
}
