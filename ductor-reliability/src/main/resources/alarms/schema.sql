CREATE TABLE IF NOT EXISTS beat_call (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    alarm           text        NOT NULL,
    idempotency_key text        NOT NULL,
    attempt         integer     NOT NULL,
    pid             bigint      NOT NULL,
    called_at       timestamptz NOT NULL DEFAULT clock_timestamp()
);
