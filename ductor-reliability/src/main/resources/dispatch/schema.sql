-- the parcels, one row per committed transaction of a dispatcher thread
CREATE TABLE IF NOT EXISTS parcel (
    id         text PRIMARY KEY,
    key        text NOT NULL,
    seq        int  NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- per routing key, the last seq given: its row lock orders the transactions of one key
CREATE TABLE IF NOT EXISTS parcel_counter (
    key text PRIMARY KEY,
    n   int  NOT NULL
);
