//! The generator the jittered cells depend on, pinned to study-model.md's
//! CPython 3.11 test vectors, through the schedulers the study builds.

use mcp_tasks_core::{PyRandom, RandomSource};
use mcp_tasks_study::e2::scheduler;

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
    let mut s = scheduler(10_000.0, 0);
    let got: Vec<f64> = (0..5).map(|_| s.next_delay_ms(None)).collect();
    assert_eq!(got, [230.55273144063102, 351.5908805880605, 454.58290586587043, 644.5653761499973, 1238.0362517451642]);
}

#[test]
fn e4_client_seed_7_max_300_s() {
    let mut s = scheduler(300_000.0, 7);
    let want = [
        "165.5", "230.2", "528.3", "549.1", "1258.2", "1790.0", "2218.8", "5058.1", "5570.0", "12314.9", "14704.0", "23985.0",
        "50120.8", "102842.6", "101223.1", "176287.3",
    ];
    for w in want {
        assert_eq!(format!("{:.1}", s.next_delay_ms(None)), w);
    }
}
