-- Compensations (sagas). A tick that records an effect may register the effect that undoes it; when
-- the run fails, the undo of every step that may have reached its receiver is recorded, in the
-- failing transaction, as an ordinary intent (key 'compensate:' || the original's key).

-- Where a failed run's undo is: NULL (nothing to undo), 'compensating' (compensations recorded and
-- not all finished) or 'compensated' (every compensation completed, or was cancelled by an operator).
-- The status stays 'failed': the run failed, and this says how far undoing it got.
ALTER TABLE eec_run ADD COLUMN compensation text
    CONSTRAINT eec_run_compensation_check CHECK (compensation IN ('compensating', 'compensated'));

-- The compensations registered by a run's ticks, one per original effect intent: written in the
-- tick's transaction (a rolled-back tick registers nothing) and owned by the run, so the retention
-- of finished intents never loses the undo of a completed step.
CREATE TABLE eec_run_compensation (
    run_id              text COLLATE "C" NOT NULL,
    original_key        text COLLATE "C" NOT NULL,
    seq                 bigint      NOT NULL,
    position            bigint      GENERATED ALWAYS AS IDENTITY,
    effect_name         text        NOT NULL,
    payload             jsonb       NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT eec_run_compensation_pkey PRIMARY KEY (run_id, original_key),
    CONSTRAINT eec_run_compensation_run_fkey FOREIGN KEY (run_id) REFERENCES eec_run (id) ON DELETE CASCADE
);

-- A compensation intent names the intent it undoes. It is not dispatched while that intent may still
-- run (pending, in flight, or waiting for a decision): an undo never overtakes what it undoes.
ALTER TABLE eec_effect_intent ADD COLUMN compensation_of bigint;

-- When a run's last live compensation finishes, in the same transaction as that completion (so no
-- crash can leave the run 'compensating' after its undo finished), the run becomes 'compensated'.
-- The run row is locked first, so that of two compensations of one run finishing at once, the later
-- one sees the earlier one's commit.
CREATE FUNCTION eec_compensation_settled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM eec_run WHERE id = NEW.run_id AND compensation = 'compensating' FOR NO KEY UPDATE;
    IF FOUND THEN
        UPDATE eec_run SET compensation = 'compensated', updated_at = now()
        WHERE id = NEW.run_id AND compensation = 'compensating'
          AND NOT EXISTS (SELECT 1 FROM eec_effect_intent c
                          WHERE c.run_id = NEW.run_id AND c.compensation_of IS NOT NULL
                            AND c.status NOT IN ('completed', 'cancelled'));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER eec_compensation_settled AFTER UPDATE OF status ON eec_effect_intent
    FOR EACH ROW
    WHEN (NEW.compensation_of IS NOT NULL AND NEW.run_id IS NOT NULL
          AND NEW.status IN ('completed', 'cancelled') AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION eec_compensation_settled();
