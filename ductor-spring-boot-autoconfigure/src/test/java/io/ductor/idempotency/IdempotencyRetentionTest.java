package io.ductor.idempotency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.idempotency.internal.IdempotencyRetentionPurger;
import io.ductor.idempotency.internal.IdempotencySettings;
import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.RetentionTask;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotencyRetentionTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static HikariDataSource dataSource;

	static IdempotencyRows rows;

	@BeforeAll
	static void migrate() {
		dataSource = postgres.newDataSource(8);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		rows = new IdempotencyRows(dataSource);
	}

	@AfterAll
	static void close() {
		dataSource.close();
	}

	@Test
	void purgesAHundredThousandRowBacklogInBatchesWhileReservesKeepSucceeding() throws Exception {
		JdbcClient jdbc = JdbcClient.create(dataSource);
		// 100,000 settled rows eight days old, past their TTL: the backlog
		jdbc.sql(
				"""
						INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status,
						    request_fingerprint, owner_token, decision_id, response_status, response_body,
						    expires_at, created_at, updated_at)
						SELECT '', 'backlog', 'old-' || i, CASE WHEN i % 10 = 0 THEN 'failed_before_commit' ELSE 'completed' END,
						       'fp', gen_random_uuid(), 'd-' || i, 200, '\\x7b7d'::bytea,
						       now() - interval '7 days', now() - interval '8 days', now() - interval '8 days'
						FROM generate_series(1, 100000) AS i""")
			.update();
		// rows retention must keep: young settled rows, a completed row still replayed,
		// an old pending row
		jdbc.sql("""
				INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status,
				    request_fingerprint, owner_token, expires_at, created_at, updated_at)
				VALUES ('', 'keep', 'young', 'completed', 'fp', gen_random_uuid(), now() + interval '1 day',
				        now(), now()),
				       ('', 'keep', 'still-replayed', 'completed', 'fp', gen_random_uuid(), now() + interval '1 day',
				        now() - interval '30 days', now() - interval '30 days'),
				       ('', 'keep', 'old-pending', 'pending', 'fp', gen_random_uuid(), now() - interval '8 days',
				        now() - interval '9 days', now() - interval '9 days')""").update();

		IdempotencyService service = IdempotencyServiceTest.service(dataSource, IdempotencySettings.defaults(), null);
		IdempotencyRetentionPurger purger = new IdempotencyRetentionPurger(dataSource, Duration.ofDays(7));
		List<Integer> batches = new ArrayList<>();
		RetentionTask task = new RetentionTask(List.of((batchSize) -> {
			int purged = purger.purge(batchSize);
			batches.add(purged);
			return purged;
		}), 1000);

		AtomicBoolean purging = new AtomicBoolean(true);
		CompletableFuture<List<ReserveOutcome>> reserving = CompletableFuture.supplyAsync(() -> {
			List<ReserveOutcome> results = new ArrayList<>();
			for (int i = 1; purging.get() || i <= 200; i++) {
				// fresh keys, and keys of the backlog (expired: reclaimed) while they are
				// being purged
				String key = (i % 2 == 0) ? "new-" + UUID.randomUUID() : "old-" + (i * 97 % 100000 + 1);
				String pool = (i % 2 == 0) ? "fresh" : "backlog";
				results.add(service.reserve("", pool, key, "fp-new"));
			}
			return results;
		});
		while (task.runOnce()) {
			// the worker runs another round at once while a batch comes back full
		}
		purging.set(false);
		List<ReserveOutcome> results = reserving.get(60, TimeUnit.SECONDS);

		assertThat(results).hasSizeGreaterThanOrEqualTo(200).allMatch(ReserveOutcome.Reserved.class::isInstance);
		assertThat(batches).hasSizeGreaterThanOrEqualTo(50).allMatch((purged) -> purged <= 1000);
		assertThat(rows.count("pool_id = 'backlog' AND status <> 'pending'")).isZero();
		assertThat(rows.count("pool_id = 'keep'")).isEqualTo(3);
		assertThat(rows.count("pool_id IN ('fresh', 'backlog') AND status = 'pending'")).isEqualTo(results.size());
	}

}
