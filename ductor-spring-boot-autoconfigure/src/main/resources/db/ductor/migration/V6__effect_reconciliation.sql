-- Reconciliation: an attempt whose outcome is unknown, of an effect that declares an
-- @EffectReconciler, waits in status reconciling until its reconciler says whether the receiver
-- applied it. A round is claimed under a lease (lease_owner, lease_expires_at) and counted in
-- reconcile_rounds before the reconciler is asked, so a crash during a round leaves the intent to
-- be reconciled again, never retried blindly; reconcile_outcome keeps the last answer. The new
-- columns are nullable or have a constant default: adding them changes only the catalog.
ALTER TABLE eec_effect_intent ADD COLUMN reconcile_rounds integer NOT NULL DEFAULT 0;
ALTER TABLE eec_effect_intent ADD COLUMN reconcile_outcome text;

ALTER TABLE eec_effect_intent DROP CONSTRAINT eec_effect_intent_status_check;
ALTER TABLE eec_effect_intent ADD CONSTRAINT eec_effect_intent_status_check
    CHECK (status IN ('pending', 'in_flight', 'reconciling', 'completed', 'failed', 'needs_decision', 'cancelled'));
ALTER TABLE eec_effect_intent ADD CONSTRAINT eec_effect_intent_reconcile_outcome_check
    CHECK (reconcile_outcome IS NULL OR reconcile_outcome IN ('APPLIED', 'NOT_APPLIED', 'UNKNOWN', 'FAILED'));

-- the reconciler's claim: due rounds in order
CREATE INDEX eec_effect_intent_reconcile_idx ON eec_effect_intent (next_attempt_at, id) WHERE status = 'reconciling';

-- an intent being reconciled still holds up the later intents of its ordering key, and is a live
-- occurrence of its alarm
DROP INDEX eec_effect_intent_ordering_idx;
CREATE INDEX eec_effect_intent_ordering_idx ON eec_effect_intent (ordering_key, id)
    WHERE ordering_key IS NOT NULL AND status IN ('pending', 'in_flight', 'reconciling', 'failed', 'needs_decision');
DROP INDEX eec_effect_intent_alarm_live_idx;
CREATE INDEX eec_effect_intent_alarm_live_idx ON eec_effect_intent (alarm_name)
    WHERE alarm_name IS NOT NULL AND status IN ('pending', 'in_flight', 'reconciling', 'failed', 'needs_decision');
