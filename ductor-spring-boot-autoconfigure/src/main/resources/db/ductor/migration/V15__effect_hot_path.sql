-- The hot path of an effect: an intent recorded already leased at commit (or claimed) and then
-- completed. PostgreSQL writes an update heap-only (HOT: no new index entry, only the changed row on
-- the same page) when no column that any index holds, in its key or in its predicate, changes. Until
-- now every partial index named status, and the lease and finished indexes held lease_expires_at and
-- finished_at, so every claim and every completion wrote a whole new row version with new entries in
-- the primary key, the unique key and the lease and finished indexes.
--
-- From here on the indexes hold only columns that a completion of a leased attempt leaves as they
-- are. status stays the truth that every statement reads and writes; what the indexes need of it is
-- derived, by the database, into generated columns that are NULL for an attempt in flight under a
-- lease that the sweep watches, and stay NULL when it completes:
--
--   queue_status            status while the intent waits (pending, reconciling, failed,
--                           needs_decision), and in_flight for an attempt whose lease the lease index
--                           watches, or whose intent has an ordering key or an alarm name (their
--                           in-flight attempts hold up the later intents of the key, and are live
--                           occurrences of the alarm); NULL otherwise.
--   queue_lease_expires_at  the lease of an in-flight attempt that the lease index watches.
--   parked_at               when a failed or undecided intent was parked (its updated_at).
--
-- A lease is watched in one of two ways. An attempt leased by the statement that records the
-- intent at commit, or by a drainer's claim, is watched by the sweep: lease_swept is true and
-- lease_xid holds the id of the transaction that took the lease (written once per lease). The
-- reconciler's sweep walks lease_xid_idx from a watermark (eec_effect_lease_sweep) up to the oldest
-- transaction still running, so it sees every such lease once its transaction has ended, redrives
-- the expired ones, and hands the ones still running after a second to the lease index by clearing
-- lease_swept (one more row version, for long attempts only). Every other in-flight attempt (an
-- attempt in flight when this migration runs, one handed over by the sweep) is watched by the
-- lease index, as before.
--
-- The finished index is gone: retention walks the primary key instead, and the console's
-- completions per minute are counted in eec_effect_throughput by the completions themselves.
--
-- Adding the generated columns rewrites the table once, under an exclusive lock: the live intents
-- of an upgraded database keep their status and are found by the new indexes as before (an
-- in-flight one by the lease index), so nothing waiting is lost.

ALTER TABLE eec_effect_intent ADD COLUMN lease_swept boolean NOT NULL DEFAULT false;
ALTER TABLE eec_effect_intent ADD COLUMN lease_xid bigint;
ALTER TABLE eec_effect_intent
    ADD COLUMN queue_status text COLLATE "C" GENERATED ALWAYS AS (
        CASE WHEN status IN ('pending', 'reconciling', 'failed', 'needs_decision') THEN status
             WHEN status = 'in_flight'
                  AND (NOT lease_swept OR ordering_key IS NOT NULL OR alarm_name IS NOT NULL) THEN status
        END) STORED,
    ADD COLUMN queue_lease_expires_at timestamptz GENERATED ALWAYS AS (
        CASE WHEN status = 'in_flight' AND NOT lease_swept THEN lease_expires_at END) STORED,
    ADD COLUMN parked_at timestamptz GENERATED ALWAYS AS (
        CASE WHEN status IN ('failed', 'needs_decision') THEN updated_at END) STORED;

-- the drainer's claim: due pending intents in order
DROP INDEX eec_effect_intent_due_idx;
CREATE INDEX eec_effect_intent_due_idx ON eec_effect_intent (next_attempt_at, id) WHERE queue_status = 'pending';
-- the reconciler: in-flight leases the sweep does not watch, by expiry
DROP INDEX eec_effect_intent_lease_idx;
CREATE INDEX eec_effect_intent_lease_idx ON eec_effect_intent (queue_lease_expires_at)
    WHERE queue_lease_expires_at IS NOT NULL;
-- the sweep: every lease taken by a recording at commit or a claim, by the transaction that took it
CREATE INDEX eec_effect_intent_lease_xid_idx ON eec_effect_intent (lease_xid, id) WHERE lease_xid IS NOT NULL;
-- per-key FIFO: the head of each ordering key among the intents that still hold their key up
DROP INDEX eec_effect_intent_ordering_idx;
CREATE INDEX eec_effect_intent_ordering_idx ON eec_effect_intent (ordering_key, id)
    WHERE ordering_key IS NOT NULL AND queue_status IS NOT NULL;
-- a named alarm has at most one pending occurrence
DROP INDEX eec_effect_intent_alarm_idx;
CREATE UNIQUE INDEX eec_effect_intent_alarm_idx ON eec_effect_intent (alarm_name)
    WHERE alarm_name IS NOT NULL AND queue_status = 'pending';
-- every live occurrence of an alarm
DROP INDEX eec_effect_intent_alarm_live_idx;
CREATE INDEX eec_effect_intent_alarm_live_idx ON eec_effect_intent (alarm_name)
    WHERE alarm_name IS NOT NULL AND queue_status IS NOT NULL;
-- operators and health: parked intents
DROP INDEX eec_effect_intent_parked_idx;
CREATE INDEX eec_effect_intent_parked_idx ON eec_effect_intent (queue_status, parked_at)
    WHERE queue_status IN ('failed', 'needs_decision');
-- the reconciler's claim: due rounds in order
DROP INDEX eec_effect_intent_reconcile_idx;
CREATE INDEX eec_effect_intent_reconcile_idx ON eec_effect_intent (next_attempt_at, id)
    WHERE queue_status = 'reconciling';
-- the console: intents of one waiting status by id
DROP INDEX eec_effect_intent_live_id_idx;
CREATE INDEX eec_effect_intent_live_id_idx ON eec_effect_intent (queue_status, id)
    WHERE queue_status IN ('pending', 'reconciling', 'failed', 'needs_decision');
-- the console's overview: parked intents per effect
DROP INDEX eec_effect_intent_parked_effect_idx;
CREATE INDEX eec_effect_intent_parked_effect_idx ON eec_effect_intent (queue_status, effect_name)
    WHERE queue_status IN ('failed', 'needs_decision');
-- retention walks the primary key
DROP INDEX eec_effect_intent_finished_idx;

-- The sweep's watermark: every lease taken by a transaction before (lease_xid, intent_id) was
-- seen, after that transaction ended, and is finished, redriven or watched by the lease index.
-- One row; a sweep locks it (SKIP LOCKED), so one instance sweeps at a time.
CREATE TABLE eec_effect_lease_sweep (
    name       text COLLATE "C" NOT NULL,
    lease_xid  bigint      NOT NULL,
    intent_id  bigint      NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT eec_effect_lease_sweep_pkey PRIMARY KEY (name)
);
INSERT INTO eec_effect_lease_sweep (name, lease_xid, intent_id, updated_at) VALUES ('intents', 0, 0, ductor_now());

-- Completions per minute, with the dispatch lag (from the time an intent was due to its
-- completion): added to by every batch of completions in its own statement, read by the console.
-- A row per minute; retention deletes the ones older than a day.
CREATE TABLE eec_effect_throughput (
    minute       timestamptz      NOT NULL,
    completed    bigint           NOT NULL,
    lag_ms_sum   double precision NOT NULL,
    lag_ms_max   double precision NOT NULL,
    CONSTRAINT eec_effect_throughput_pkey PRIMARY KEY (minute)
);
