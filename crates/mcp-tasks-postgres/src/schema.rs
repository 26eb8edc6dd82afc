//! The schema, its versioned migrations, and the table that tells our
//! schemas from anyone else's.
//!
//! `mcp_tasks_schema_migrations` holds one row per applied migration; its
//! largest `version` is the schema's version. Migrations run in order, each
//! in the transaction that records it (PostgreSQL's DDL is transactional),
//! so a failure mid-migration leaves the previous version intact.
//!
//! Room for the fleet (not built yet): `lease_owner` is unbounded text, so a
//! per-claim lease identity (owner + claim token) fits without a migration;
//! every instant is a `bigint` of milliseconds, the same whether the
//! runtime's clock or the database's (`clock_timestamp()`) supplies it.

/// The table that marks a schema as ours and records its migrations.
pub(crate) const VERSION_TABLE: &str = "mcp_tasks_schema_migrations";

/// Live statuses, spelled exactly as the partial indexes spell them, so the
/// planner can prove a query's filter implies the index predicate.
pub(crate) const LIVE: &str = "status IN ('working', 'input_required')";

/// Terminal statuses, spelled as the expiry index spells them.
pub(crate) const TERMINAL: &str = "status IN ('completed', 'failed', 'cancelled')";

/// One migration: what it does, and its SQL.
pub(crate) struct Migration {
    /// A short description, recorded with the version.
    pub(crate) description: &'static str,
    /// The statements.
    pub(crate) sql: &'static str,
}

/// Migration `n` (1-based) brings the schema from version `n - 1` to `n`.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        description: "tasks, dead letters, one partial index per sweep and claim",
        // Ids and keys compare byte-wise (COLLATE "C"), as Rust's `String`
        // does, so "oldest first, then by id" orders exactly as the other
        // stores whatever the database's locale. JSON is kept as text, exactly
        // as serialised (jsonb would reorder keys and refuse \u0000); the store
        // never looks inside it.
        sql: r#"
