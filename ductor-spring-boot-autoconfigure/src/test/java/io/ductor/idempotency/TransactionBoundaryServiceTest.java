package io.ductor.idempotency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.idempotency.internal.DefaultIdempotencyService;
import io.ductor.idempotency.internal.IdempotencySettings;
import io.ductor.jdbc.BrokerTransactionManager;
import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.json.internal.JsonCodec;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What {@link IdempotencyService} joins: only a transaction holding a connection of its
 * {@code DataSource}. A transaction of another transaction manager (a message broker's,
 * as a Kafka or JMS listener container runs its listener in) is no database transaction:
 * inside one, {@code executeInTransaction} still parks its duplicates without a
 * connection, and {@code execute} releases a key whose action failed, as outside any
 * transaction. Inside a database transaction, {@code execute} releases the key of a
 * failed action in that transaction, so a caller that goes on and commits leaves no
 * pending reservation behind.
 */
class TransactionBoundaryServiceTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static HikariDataSource dataSource;

	static JdbcClient jdbc;

	static IdempotencyRows rows;

	/** A message broker's transactions: they hold nothing of the database. */
	static final TransactionTemplate broker = new TransactionTemplate(new BrokerTransactionManager());

	static TransactionTemplate database;

	@BeforeAll
	static void migrate() {
		// the holder's connection, one for another request, one spare: no room for
		// duplicates that hold one each
		dataSource = postgres.newDataSource(3);
		dataSource.setConnectionTimeout(2000);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		jdbc = JdbcClient.create(dataSource);
		jdbc.sql("CREATE TABLE shipment (id text PRIMARY KEY)").update();
		rows = new IdempotencyRows(dataSource);
		database = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
	}

	@AfterAll
	static void close() {
		dataSource.close();
	}

	static IdempotencyService service(DuplicatePolicy policy) {
		return new DefaultIdempotencyService(dataSource, new DataSourceTransactionManager(dataSource),
				new io.ductor.idempotency.internal.IdempotencyStore(dataSource),
				new JsonCodec(JsonMapper.builder().build()), new IdempotencySettings(Duration.ofMinutes(10),
						Duration.ofMinutes(10), policy, Duration.ofSeconds(60), Duration.ofMillis(200)),
				null, io.ductor.observation.internal.DuctorInstrumentation.NOOP);
	}

	static IdempotentRequest request(String key) {
		return new IdempotentRequest("", "shipments", key, "fp-1");
	}

	@Test
	void duplicatesInsideAMessageBrokersTransactionWaitWithoutAConnection() throws Exception {
		IdempotencyService service = service(DuplicatePolicy.WAIT);
		String key = UUID.randomUUID().toString();
		CountDownLatch gate = new CountDownLatch(1);
		AtomicInteger runs = new AtomicInteger();
		Supplier<String> ship = () -> {
			runs.incrementAndGet();
			jdbc.sql("INSERT INTO shipment VALUES (?)").param(key).update();
			try {
				gate.await(60, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return "shipped " + key;
		};
		ExecutorService listeners = Executors.newFixedThreadPool(7);
		try {
			List<Future<IdempotentResult<String>>> deliveries = new ArrayList<>();
			deliveries.add(listeners.submit(
					() -> broker.execute((status) -> service.executeInTransaction(request(key), String.class, ship))));
			await().atMost(Duration.ofSeconds(60)).until(() -> runs.get() == 1);
			// the message is redelivered six times while the first delivery runs
			for (int i = 0; i < 6; i++) {
				deliveries.add(listeners.submit(() -> broker
					.execute((status) -> service.executeInTransaction(request(key), String.class, ship))));
			}
			await().atMost(Duration.ofSeconds(60))
				.until(() -> service.parkedDuplicates() + done(deliveries.subList(1, 7)) == 6);

			// another message still gets a connection while the redeliveries wait
			String other = UUID.randomUUID().toString();
			IdempotentResult<String> unrelated = broker.execute(
					(status) -> service.executeInTransaction(request(other), String.class, () -> "shipped " + other));
			assertThat(unrelated.replayed()).isFalse();

			gate.countDown();
			List<Object> answers = new ArrayList<>();
			for (Future<IdempotentResult<String>> delivery : deliveries) {
				try {
					answers.add(delivery.get(60, TimeUnit.SECONDS).value());
				}
				catch (java.util.concurrent.ExecutionException ex) {
					answers.add(ex.getCause().toString());
				}
			}
			assertThat(answers).containsOnly("shipped " + key);
			assertThat(runs).hasValue(1);
			assertThat(jdbc.sql("SELECT count(*) FROM shipment WHERE id = ?").param(key).query(Long.class).single())
				.isOne();
		}
		finally {
			gate.countDown();
			listeners.shutdownNow();
		}
	}

	@Test
	void aTwoPhaseActionThatFailsInsideAMessageBrokersTransactionReleasesItsKey() {
		IdempotencyService service = service(DuplicatePolicy.REJECT);
		String key = UUID.randomUUID().toString();
		assertThatThrownBy(
				() -> broker.executeWithoutResult((status) -> service.execute(request(key), String.class, () -> {
					throw new IllegalStateException("the carrier is down");
				})))
			.hasMessageContaining("the carrier is down");
		assertThat(rows.status("", "shipments", key)).isEqualTo("failed_before_commit");
		// the redelivery runs at once, not after the pending TTL
		assertThat(service.execute(request(key), String.class, () -> "shipped").value()).isEqualTo("shipped");
	}

	@Test
	void aTwoPhaseActionThatFailsInACallersTransactionThatCommitsLeavesItsKeyFree() {
		IdempotencyService service = service(DuplicatePolicy.REJECT);
		String key = UUID.randomUUID().toString();
		database.executeWithoutResult((status) -> {
			jdbc.sql("INSERT INTO shipment VALUES (?)").param(key + "-noted").update();
			try {
				service.execute(request(key), String.class, () -> {
					throw new IllegalStateException("the carrier is down");
				});
			}
			catch (IllegalStateException ex) {
				// the caller notes the failure and commits its own work
			}
		});
		assertThat(
				jdbc.sql("SELECT count(*) FROM shipment WHERE id = ?").param(key + "-noted").query(Long.class).single())
			.isOne();
		assertThat(rows.status("", "shipments", key)).isEqualTo("failed_before_commit");
		assertThat(service.execute(request(key), String.class, () -> "shipped").value()).isEqualTo("shipped");

		// a caller that rolls back takes the reservation with it
		String rolledBack = UUID.randomUUID().toString();
		assertThatThrownBy(() -> database
			.executeWithoutResult((status) -> service.execute(request(rolledBack), String.class, () -> {
				throw new IllegalStateException("the carrier is down");
			}))).hasMessageContaining("the carrier is down");
		assertThat(rows.row("", "shipments", rolledBack)).isEmpty();
	}

	private static long done(List<? extends Future<?>> futures) {
		return futures.stream().filter(Future::isDone).count();
	}

}
