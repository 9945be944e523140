-- every message the inbox applied; no unique key, so that a message applied twice shows
CREATE TABLE IF NOT EXISTS applied (
    applied_order   bigserial PRIMARY KEY,
    idempotency_key text,
    id              text NOT NULL,
    key             text NOT NULL,
    seq             int  NOT NULL,
    record_key      text,
    kafka_partition int  NOT NULL,
    kafka_offset    bigint NOT NULL,
    consumer        text NOT NULL,
    applied_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
