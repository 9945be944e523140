-- No query reads eec_run_active_idx, and because it holds updated_at, which every tick sets, it
-- kept every tick from being a heap-only (HOT) update: each tick wrote new entries into it and the
-- primary key. Without it a tick changes no indexed column.
DROP INDEX IF EXISTS eec_run_active_idx;
