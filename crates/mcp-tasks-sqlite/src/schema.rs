//! The schema, its versioned migrations, and the marks that tell our files
//! from anyone else's.
//!
//! `PRAGMA application_id` holds [`APPLICATION_ID`] ("MCPT") and
//! `PRAGMA user_version` the schema version. Migrations run in order, each in
//! the transaction that also bumps `user_version`, so a crash mid-migration
//! leaves the previous version intact.

/// `PRAGMA application_id` of an mcp-tasks database: "MCPT" in ASCII.
pub(crate) const APPLICATION_ID: i32 = 0x4D43_5054;

/// Live statuses, spelled exactly as the partial indexes spell them: SQLite
/// uses a partial index only when the query repeats its `WHERE` terms.
pub(crate) const LIVE: &str = "status IN ('working', 'input_required')";

/// Terminal statuses, spelled as the expiry index spells them: as "not
/// live" (the `CHECK` allows no other status), because SQLite evaluates an
/// `IN` list of three or more constants through a temporary table, built
/// again by every write that changes a status (schema version 6).
pub(crate) const TERMINAL: &str = "status NOT IN ('working', 'input_required')";

/// The status `CHECK` as schema version 1 wrote it: an `IN` list of five
/// constants, for which SQLite builds a temporary table on every insert and
/// every status change.
const STATUS_CHECK_AS_LIST: &str = "CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled'))";

/// The same `CHECK` as five comparisons, which SQLite evaluates in place
/// (schema version 7).
const STATUS_CHECK_AS_COMPARISONS: &str = "CHECK (status = 'working' OR status = 'input_required' \
     OR status = 'completed' OR status = 'failed' OR status = 'cancelled')";

