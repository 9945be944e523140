-- Recurring alarms: one row per alarm, holding its schedule and its next occurrence. A scheduler
-- round locks the due rows (FOR UPDATE SKIP LOCKED), records each due occurrence as an ordinary
-- intent whose key is 'alarm:' || name || '@' || the occurrence's instant (ISO-8601, UTC), and moves
-- next_at on with an update fenced by the next_at it read, all in one transaction: a crash before
-- the commit records nothing and moves nothing, and the unique key of eec_effect_intent makes a
-- second recording of one occurrence impossible whatever else happens.
CREATE TABLE eec_recurring_alarm (
    name                text COLLATE "C" NOT NULL,
    effect_name         text        NOT NULL,
    cron                text,
    every_ms            bigint,
    zone                text        NOT NULL,
    payload             jsonb       NOT NULL,
    payload_fingerprint text        NOT NULL,
    missed              text        NOT NULL,
    grace_ms            bigint      NOT NULL,
    declared_in         text        NOT NULL,
    paused              boolean     NOT NULL DEFAULT false,
    next_at             timestamptz NOT NULL,
    last_occurrence_at  timestamptz,
    last_key            text COLLATE "C",
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    CONSTRAINT eec_recurring_alarm_pkey PRIMARY KEY (name),
    CONSTRAINT eec_recurring_alarm_schedule_check CHECK ((cron IS NULL) <> (every_ms IS NULL)),
    CONSTRAINT eec_recurring_alarm_every_check CHECK (every_ms IS NULL OR every_ms >= 1),
    CONSTRAINT eec_recurring_alarm_missed_check CHECK (missed IN ('run_once', 'run_each', 'skip')),
    CONSTRAINT eec_recurring_alarm_declared_check CHECK (declared_in IN ('properties', 'api'))
);

-- the scheduler: alarms that are due
CREATE INDEX eec_recurring_alarm_due_idx ON eec_recurring_alarm (next_at) WHERE NOT paused;

-- Concurrency limits: rows 1..N per effect that declares max-concurrency N. A claim of such an
-- effect's intents locks the slot rows no other claim holds (SKIP LOCKED), then, in a new statement
-- of the same transaction, keeps those whose holder is no longer in flight under a live lease with the
-- attempt it took the slot for, and hands each to one claimed intent. A slot is freed by whatever ends
-- its holder's attempt (the fenced completion, a hand-back, a redrive) or by the expiry of its lease,
-- so a crashed holder never keeps one.
CREATE TABLE eec_effect_slot (
    effect_name text COLLATE "C" NOT NULL,
    slot        integer     NOT NULL,
    intent_id   bigint,
    attempt     integer,
    updated_at  timestamptz NOT NULL,
    CONSTRAINT eec_effect_slot_pkey PRIMARY KEY (effect_name, slot),
    CONSTRAINT eec_effect_slot_check CHECK (slot >= 1)
);

-- The timestamps of both tables have no default: Ductor writes them from ductor_now() (V11), the
-- clock tests can move.
