package io.ductor.reliability.workload;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The workload's own tables: the two receivers of its effects and the orders its
 * idempotent endpoint creates. Safe to create from several instances at once.
 */
public final class WorkloadSchema {

	private WorkloadSchema() {
	}

	public static void create(DataSource dataSource) {
		JdbcClient jdbc = JdbcClient.create(dataSource);
		new TransactionTemplate(new DataSourceTransactionManager(dataSource)).executeWithoutResult((status) -> {
			jdbc.sql("SELECT pg_advisory_xact_lock(4242)").query().singleRow();
			// the deduplicating receiver: the effect's idempotency key is its primary key
			jdbc.sql("""
					CREATE TABLE IF NOT EXISTS wl_dedup_receiver (
					    idempotency_key      text PRIMARY KEY,
					    instance             text NOT NULL,
					    attempt              int  NOT NULL,
					    duplicates_collapsed int  NOT NULL DEFAULT 0,
					    applied_at           timestamptz NOT NULL DEFAULT clock_timestamp())""").update();
			// the raw receiver: every call, duplicates included
			jdbc.sql("""
					CREATE TABLE IF NOT EXISTS wl_raw_calls (
					    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
					    idempotency_key text NOT NULL,
					    effect          text NOT NULL,
					    instance        text NOT NULL,
					    attempt         int  NOT NULL,
					    outcome         text NOT NULL DEFAULT 'ok',
					    called_at       timestamptz NOT NULL DEFAULT clock_timestamp())""").update();
			jdbc.sql("CREATE INDEX IF NOT EXISTS wl_raw_calls_key_idx ON wl_raw_calls (idempotency_key)").update();
			// orders made by the idempotent endpoint; deliberately no unique key, so a
			// duplicate would show
			jdbc.sql("""
					CREATE TABLE IF NOT EXISTS wl_orders (
					    id              text PRIMARY KEY,
					    tenant          text NOT NULL,
					    idempotency_key text NOT NULL,
					    body            text NOT NULL,
					    instance        text NOT NULL,
					    created_at      timestamptz NOT NULL DEFAULT clock_timestamp())""").update();
		});
	}

}
