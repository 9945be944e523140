-- Ductor's notion of now. Every statement of Ductor reads the time through these two functions
-- instead of now() and clock_timestamp(), so a test can move Ductor's clock (ductor-spring-boot-test
-- replaces them with a shifted body) while the server's clock and the application's own SQL are
-- left alone. They are plain SQL functions with the volatility of what they wrap: the planner
-- inlines them, so a statement plans and runs exactly as it did with now() (due and lease
-- predicates keep their index conditions), and replacing a function invalidates the plans that
-- inlined it.
--
-- ductor_now(): the start of the current transaction, as now().
CREATE OR REPLACE FUNCTION ductor_now() RETURNS timestamptz
    LANGUAGE sql STABLE PARALLEL SAFE
    AS 'SELECT now()';

-- ductor_clock(): the time at the moment of the call, as clock_timestamp().
CREATE OR REPLACE FUNCTION ductor_clock() RETURNS timestamptz
    LANGUAGE sql VOLATILE PARALLEL SAFE
    AS 'SELECT clock_timestamp()';

-- Column defaults read the same clock.
ALTER TABLE eec_run ALTER COLUMN created_at SET DEFAULT ductor_now();
ALTER TABLE eec_run ALTER COLUMN updated_at SET DEFAULT ductor_now();
ALTER TABLE eec_run_transition ALTER COLUMN created_at SET DEFAULT ductor_now();
ALTER TABLE eec_effect_intent ALTER COLUMN next_attempt_at SET DEFAULT ductor_now();
ALTER TABLE eec_effect_intent ALTER COLUMN created_at SET DEFAULT ductor_now();
ALTER TABLE eec_effect_intent ALTER COLUMN updated_at SET DEFAULT ductor_now();
ALTER TABLE eec_routing_idempotency ALTER COLUMN created_at SET DEFAULT ductor_now();
ALTER TABLE eec_routing_idempotency ALTER COLUMN updated_at SET DEFAULT ductor_now();
ALTER TABLE eec_run_compensation ALTER COLUMN created_at SET DEFAULT ductor_now();

-- The trigger of V7, reading the same clock.
CREATE OR REPLACE FUNCTION eec_compensation_settled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM eec_run WHERE id = NEW.run_id AND compensation = 'compensating' FOR NO KEY UPDATE;
    IF FOUND THEN
        UPDATE eec_run SET compensation = 'compensated', updated_at = ductor_now()
        WHERE id = NEW.run_id AND compensation = 'compensating'
          AND NOT EXISTS (SELECT 1 FROM eec_effect_intent c
                          WHERE c.run_id = NEW.run_id AND c.compensation_of IS NOT NULL
                            AND c.status NOT IN ('completed', 'cancelled'));
    END IF;
    RETURN NULL;
END $$;
