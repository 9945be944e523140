-- the shipments, one row per committed transaction of a producer thread
CREATE TABLE IF NOT EXISTS shipment (
    id         text PRIMARY KEY,
    key        text NOT NULL,
    seq        int  NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- per record key, the last seq given: its row lock orders the transactions of one key
CREATE TABLE IF NOT EXISTS shipment_counter (
    key text PRIMARY KEY,
    n   int  NOT NULL
);
