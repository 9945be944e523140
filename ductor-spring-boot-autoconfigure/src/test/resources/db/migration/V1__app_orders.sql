-- An application's own migration, run by Boot's Flyway beside Ductor's.
CREATE TABLE app_order (id bigint PRIMARY KEY, customer text NOT NULL);
