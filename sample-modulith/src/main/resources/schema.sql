CREATE TABLE IF NOT EXISTS sample_order (
    id text PRIMARY KEY,
    sku text NOT NULL,
    quantity integer NOT NULL
);
CREATE TABLE IF NOT EXISTS stock_movement (
    id bigserial PRIMARY KEY,
    publication_key text NOT NULL UNIQUE,
    order_id text NOT NULL,
    sku text NOT NULL,
    quantity integer NOT NULL
);
