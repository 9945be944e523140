-- Ductor's identifiers (keys, run ids, stamps, names, statuses) are compared byte for byte: they
-- have no linguistic order, and under the database's default collation every lookup and insert in
-- their B-tree indexes paid for locale-aware comparisons (measured: about a fifth of a drainer
-- claim). Equality is unchanged for the deterministic collations PostgreSQL allows as defaults.
-- The columns keep their type, so the tables are not rewritten; the indexes on them are rebuilt.

ALTER TABLE eec_run
    ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN type TYPE text COLLATE "C";

ALTER TABLE eec_run_transition
    ALTER COLUMN run_id TYPE text COLLATE "C",
    ALTER COLUMN stamp TYPE text COLLATE "C";

ALTER TABLE eec_effect_intent
    ALTER COLUMN idempotency_key TYPE text COLLATE "C",
    ALTER COLUMN status TYPE text COLLATE "C",
    ALTER COLUMN ordering_key TYPE text COLLATE "C",
    ALTER COLUMN alarm_name TYPE text COLLATE "C",
    ALTER COLUMN run_id TYPE text COLLATE "C";

ALTER TABLE eec_routing_idempotency
    ALTER COLUMN tenant_scope TYPE text COLLATE "C",
    ALTER COLUMN pool_id TYPE text COLLATE "C",
    ALTER COLUMN idempotency_key TYPE text COLLATE "C";
