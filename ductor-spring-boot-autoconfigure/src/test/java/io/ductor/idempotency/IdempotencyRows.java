package io.ductor.idempotency;

import java.util.Map;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Reads and ages {@code eec_routing_idempotency} rows for assertions, straight from the
 * table.
 */
public final class IdempotencyRows {

	private final JdbcClient jdbc;

	public IdempotencyRows(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/**
	 * @return the row's columns (status, owner_token, decision_id, response_status,
	 * ttl_millis, ...), or an empty map
	 */
	public Map<String, Object> row(String scope, String pool, String key) {
		return this.jdbc
			.sql("""
					SELECT status, owner_token::text AS owner_token, decision_id, response_status,
					       convert_from(response_body, 'UTF8') AS body, request_fingerprint,
					       (extract(epoch FROM expires_at - updated_at) * 1000)::bigint AS ttl_millis, expires_at <= now() AS expired
					FROM eec_routing_idempotency
					WHERE tenant_scope = ? AND pool_id = ? AND idempotency_key = ?""")
			.params(scope, pool, key)
			.query()
			.listOfRows()
			.stream()
			.findFirst()
			.orElse(Map.of());
	}

	public String status(String scope, String pool, String key) {
		return (String) row(scope, pool, key).get("status");
	}

	public long count(String where, Object... params) {
		return this.jdbc.sql("SELECT count(*) FROM eec_routing_idempotency WHERE " + where)
			.params(params)
			.query(Long.class)
			.single();
	}

	/**
	 * Time passes for one key: its timestamps move back by {@code interval} (a PostgreSQL
	 * interval literal).
	 */
	public void age(String scope, String pool, String key, String interval) {
		this.jdbc.sql("""
				UPDATE eec_routing_idempotency
				SET created_at = created_at - ?::interval, updated_at = updated_at - ?::interval,
				    expires_at = expires_at - ?::interval
				WHERE tenant_scope = ? AND pool_id = ? AND idempotency_key = ?""")
			.params(interval, interval, interval, scope, pool, key)
			.update();
	}

}
