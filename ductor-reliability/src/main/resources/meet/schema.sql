-- the orders: one row per key, written in the transaction that records its three effects
CREATE TABLE IF NOT EXISTS meet_order (
    order_key  text PRIMARY KEY,
    instance   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- the deduplicating receiver's own table: one row per effect key, calls counts the duplicates
CREATE TABLE IF NOT EXISTS meet_applied (
    effect_key text PRIMARY KEY,
    calls      int  NOT NULL DEFAULT 1
);
