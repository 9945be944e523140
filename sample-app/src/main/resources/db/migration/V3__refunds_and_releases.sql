-- The undo of an order that failed after it was charged (issue 20): the gateway's refunds and the
-- stock room's releases, each applied at most once per idempotency key ('compensate:' || the key
-- of the charge or reservation it undoes), like the charges and reservations themselves.

CREATE TABLE sample_refund (
    idempotency_key  text PRIMARY KEY,
    charge_key       text        NOT NULL,
    order_id         text        NOT NULL,
    charge_id        text,
    amount_cents     bigint      NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sample_refund_order ON sample_refund (order_id);

CREATE TABLE sample_stock_release (
    idempotency_key  text PRIMARY KEY,
    reservation_key  text        NOT NULL,
    order_id         text        NOT NULL,
    quantity         integer     NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sample_stock_release_order ON sample_stock_release (order_id);