CREATE TABLE mcp_tasks_schema_migrations (
    version     integer     NOT NULL PRIMARY KEY,
    description text        NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tasks (
    id               text COLLATE "C" NOT NULL PRIMARY KEY,
    version          bigint  NOT NULL,
    tool             text COLLATE "C" NOT NULL,
    arguments        text    NOT NULL,            -- JSON
    principal        text COLLATE "C",
    status           text    NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message   text,
    attempt          bigint  NOT NULL,
    max_attempts     bigint  NOT NULL,
    created_at       bigint  NOT NULL,            -- ms since the epoch, like every instant here
    updated_at       bigint  NOT NULL,
    deadline_at      bigint  NOT NULL,
    run_at           bigint,
    lease_owner      text,                        -- unbounded: room for a per-claim lease identity
    lease_expires_at bigint,
    last_polled_at   bigint,
    -- max(created_at, last_polled_at) (greatest() skips NULL): the orphan index key
    last_seen_at     bigint  NOT NULL GENERATED ALWAYS AS (greatest(created_at, last_polled_at)) STORED,
    cancel_requested boolean NOT NULL,
    terminal_at      bigint,
    expires_at       bigint,
    result           text,                        -- JSON
    error            text,                        -- JSON
    input_requests   text    NOT NULL,            -- JSON object
    input_responses  text    NOT NULL,            -- JSON object
    idempotency_key  text COLLATE "C",
    fingerprint      text    NOT NULL,
    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);

CREATE UNIQUE INDEX tasks_idempotency ON tasks (coalesce(principal, ''), idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX tasks_claim ON tasks (run_at, id)
    WHERE status = 'working' AND lease_owner IS NULL AND NOT cancel_requested AND run_at IS NOT NULL;
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
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- write order: ties of dead_at, newest first
    task_id     text COLLATE "C" NOT NULL UNIQUE,
    tool        text COLLATE "C" NOT NULL,
    arguments   text    NOT NULL,                 -- JSON
    principal   text COLLATE "C",
    attempts    bigint  NOT NULL,
    reason      text    NOT NULL,
    error       text    NOT NULL,                 -- JSON
    dead_at     bigint  NOT NULL,
    requeued_as text COLLATE "C"
);

CREATE INDEX dead_letters_dead_at ON dead_letters (dead_at, seq);
"#,
    },
    Migration {
        description: "per-principal usage (tasks, argument bytes) kept by triggers, for quotas",
        // One row per principal ('' for the anonymous one), so a quota check
        // inside the create transaction is one primary-key lookup, and locking
        // that row serialises the creations of one principal across instances.
        // Statement-level triggers with transition tables add a whole batch in
        // one upsert, touching the principals in byte order (COLLATE "C"), the
        // order creation locks them in, so batches never deadlock on each
        // other. Arguments and principal never change after the insert.
        sql: r#"
CREATE TABLE principal_usage (
    principal      text COLLATE "C" NOT NULL PRIMARY KEY,   -- '' for the anonymous principal
    tasks          bigint NOT NULL,
    argument_bytes bigint NOT NULL
);

CREATE FUNCTION mcp_tasks_usage_insert() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $fn$
BEGIN
    INSERT INTO principal_usage AS u (principal, tasks, argument_bytes)
        SELECT coalesce(principal, ''), count(*), sum(octet_length(arguments))
        FROM inserted GROUP BY 1 ORDER BY 1
        ON CONFLICT (principal) DO UPDATE SET
            tasks = u.tasks + excluded.tasks,
            argument_bytes = u.argument_bytes + excluded.argument_bytes;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION mcp_tasks_usage_delete() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $fn$
BEGIN
    UPDATE principal_usage AS u SET
            tasks = u.tasks - d.tasks,
            argument_bytes = u.argument_bytes - d.argument_bytes
        FROM (SELECT coalesce(principal, '') AS principal, count(*) AS tasks,
                     sum(octet_length(arguments)) AS argument_bytes
              FROM deleted GROUP BY 1) AS d
        WHERE u.principal = d.principal;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER tasks_usage_insert AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION mcp_tasks_usage_insert();
CREATE TRIGGER tasks_usage_delete AFTER DELETE ON tasks
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION mcp_tasks_usage_delete();

-- Creating the triggers locked out concurrent inserts, so this count is exact.
INSERT INTO principal_usage (principal, tasks, argument_bytes)
    SELECT coalesce(principal, ''), count(*), coalesce(sum(octet_length(arguments)), 0)
    FROM tasks GROUP BY 1;
"#,
    },
    Migration {
        description: "the maintenance leader's lease",
        // One row at most (the key is always true). A term is won or kept by
        // one guarded upsert (leader.rs); `term` counts hand-overs, for logs.
        sql: r#"
CREATE TABLE maintenance_leader (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    holder     text    NOT NULL,
    term       bigint  NOT NULL,
    expires_at bigint  NOT NULL              -- ms since the epoch, on the database's clock
);
"#,
    },
    Migration {
        description: "NOTIFY of new work, answers and cancels, in the writing transaction",
        // Triggers, so every writer (any instance, the admin commands) announces
        // its changes, in the transaction that makes them: a listener hears of a
        // change only once it is committed. The channel is per schema (channels
        // are database-wide): 'mcp_tasks_' || md5(schema), see listener.rs.
        // Payloads: 'work' (a task became claimable) or 't:<id>' (its answers
        // or cancel flag changed). Claims and lease renewals announce nothing.
        sql: r#"
CREATE FUNCTION mcp_tasks_notify_created() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $fn$
BEGIN
    IF EXISTS (SELECT 1 FROM inserted) THEN
        PERFORM pg_notify('mcp_tasks_' || md5(current_schema()), 'work');
    END IF;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION mcp_tasks_notify_changed() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $fn$
BEGIN
    IF NEW.input_responses IS DISTINCT FROM OLD.input_responses
       OR (NEW.cancel_requested AND NOT OLD.cancel_requested) THEN
        PERFORM pg_notify('mcp_tasks_' || md5(current_schema()), 't:' || NEW.id);
    END IF;
    IF NEW.lease_owner IS NULL AND NEW.status = 'working' AND NEW.run_at IS NOT NULL AND NOT NEW.cancel_requested THEN
        PERFORM pg_notify('mcp_tasks_' || md5(current_schema()), 'work');
    END IF;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER tasks_notify_insert AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION mcp_tasks_notify_created();
CREATE TRIGGER tasks_notify_update AFTER UPDATE ON tasks FOR EACH ROW
    WHEN (NEW.input_responses IS DISTINCT FROM OLD.input_responses
          OR (NEW.cancel_requested AND NOT OLD.cancel_requested)
          OR (NEW.lease_owner IS NULL AND NEW.status = 'working' AND NEW.run_at IS NOT NULL
              AND NOT NEW.cancel_requested
              AND (OLD.lease_owner IS NOT NULL OR OLD.status <> 'working'
                   OR OLD.run_at IS DISTINCT FROM NEW.run_at)))
    EXECUTE FUNCTION mcp_tasks_notify_changed();
"#,
    },
    Migration {
        description: "the W3C traceparent each task's attempts join",
        // Written at creation, never changed; older tasks have none.
        sql: r#"
ALTER TABLE tasks ADD COLUMN traceparent text;
"#,
    },
    Migration {
        description: "an index of tasks by status and tool, for the /metrics gauge",
        sql: r#"
CREATE INDEX tasks_tool_status ON tasks (tool, status);
"#,
    },
    Migration {
        description: "the attempt history, and an index for listing one principal's tasks",
        // One row per ended attempt, written in the transaction of the
        // change that ended it; deleted with its task (the foreign key).
        sql: r#"
CREATE TABLE task_attempts (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- write order
    task_id    text COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    attempt    bigint  NOT NULL,
    started_at bigint,
    ended_at   bigint  NOT NULL,
    owner      text,
    outcome    text    NOT NULL,
    class      text,
    error      text,                              -- JSON
    message    text
);

CREATE INDEX task_attempts_task ON task_attempts (task_id, seq);
CREATE INDEX tasks_principal ON tasks (principal, created_at, id);
"#,
    },
    Migration {
        description: "a task created already leased is not announced as work",
        // Dispatched at creation, it runs where it was created: waking
        // every instance for it would only run empty claims (and keep the
        // creating instance from dispatching its next task until one ran).
        sql: r#"
CREATE OR REPLACE FUNCTION mcp_tasks_notify_created() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $fn$
BEGIN
    IF EXISTS (SELECT 1 FROM inserted WHERE lease_owner IS NULL) THEN
        PERFORM pg_notify('mcp_tasks_' || md5(current_schema()), 'work');
    END IF;
    RETURN NULL;
END
$fn$;
"#,
    },
];

/// The schema version this build writes and understands.
pub(crate) fn latest_version() -> i32 {
    MIGRATIONS.len() as i32
}
