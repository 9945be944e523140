-- The sample shop's own tables, migrated by the application's Flyway (history in
-- flyway_schema_history). Ductor migrates its eec_* tables beside them, into ductor_schema_history.

-- What the shop sells, and how many are left.
CREATE TABLE sample_product (
    sku          text PRIMARY KEY,
    name         text   NOT NULL,
    price_cents  bigint NOT NULL CHECK (price_cents > 0),
    available    bigint NOT NULL CHECK (available >= 0)
);

INSERT INTO sample_product (sku, name, price_cents, available) VALUES
    ('book-1',   'Designing Data-Intensive Applications', 4500, 1000000),
    ('book-2',   'Release It!',                           3900, 1000000),
    ('mug-1',    'Ductor mug',                            1200, 1000000),
    ('poster-1', 'Signed poster (limited edition)',       2500, 3);

-- One row per order; the order id is also the id of its run in eec_run.
CREATE TABLE sample_order (
    id               text PRIMARY KEY,
    idempotency_key  text        NOT NULL,
    customer         text        NOT NULL,
    sku              text        NOT NULL REFERENCES sample_product (sku),
    quantity         integer     NOT NULL CHECK (quantity > 0),
    amount_cents     bigint      NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sample_order_created_at ON sample_order (created_at DESC);

-- The stock room's reservations. The key is the durable effect's idempotency key: the reservation
-- and the stock it takes commit in one transaction, and a repeated key returns the saved outcome.
CREATE TABLE sample_stock_reservation (
    idempotency_key  text PRIMARY KEY,
    order_id         text        NOT NULL,
    sku              text        NOT NULL,
    quantity         integer     NOT NULL,
    outcome          text        NOT NULL CHECK (outcome IN ('reserved', 'out_of_stock')),
    created_at       timestamptz NOT NULL DEFAULT now()
);

-- The simulated payment gateway's ledger: at most one charge per idempotency key, as a real
-- payment API promises.
CREATE TABLE sample_payment (
    id               text PRIMARY KEY,
    idempotency_key  text        NOT NULL UNIQUE,
    order_id         text        NOT NULL,
    amount_cents     bigint      NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sample_payment_order ON sample_payment (order_id);

-- Every request the gateway received, including the ones that failed, so that retries are visible.
CREATE TABLE sample_payment_request (
    id               bigserial PRIMARY KEY,
    idempotency_key  text        NOT NULL,
    order_id         text        NOT NULL,
    outcome          text        NOT NULL CHECK (outcome IN ('unavailable', 'charged', 'replayed')),
    answer_lost      boolean     NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sample_payment_request_order ON sample_payment_request (order_id);

-- The simulated mail server's outbox. It cannot deduplicate: a message sent twice is here twice.
CREATE TABLE sample_receipt (
    id          bigserial PRIMARY KEY,
    message_id  text        NOT NULL,
    order_id    text        NOT NULL,
    recipient   text        NOT NULL,
    body        text        NOT NULL,
    sent_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sample_receipt_order ON sample_receipt (order_id);
