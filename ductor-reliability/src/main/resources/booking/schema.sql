-- the bookings; deliberately no unique request key, so that a second booking for one key would show
CREATE TABLE IF NOT EXISTS booking (
    id          text PRIMARY KEY,
    request_key text NOT NULL,
    guest       text NOT NULL,
    room        text NOT NULL,
    nights      int  NOT NULL,
    made_by     text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS booking_request_key_idx ON booking (request_key);
-- the hotel's holds, one per effect key; calls counts the duplicates it collapsed
CREATE TABLE IF NOT EXISTS hotel_hold (
    hold_key   text PRIMARY KEY,
    booking_id text NOT NULL,
    room       text NOT NULL,
    nights     int  NOT NULL,
    calls      int  NOT NULL DEFAULT 1,
    held_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
