#!/usr/bin/env python3
"""Fails if an integration test file would silently not run.

Each crate compiles its integration tests into one binary, `tests/main.rs`
(`autotests = false`), so a new `tests/NAME.rs` runs only once `main.rs`
declares `mod NAME;`. This lists every file and directory under each
crate's `tests/` that is neither declared there nor a `[[test]]` target of
its own.
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
missing = []
for tests in sorted(root.glob("crates/*/tests")):
    main = tests / "main.rs"
    if not main.exists():
        continue
    declared = set(re.findall(r"^mod ([a-z0-9_]+);", main.read_text(), re.M))
    manifest = (tests.parent / "Cargo.toml").read_text()
    own_targets = set(re.findall(r'\[\[test\]\]\s*\nname\s*=\s*"([^"]+)"', manifest))
    for entry in sorted(tests.iterdir()):
        if entry.name == "main.rs":
            continue
        if entry.is_file() and entry.suffix == ".rs":
            name = entry.stem
        elif entry.is_dir() and (entry / "mod.rs").exists():
            name = entry.name
        else:
            continue
        if name not in declared and name not in own_targets:
            missing.append(f"{entry.relative_to(root)}: not declared in {main.relative_to(root)} (add `mod {name};`)")
if missing:
    print("integration test files that would not run:", *missing, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print("every integration test file is compiled")