/// One step of the schema.
pub(crate) enum Migration {
    /// Statements run as one batch.
    Sql(&'static str),
    /// Replaces `from` with `to` in `table`'s `CREATE TABLE` text, as
    /// SQLite's documentation allows for a change every stored row already
    /// meets: no copy of the table, so it is instant at any size.
    EditTableText { table: &'static str, from: &'static str, to: &'static str },
}

/// Migration `n` (1-based) brings the schema from version `n - 1` to `n`.
pub(crate) const MIGRATIONS: &[Migration] = &[
    // 1: tasks, dead letters, and one partial index per sweep and claim so
    // each costs in proportion to the rows it touches, not the table.
    Migration::Sql(
        r#"
CREATE TABLE tasks (
    id               TEXT    NOT NULL PRIMARY KEY,
    version          INTEGER NOT NULL,
    tool             TEXT    NOT NULL,
    arguments        TEXT    NOT NULL,             -- JSON
    principal        TEXT,
    status           TEXT    NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message   TEXT,
    attempt          INTEGER NOT NULL,
    max_attempts     INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,             -- ms since the epoch, like every instant here
    updated_at       INTEGER NOT NULL,
    deadline_at      INTEGER NOT NULL,
    run_at           INTEGER,
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    last_polled_at   INTEGER,
    last_seen_at     INTEGER NOT NULL,             -- max(created_at, last_polled_at): the orphan index key
    cancel_requested INTEGER NOT NULL CHECK (cancel_requested IN (0, 1)),
    terminal_at      INTEGER,
    expires_at       INTEGER,
    result           TEXT,                         -- JSON
    error            TEXT,                         -- JSON
    input_requests   TEXT    NOT NULL,             -- JSON object
    input_responses  TEXT    NOT NULL,             -- JSON object
    idempotency_key  TEXT,
    fingerprint      TEXT    NOT NULL,
    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
) STRICT;

CREATE UNIQUE INDEX tasks_idempotency ON tasks (coalesce(principal, ''), idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX tasks_claim ON tasks (run_at, id)
    WHERE status = 'working' AND lease_owner IS NULL AND cancel_requested = 0 AND run_at IS NOT NULL;
CREATE INDEX tasks_deadline ON tasks (deadline_at, id)
    WHERE status IN ('working', 'input_required');
CREATE INDEX tasks_last_seen ON tasks (last_seen_at, id)
    WHERE status IN ('working', 'input_required');
CREATE INDEX tasks_expiry ON tasks (expires_at, id)
    WHERE status IN ('completed', 'failed', 'cancelled') AND expires_at IS NOT NULL;
CREATE INDEX tasks_lease ON tasks (lease_expires_at, id)
    WHERE lease_owner IS NOT NULL AND status IN ('working', 'input_required');
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_durations ON tasks (tool, terminal_at, id)
    WHERE status = 'completed' AND terminal_at IS NOT NULL;

CREATE TABLE dead_letters (
    seq         INTEGER NOT NULL PRIMARY KEY,      -- write order: ties of dead_at, newest first
    task_id     TEXT    NOT NULL UNIQUE,
    tool        TEXT    NOT NULL,
    arguments   TEXT    NOT NULL,                  -- JSON
    principal   TEXT,
    attempts    INTEGER NOT NULL,
    reason      TEXT    NOT NULL,
    error       TEXT    NOT NULL,                  -- JSON
    dead_at     INTEGER NOT NULL,
    requeued_as TEXT
) STRICT;

CREATE INDEX dead_letters_dead_at ON dead_letters (dead_at, seq);
"#,
    ),
    // 2: what each principal holds (tasks, bytes of arguments), kept by
    // triggers on every insert and delete, so a quota check at creation is
    // one primary-key lookup, not a count over the principal's rows.
    // Arguments and principal never change after the insert.
    Migration::Sql(
        r#"
CREATE TABLE principal_usage (
    principal      TEXT    NOT NULL PRIMARY KEY,   -- '' for the anonymous principal
    tasks          INTEGER NOT NULL,
    argument_bytes INTEGER NOT NULL
) STRICT;

CREATE TRIGGER tasks_usage_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO principal_usage (principal, tasks, argument_bytes)
        VALUES (coalesce(NEW.principal, ''), 1, length(CAST(NEW.arguments AS BLOB)))
        ON CONFLICT (principal) DO UPDATE SET
            tasks = tasks + 1,
            argument_bytes = argument_bytes + excluded.argument_bytes;
END;

CREATE TRIGGER tasks_usage_delete AFTER DELETE ON tasks BEGIN
    UPDATE principal_usage SET
            tasks = tasks - 1,
            argument_bytes = argument_bytes - length(CAST(OLD.arguments AS BLOB))
        WHERE principal = coalesce(OLD.principal, '');
END;

INSERT INTO principal_usage (principal, tasks, argument_bytes)
    SELECT coalesce(principal, ''), count(*), coalesce(sum(length(CAST(arguments AS BLOB))), 0)
    FROM tasks GROUP BY coalesce(principal, '');
"#,
    ),
    // 3: the W3C traceparent each task's attempts join (written at creation,
    // never changed); existing tasks have none and start a trace per attempt.
    Migration::Sql(
        r#"
ALTER TABLE tasks ADD COLUMN traceparent TEXT;
"#,
    ),
    // 4: how many tasks each (tool, status) pair holds, for the `/metrics`
    // gauge: kept by triggers in the writing transaction (one writer, so no
    // contention), so a scrape reads one row per pair, not the tasks. An
    // index instead would be taken by the planner over the partial indexes
    // of the claim and the sweeps. A tool and status never change together.
    Migration::Sql(
        r#"
CREATE TABLE task_counts (
    tool   TEXT    NOT NULL,
    status TEXT    NOT NULL,
    tasks  INTEGER NOT NULL,
    PRIMARY KEY (tool, status)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_counts (tool, status, tasks) VALUES (NEW.tool, NEW.status, 1)
        ON CONFLICT (tool, status) DO UPDATE SET tasks = tasks + 1;
END;

CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN
    UPDATE task_counts SET tasks = tasks - 1 WHERE tool = OLD.tool AND status = OLD.status;
END;

CREATE TRIGGER tasks_count_status AFTER UPDATE OF status ON tasks WHEN NEW.status <> OLD.status BEGIN
    UPDATE task_counts SET tasks = tasks - 1 WHERE tool = OLD.tool AND status = OLD.status;
    INSERT INTO task_counts (tool, status, tasks) VALUES (NEW.tool, NEW.status, 1)
        ON CONFLICT (tool, status) DO UPDATE SET tasks = tasks + 1;
END;

INSERT INTO task_counts (tool, status, tasks) SELECT tool, status, count(*) FROM tasks GROUP BY tool, status;
"#,
    ),
    // 5: the attempt history (one row per ended attempt, written with the
    // change that ended it, deleted with its task), and an index for
    // operators listing one principal's tasks newest first.
    Migration::Sql(
        r#"
CREATE TABLE task_attempts (
    seq        INTEGER NOT NULL PRIMARY KEY,       -- write order
    task_id    TEXT    NOT NULL,
    attempt    INTEGER NOT NULL,
    started_at INTEGER,
    ended_at   INTEGER NOT NULL,
    owner      TEXT,
    outcome    TEXT    NOT NULL,
    class      TEXT,
    error      TEXT,                               -- JSON
    message    TEXT
) STRICT;

CREATE INDEX task_attempts_task ON task_attempts (task_id, seq);

CREATE TRIGGER tasks_attempts_delete AFTER DELETE ON tasks BEGIN
    DELETE FROM task_attempts WHERE task_id = OLD.id;
END;

CREATE INDEX tasks_principal ON tasks (principal, created_at, id);
"#,
    ),
    // 6: the expiry index's condition spelled as "not live" (two constants,
    // which SQLite compares in place) instead of the three terminal
    // statuses (an `IN` list it builds a temporary table for): every
    // creation and every status change evaluates it, the same rows match.
    Migration::Sql(
        r#"
DROP INDEX tasks_expiry;
CREATE INDEX tasks_expiry ON tasks (expires_at, id)
    WHERE status NOT IN ('working', 'input_required') AND expires_at IS NOT NULL;
"#,
    ),
    // 7: the status `CHECK` spelled as comparisons. As an `IN` list SQLite
    // built a temporary table for it on every creation and every status
    // change (about 18 k instructions each, a tenth of a creation); both
    // spellings accept the same five statuses, so every stored row still
    // meets it and only the table's text changes.
    Migration::EditTableText { table: "tasks", from: STATUS_CHECK_AS_LIST, to: STATUS_CHECK_AS_COMPARISONS },
    // 8: a creation counts itself in `principal_usage` and `task_counts`
    // with two statements of its own (`writes::create`) instead of these
    // two triggers. An `INSERT` that fires a trigger runs with a statement
    // journal, so every page it touched was copied into the sub-journal:
    // ≈ 21 page copies, 14% of a creation's instructions. The counts the
    // triggers kept carry on unchanged; the delete and status triggers stay.
    Migration::Sql(
        r#"
DROP TRIGGER IF EXISTS tasks_usage_insert;
DROP TRIGGER IF EXISTS tasks_count_insert;
"#,
    ),
    // 9: a status change counts itself in `task_counts` (`counts.rs`: the
    // writer reads the task's tool and status before the `UPDATE` and moves
    // the count after it) instead of this trigger, for the reason of 8: the
    // trigger gave every completion a statement journal, ≈ 30 000
    // instructions of page copies a trivial task. Deletions keep theirs.
    Migration::Sql(
        r#"
DROP TRIGGER IF EXISTS tasks_count_status;
"#,
    ),
    // 10: the deletion triggers add their change to a count as a delta
    // (inserting the row if it is missing), as the writer's count tally
    // does just before each commit (`counts.rs`): a batch that creates a
    // principal's first task and deletes it, or finishes a tool's first task
    // and deletes it, then leaves the counts right whichever reaches the
    // table first. Before, an `UPDATE` of a row not yet written was lost.
    Migration::Sql(
        r#"
DROP TRIGGER IF EXISTS tasks_usage_delete;
CREATE TRIGGER tasks_usage_delete AFTER DELETE ON tasks BEGIN
    INSERT INTO principal_usage (principal, tasks, argument_bytes)
        VALUES (coalesce(OLD.principal, ''), -1, -length(CAST(OLD.arguments AS BLOB)))
        ON CONFLICT (principal) DO UPDATE SET
            tasks = tasks + excluded.tasks,
            argument_bytes = argument_bytes + excluded.argument_bytes;
END;

DROP TRIGGER IF EXISTS tasks_count_delete;
CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN
    INSERT INTO task_counts (tool, status, tasks) VALUES (OLD.tool, OLD.status, -1)
        ON CONFLICT (tool, status) DO UPDATE SET tasks = tasks + excluded.tasks;
END;
"#,
    ),
];

/// The schema version this build writes and understands.
pub(crate) fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}
