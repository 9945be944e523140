-- every message the inbox applied; no unique key, so that a message applied twice shows
CREATE TABLE IF NOT EXISTS parcel_applied (
    applied_order   bigserial PRIMARY KEY,
    idempotency_key text,
    id              text NOT NULL,
    key             text NOT NULL,
    seq             int  NOT NULL,
    routing_key     text,
    redelivered     boolean NOT NULL,
    consumer        text NOT NULL,
    applied_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
