-- Ductor's clock, settable per session. ductor_now() and ductor_clock() (V11) return the instant
-- in the session setting ductor.clock when a session has set it (SELECT set_config('ductor.clock',
-- '2030-01-01T00:00:00Z', false)), and the server's time otherwise. ductor-spring-boot-test sets it
-- on the connections of the application under test only, so a test moves the clock of that
-- application alone: another application on the same database keeps the server's time, and a test
-- JVM that dies leaves nothing behind (a session setting dies with its connection). No role needs
-- to own these functions to move the clock, and nothing replaces them at run time.
--
-- They stay one-expression SQL functions with the volatility of what they wrap, so the planner
-- still inlines them: current_setting() is stable, so a due or lease predicate keeps its index
-- condition, and it is read when the statement runs (a cached plan sees a setting changed since).
-- Unset, the setting reads as NULL (or '' once a session has reset it) and costs a lookup.
CREATE OR REPLACE FUNCTION ductor_now() RETURNS timestamptz
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$SELECT COALESCE(NULLIF(current_setting('ductor.clock', true), '')::timestamptz, now())$$;

CREATE OR REPLACE FUNCTION ductor_clock() RETURNS timestamptz
    LANGUAGE sql VOLATILE PARALLEL SAFE
    AS $$SELECT COALESCE(NULLIF(current_setting('ductor.clock', true), '')::timestamptz, clock_timestamp())$$;
