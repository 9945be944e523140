-- The order feed: one row per "order placed" event the shop's listener applied. The event comes
-- from Kafka (published by Ductor's relay), and the inbox (@IdempotentListener) records its
-- ductor-idempotency-key in the transaction that inserts the row, so a redelivered event adds
-- nothing. No unique constraint here: a duplicate would show as a second row.
CREATE TABLE sample_order_feed (
    id               bigserial PRIMARY KEY,
    order_id         text        NOT NULL,
    message_key      text        NOT NULL,
    summary          text        NOT NULL,
    kafka_partition  integer     NOT NULL,
    kafka_offset     bigint      NOT NULL,
    received_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sample_order_feed_order ON sample_order_feed (order_id);
