-- An alarm occurrence that was running (or parked) when its alarm was rescheduled or cancelled is
-- marked superseded in the rescheduling transaction, under a row lock: it may still finish or fail,
-- but it never returns to pending beside the newer occurrence (it is cancelled instead). Adding a
-- nullable column without a default changes only the catalog.
ALTER TABLE eec_effect_intent ADD COLUMN superseded_at timestamptz;
-- rescheduling finds every live occurrence of an alarm in one index scan (the unique index holds
-- only the pending one); alarms are a small part of the outbox, and so is this index
CREATE INDEX eec_effect_intent_alarm_live_idx ON eec_effect_intent (alarm_name)
    WHERE alarm_name IS NOT NULL AND status IN ('pending', 'in_flight', 'failed', 'needs_decision');
