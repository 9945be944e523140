-- Ductor's durable tables. The eec_ prefix marks the Enterprise Eventing Core tables of the design.
-- Every hot query has a partial index on the live statuses only, so finished rows cost nothing to it.

-- Runs: one row per durable run, advanced only by ticks (conditional update on record_version).
CREATE TABLE eec_run (
    id                  text        NOT NULL,
    type                text        NOT NULL,
    status              text        NOT NULL DEFAULT 'active',
    state               jsonb       NOT NULL,
    record_version      bigint      NOT NULL DEFAULT 1,
    last_transition_seq bigint      NOT NULL DEFAULT 0,
    failure_reason      text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    ended_at            timestamptz,
    CONSTRAINT eec_run_pkey PRIMARY KEY (id),
    CONSTRAINT eec_run_status_check CHECK (status IN ('active', 'completed', 'failed')),
    CONSTRAINT eec_run_version_check CHECK (record_version >= 1 AND last_transition_seq >= 0)
);

CREATE INDEX eec_run_active_idx ON eec_run (type, updated_at) WHERE status = 'active';

-- Append-only history: one row per applied tick. The unique stamp is what makes a re-applied tick
-- a no-op; the primary key on (run_id, seq) is what keeps the history gap-free and single-valued.
CREATE TABLE eec_run_transition (
    run_id         text        NOT NULL,
    seq            bigint      NOT NULL,
    stamp          text        NOT NULL,
    input          jsonb,
    record_version bigint      NOT NULL,
    run_status     text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT eec_run_transition_pkey PRIMARY KEY (run_id, seq),
    CONSTRAINT eec_run_transition_stamp_key UNIQUE (run_id, stamp),
    CONSTRAINT eec_run_transition_run_fkey FOREIGN KEY (run_id) REFERENCES eec_run (id) ON DELETE CASCADE
);

-- Effects: the outbox. A row is committed in the caller's transaction, claimed with a lease by a
-- drainer, and completed with an update fenced by lease owner and attempt.
CREATE TABLE eec_effect_intent (
    id                  bigint      GENERATED ALWAYS AS IDENTITY,
    effect_name         text        NOT NULL,
    idempotency_key     text        NOT NULL,
    payload             jsonb       NOT NULL,
    payload_fingerprint text        NOT NULL,
    status              text        NOT NULL DEFAULT 'pending',
    receiver            text        NOT NULL DEFAULT 'IDEMPOTENT',
    attempts            integer     NOT NULL DEFAULT 0,
    max_attempts        integer,
    next_attempt_at     timestamptz NOT NULL DEFAULT now(),
    lease_owner         text,
    lease_expires_at    timestamptz,
    ordering_key        text,
    alarm_name          text,
    run_id              text,
    last_error          text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    finished_at         timestamptz,
    CONSTRAINT eec_effect_intent_pkey PRIMARY KEY (id),
    CONSTRAINT eec_effect_intent_key UNIQUE (idempotency_key),
    CONSTRAINT eec_effect_intent_status_check
        CHECK (status IN ('pending', 'in_flight', 'completed', 'failed', 'needs_decision', 'cancelled')),
    CONSTRAINT eec_effect_intent_receiver_check CHECK (receiver IN ('IDEMPOTENT', 'NOT_IDEMPOTENT')),
    CONSTRAINT eec_effect_intent_lease_check CHECK (status <> 'in_flight' OR lease_expires_at IS NOT NULL)
);

-- the drainer's claim: due pending intents in order
CREATE INDEX eec_effect_intent_due_idx ON eec_effect_intent (next_attempt_at, id) WHERE status = 'pending';
-- the reconciler: leases that have expired
CREATE INDEX eec_effect_intent_lease_idx ON eec_effect_intent (lease_expires_at) WHERE status = 'in_flight';
-- per-key FIFO: the head of each ordering key among the intents that still hold their key up
CREATE INDEX eec_effect_intent_ordering_idx ON eec_effect_intent (ordering_key, id)
    WHERE ordering_key IS NOT NULL AND status IN ('pending', 'in_flight', 'failed', 'needs_decision');
-- a named alarm has at most one pending occurrence
CREATE UNIQUE INDEX eec_effect_intent_alarm_idx ON eec_effect_intent (alarm_name)
    WHERE alarm_name IS NOT NULL AND status = 'pending';
-- operators and health: parked intents
CREATE INDEX eec_effect_intent_parked_idx ON eec_effect_intent (status, updated_at)
    WHERE status IN ('failed', 'needs_decision');
-- the intents a run's ticks recorded
CREATE INDEX eec_effect_intent_run_idx ON eec_effect_intent (run_id) WHERE run_id IS NOT NULL;
-- retention: finished intents by age
CREATE INDEX eec_effect_intent_finished_idx ON eec_effect_intent (finished_at)
    WHERE status IN ('completed', 'cancelled');

-- Ingress idempotency: one decision per (tenant, pool, key). Reserve is a single INSERT ... ON CONFLICT
-- that can reclaim failed_before_commit rows and completed rows past their TTL; complete and fail are
-- fenced by owner_token, so an owner whose reservation was swept and reclaimed cannot settle it.
-- expires_at is the end of the pending reservation's TTL, then of the completed decision's validity.
CREATE TABLE eec_routing_idempotency (
    tenant_scope        text        NOT NULL,
    pool_id             text        NOT NULL,
    idempotency_key     text        NOT NULL,
    status              text        NOT NULL,
    request_fingerprint text        NOT NULL,
    owner_token         uuid        NOT NULL,
    decision_id         text,
    response_status     integer,
    response_headers    jsonb,
    response_body       bytea,
    has_waiters         boolean     NOT NULL DEFAULT false,
    expires_at          timestamptz NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT eec_routing_idempotency_pkey PRIMARY KEY (tenant_scope, pool_id, idempotency_key),
    CONSTRAINT eec_routing_idempotency_status_check
        CHECK (status IN ('pending', 'completed', 'failed_before_commit')),
    CONSTRAINT eec_routing_idempotency_key_check
        CHECK (char_length(idempotency_key) BETWEEN 1 AND 255)
);

-- the sweeper: pending reservations past their TTL
CREATE INDEX eec_routing_idempotency_pending_idx ON eec_routing_idempotency (expires_at)
    WHERE status = 'pending';
-- retention: settled rows by age
CREATE INDEX eec_routing_idempotency_settled_idx ON eec_routing_idempotency (updated_at)
    WHERE status IN ('completed', 'failed_before_commit');
