package io.ductor.effect;

import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A receiver for tests that keeps, in the database, every call it gets (the raw log) and
 * one row per idempotency key (what a deduplicating receiver applies).
 */
class RecordingReceiver {

	private final JdbcClient jdbc;

	RecordingReceiver(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
		this.jdbc
			.sql("""
					CREATE TABLE IF NOT EXISTS test_call_log (
					    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, effect text NOT NULL, idempotency_key text NOT NULL,
					    attempt int NOT NULL, intent_id bigint NOT NULL, payload text, received_at timestamptz NOT NULL DEFAULT clock_timestamp())""")
			.update();
		this.jdbc.sql("""
				CREATE TABLE IF NOT EXISTS test_applied (
				    idempotency_key text PRIMARY KEY, effect text NOT NULL, payload text)""").update();
	}

	/**
	 * Records the call in the raw log and applies it once per key, both outside any
	 * transaction.
	 */
	void receive(String payload) {
		EffectContext context = EffectContext.current();
		this.jdbc.sql(
				"INSERT INTO test_call_log (effect, idempotency_key, attempt, intent_id, payload) VALUES (?, ?, ?, ?, ?)")
			.params(context.effectName(), context.idempotencyKey(), context.attempt(), context.intentId(), payload)
			.update();
		this.jdbc
			.sql("INSERT INTO test_applied (idempotency_key, effect, payload) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
			.params(context.idempotencyKey(), context.effectName(), payload)
			.update();
	}

	long calls() {
		return this.jdbc.sql("SELECT count(*) FROM test_call_log").query(Long.class).single();
	}

	long calls(String effect) {
		return this.jdbc.sql("SELECT count(*) FROM test_call_log WHERE effect = ?")
			.param(effect)
			.query(Long.class)
			.single();
	}

	List<Map<String, Object>> log(String effect) {
		return this.jdbc.sql("SELECT * FROM test_call_log WHERE effect = ? ORDER BY seq")
			.param(effect)
			.query()
			.listOfRows();
	}

	long applied() {
		return this.jdbc.sql("SELECT count(*) FROM test_applied").query(Long.class).single();
	}

}
