//! The core stays sans-IO: no module reads a clock, OS entropy, files or the
//! network, or spawns, except the two named seams callers hand in or that
//! decide nothing (`SystemClock` in `time.rs`, `TaskId::random` in `task.rs`).

use std::path::Path;

/// Calls that would make a decision depend on the world rather than its inputs.
const FORBIDDEN: [&str; 10] = [
    "SystemTime::now",
    "Instant::now",
    "new_v4",
    "getrandom",
    "thread_rng",
    "std::fs",
    "std::net",
    "std::thread",
    "std::process",
    "tokio",
];

/// Where a forbidden call is the point: (file, call, how many).
const SEAMS: [(&str, &str, usize); 2] = [("time.rs", "SystemTime::now", 1), ("task.rs", "new_v4", 1)];

#[test]
fn only_the_named_seams_read_the_world() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        files += 1;
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        for call in FORBIDDEN {
            let n = text.matches(call).count();
            let allowed = SEAMS.iter().find(|(f, c, _)| *f == name && *c == call).map_or(0, |s| s.2);
            if n != allowed {
                found.push(format!("{name}: {call} ×{n} (allowed {allowed})"));
            }
        }
    }
    assert!(files > 10, "read the core's sources from {}", src.display());
    assert!(found.is_empty(), "the core reads the world outside its seams:\n{}", found.join("\n"));
}
