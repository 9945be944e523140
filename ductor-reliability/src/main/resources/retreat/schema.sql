-- the sign-ups: one row per guest
CREATE TABLE IF NOT EXISTS signup (
    guest      text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- the hotel's holds, one per effect key; calls counts the duplicates it collapsed
CREATE TABLE IF NOT EXISTS retreat_hold (
    hold_key text PRIMARY KEY,
    guest    text NOT NULL,
    room     text NOT NULL,
    calls    int  NOT NULL DEFAULT 1,
    held_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
