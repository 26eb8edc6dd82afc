//! The generator the jittered cells depend on, pinned to study-model.md's
//! CPython 3.11 test vectors, through the clients the study builds (the
//! shipped client's follow loop in the floor mode).

use mcp_tasks_core::{Follow, FollowConfig, FollowStep, PyRandom, RandomSource, ServerHints, TaskStatus, Timestamp};
use mcp_tasks_study::e2::adaptive_client;

/// The first `n` delays the study's adaptive client with `max_ms` and `seed`
/// waits before its polls, the server answering `working` each time.
fn delays(max_ms: f64, seed: u64, n: usize) -> Vec<f64> {
    let mut follow = Follow::new(&adaptive_client(&FollowConfig::default(), max_ms), PyRandom::new(seed));
    let mut step = follow.start(Timestamp::from_secs(0), ServerHints::default());
    let mut out = Vec::new();
    while out.len() < n {
        let FollowStep::Poll { at, delay_ms } = step else { panic!("{step:?}") };
        out.push(delay_ms);
        step = follow.on_answer(at, TaskStatus::Working, ServerHints::default());
    }
    out
}

#[test]
fn cpython_words_and_doubles() {
    let mut r = PyRandom::new(0);
    assert_eq!([r.next_u32(), r.next_u32(), r.next_u32(), r.next_u32()], [3626764237, 1654615998, 3255389356, 3823568514]);
    let mut r = PyRandom::new(7);
    assert_eq!([r.next_f64(), r.next_f64(), r.next_f64()], [0.32383276483316237, 0.15084917392450192, 0.6509344730398537]);
    assert_eq!(PyRandom::new(42).next_f64(), 0.6394267984578837);
}

#[test]
fn e2_scheduler_seed_0_default_ceiling() {
    let got = delays(10_000.0, 0, 5);
    assert_eq!(got, [230.55273144063102, 351.5908805880605, 454.58290586587043, 644.5653761499973, 1238.0362517451642]);
}

#[test]
fn e4_client_seed_7_max_300_s() {
    let got = delays(300_000.0, 7, 16);
    let want = [
        "165.5", "230.2", "528.3", "549.1", "1258.2", "1790.0", "2218.8", "5058.1", "5570.0", "12314.9", "14704.0",
        "23985.0", "50120.8", "102842.6", "101223.1", "176287.3",
    ];
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!(format!("{g:.1}"), w);
    }
}
