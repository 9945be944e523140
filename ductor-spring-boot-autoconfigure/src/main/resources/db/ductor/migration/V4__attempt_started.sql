-- When the current attempt of an intent was seen to start: set, durably, just before a receiver
-- that cannot deduplicate (NOT_IDEMPOTENT) is called, and cleared by every claim. An expired lease
-- whose attempt never started cannot have reached the receiver, so the reconciler returns it to
-- pending uncounted instead of parking it for a decision. No index holds it: setting it keeps the
-- update heap-only (HOT).
ALTER TABLE eec_effect_intent ADD COLUMN attempt_started_at timestamptz;
