-- An operator's decision on an intent (retry, mark done, mark failed, cancel, compensate): why, who
-- (the authenticated principal, or 'anonymous') and when (database clock), written in the same
-- statement that moves the intent. Nullable columns without a default change only the catalog.
ALTER TABLE eec_effect_intent ADD COLUMN decision_reason text;
ALTER TABLE eec_effect_intent ADD COLUMN decided_by text;
ALTER TABLE eec_effect_intent ADD COLUMN decided_at timestamptz;

-- The operator console lists intents of one live status by id (keyset paging). Finished intents are
-- most of the table and their pages are dense in the primary key; the live ones are a small part,
-- found here without reading the finished ones. in_flight is left out: a claim moves an intent to
-- in_flight and a completion out of it, so neither writes an entry here (an intent costs it one
-- entry when it is recorded, and one per retry); the console lists in-flight intents through the
-- lease index, as many as the drainers hold at once.
CREATE INDEX eec_effect_intent_live_id_idx ON eec_effect_intent (status, id)
    WHERE status IN ('pending', 'reconciling', 'failed', 'needs_decision');

-- The console's overview counts failed and undecided intents per effect from this index alone
-- (an index-only scan); parked intents are few, and an intent enters or leaves it only when it is
-- parked or decided.
CREATE INDEX eec_effect_intent_parked_effect_idx ON eec_effect_intent (status, effect_name)
    WHERE status IN ('failed', 'needs_decision');
