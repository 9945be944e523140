-- The operator console lists named (one-shot) alarms by name, each with its pending occurrence and its
-- newest other one, whatever that one's status: the partial indexes of live occurrences do not hold
-- completed or cancelled ones. Only alarm occurrences have an entry here, so an application that
-- schedules no named alarm pays nothing, and one that does pays an entry per occurrence it records
-- (and per status change, which already writes every index of the row).
CREATE INDEX eec_effect_intent_alarm_name_idx ON eec_effect_intent (alarm_name, id) WHERE alarm_name IS NOT NULL;

-- An operator's last pause or resume of a recurring alarm: why, who (the authenticated principal, or
-- 'anonymous') and when (database clock), written in the statement that pauses or resumes it.
-- Nullable columns without a default change only the catalog.
ALTER TABLE eec_recurring_alarm ADD COLUMN decision_reason text;
ALTER TABLE eec_recurring_alarm ADD COLUMN decided_by text;
ALTER TABLE eec_recurring_alarm ADD COLUMN decided_at timestamptz;
