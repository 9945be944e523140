package io.ductor.idempotency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import io.ductor.idempotency.internal.DefaultIdempotencyService;
import io.ductor.idempotency.internal.IdempotencySettings;
import io.ductor.idempotency.internal.IdempotencySweeper;
import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.internal.ListenerProbe;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.test.PostgresExtension;

import static io.ductor.idempotency.IdempotencyServiceTest.await;
import static io.ductor.idempotency.IdempotencyServiceTest.awaitTrue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The one-transaction form of {@link IdempotencyService} on a pool of 10 connections:
 * duplicates of an open transaction wait without a connection, and a lost connection
 * leaves no trace.
 */
class OneTransactionServiceTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static HikariDataSource dataSource;

	static JdbcClient jdbc;

	static IdempotencyRows rows;

	static final Map<String, AtomicInteger> released = new ConcurrentHashMap<>();

	static final DuctorObserver observer = new DuctorObserver() {

		@Override
		public void released(String reason, int count) {
			released.computeIfAbsent(reason, (r) -> new AtomicInteger()).addAndGet(count);
		}

	};

	@BeforeAll
	static void migrate() {
		dataSource = postgres.newDataSource(10);
		dataSource.setConnectionTimeout(2000);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		jdbc = JdbcClient.create(dataSource);
		jdbc.sql("CREATE TABLE placed (id text PRIMARY KEY)").update();
		rows = new IdempotencyRows(dataSource);
	}

	@AfterAll
	static void close() {
		dataSource.close();
	}

	static IdempotencyService service(DuplicatePolicy policy, Duration waitTimeout, Duration pollInterval) {
		return service(policy, waitTimeout, pollInterval, null);
	}

	static IdempotencyService service(DuplicatePolicy policy, Duration waitTimeout, Duration pollInterval,
			PostgresNotificationListener listener) {
		return new DefaultIdempotencyService(dataSource, new DataSourceTransactionManager(dataSource),
				new io.ductor.idempotency.internal.IdempotencyStore(dataSource),
				new JsonCodec(JsonMapper.builder().build()),
				new IdempotencySettings(Duration.ofMinutes(10), Duration.ofMinutes(10), policy, waitTimeout,
						pollInterval),
				listener, io.ductor.observation.internal.DuctorInstrumentation.of(observer, DuctorObservations.NOOP));
	}

	static IdempotentRequest request(String key) {
		return new IdempotentRequest("", "placements", key, "fp-1");
	}

	static long placed(String key) {
		return jdbc.sql("SELECT count(*) FROM placed WHERE id = ?").param(key).query(Long.class).single();
	}

	@Test
	void eachReservationOfTheOneTransactionFormIsObservedWithItsOutcome() {
		List<String> observed = new java.util.concurrent.CopyOnWriteArrayList<>();
		io.micrometer.observation.ObservationRegistry registry = io.micrometer.observation.ObservationRegistry.create();
		registry.observationConfig().observationHandler(new io.micrometer.observation.ObservationHandler<>() {

			@Override
			public boolean supportsContext(io.micrometer.observation.Observation.Context context) {
				return true;
			}

			@Override
			public void onStop(io.micrometer.observation.Observation.Context context) {
				observed.add(context.getName() + " outcome=" + context.getLowCardinalityKeyValue("outcome").getValue());
			}

		});
		IdempotencyService service = new DefaultIdempotencyService(dataSource,
				new DataSourceTransactionManager(dataSource),
				new io.ductor.idempotency.internal.IdempotencyStore(dataSource),
				new JsonCodec(JsonMapper.builder().build()), new IdempotencySettings(Duration.ofMinutes(10),
						Duration.ofMinutes(10), DuplicatePolicy.REJECT, Duration.ofSeconds(5), Duration.ofSeconds(1)),
				null,
				io.ductor.observation.internal.DuctorInstrumentation.of(observer,
						new io.ductor.observation.internal.MicrometerDuctorObservations(registry, null,
								io.ductor.observation.internal.TraceContextSource.NONE, true)));
		IdempotentRequest request = request(UUID.randomUUID().toString());
		TransactionalDecision<String> decision = new TransactionalDecision<>() {

			@Override
			public String reserved(Reservation reservation,
					org.springframework.transaction.TransactionStatus transaction) {
				service.complete(reservation, "placed",
						new StoredResponse(201, Map.of(), "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
				return "reserved";
			}

			@Override
			public String notReserved(ReserveOutcome outcome) {
				return outcome.getClass().getSimpleName();
			}

		};
		assertThat(service.executeInTransaction(request, DuplicatePolicy.REJECT, decision)).isEqualTo("reserved");
		assertThat(service.executeInTransaction(request, DuplicatePolicy.REJECT, decision)).isEqualTo("Replay");
		assertThat(observed).containsExactly("ductor.idempotency.reserve outcome=reserved",
				"ductor.idempotency.reserve outcome=replay");
	}

	@Test
	void aDuplicateStormOnAPoolOfTenHoldsOnlyTheHoldersConnectionAndRunsTheActionOnce() throws Exception {
		IdempotencyService service = service(DuplicatePolicy.WAIT, Duration.ofSeconds(60), Duration.ofSeconds(5));
		String key = UUID.randomUUID().toString();
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger runs = new AtomicInteger();
		int duplicates = 100;
		ExecutorService threads = Executors.newFixedThreadPool(duplicates + 1);
		try {
			List<Future<IdempotentResult<String>>> results = new ArrayList<>();
			for (int i = 0; i <= duplicates; i++) {
				results.add(threads.submit(() -> service.executeInTransaction(request(key), String.class, () -> {
					runs.incrementAndGet();
					jdbc.sql("INSERT INTO placed (id) VALUES (?)").param(key).update();
					await(release);
					return "placed " + key;
				})));
			}
			// one runs its action in its transaction; every other caller is parked,
			// holding no connection
			awaitTrue(() -> runs.get() == 1 && service.parkedDuplicates() == duplicates);
			// only the holder's connection is in use (a duplicate looking again takes one
			// for a moment)
			assertThat(fewestActiveWithin(Duration.ofSeconds(1))).isLessThanOrEqualTo(1);
			// other work gets connections at once (the pool's connection timeout is 2 s)
			for (int i = 0; i < 20; i++) {
				String other = UUID.randomUUID().toString();
				assertThat(service.executeInTransaction(request(other), String.class, () -> "other").value())
					.isEqualTo("other");
			}
			release.countDown();
			for (Future<IdempotentResult<String>> result : results) {
				assertThat(result.get(60, TimeUnit.SECONDS).value()).isEqualTo("placed " + key);
			}
		}
		finally {
			release.countDown();
			threads.shutdownNow();
		}
		assertThat(runs).hasValue(1);
		assertThat(placed(key)).isOne();
		assertThat(rows.status("", "placements", key)).isEqualTo("completed");
	}

	@Test
	void aConnectionLostBeforeTheCommitLeavesNeitherTheWriteNorTheReservationAndTheKeyIsFreeAtOnce() {
		IdempotencyService service = service(DuplicatePolicy.WAIT, Duration.ofSeconds(5), Duration.ofSeconds(1));
		String key = UUID.randomUUID().toString();
		int completionFailed = count("completion_failed");
		int handlerFailed = count("handler_failed");
		assertThatThrownBy(() -> service.executeInTransaction(request(key), String.class, () -> {
			jdbc.sql("INSERT INTO placed (id) VALUES (?)").param(key).update();
			int backend = jdbc.sql("SELECT pg_backend_pid()").query(Integer.class).single();
			// as a crash or a database failover would: the connection goes before the
			// commit
			try (HikariDataSource other = postgres.newDataSource(1)) {
				JdbcClient.create(other)
					.sql("SELECT pg_terminate_backend(?)")
					.param(backend)
					.query(Boolean.class)
					.single();
			}
			return "placed";
		})).isInstanceOf(RuntimeException.class);
		assertThat(placed(key)).isZero();
		assertThat(rows.row("", "placements", key)).isEmpty();
		// the action returned: it is the completion that failed on the lost connection
		assertThat(count("completion_failed")).isEqualTo(completionFailed + 1);
		assertThat(count("handler_failed")).isEqualTo(handlerFailed);
		assertThat(service.executeInTransaction(request(key), String.class, () -> {
			jdbc.sql("INSERT INTO placed (id) VALUES (?)").param(key).update();
			return "placed";
		}).replayed()).isFalse();
		assertThat(placed(key)).isOne();
	}

	@Test
	void aTwoPhaseReserveOfAKeyHeldByAnOpenTransactionIsInFlightAtOnceInsteadOfWaitingInsidePostgres()
			throws Exception {
		IdempotencyService service = service(DuplicatePolicy.REJECT, Duration.ofSeconds(5), Duration.ofSeconds(1));
		String key = UUID.randomUUID().toString();
		CountDownLatch holding = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CompletableFuture<IdempotentResult<String>> holder = CompletableFuture
			.supplyAsync(() -> service.executeInTransaction(request(key), String.class, () -> {
				holding.countDown();
				await(release);
				return "first";
			}));
		await(holding);
		try {
			long started = System.nanoTime();
			assertThat(service.reserve(request(key))).isInstanceOf(ReserveOutcome.InFlight.class);
			assertThatThrownBy(() -> service.executeInTransaction(request(key), String.class, () -> "second"))
				.isInstanceOf(IdempotencyKeyInFlightException.class)
				.hasMessageContaining("duplicate policy REJECT");
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
		}
		finally {
			release.countDown();
		}
		assertThat(holder.get(20, TimeUnit.SECONDS).value()).isEqualTo("first");
		assertThat(service.reserve(request(key))).isInstanceOf(ReserveOutcome.Replay.class);
	}

	@Test
	void aDuplicateInAnotherInstanceWaitsOutsideAnyTransactionAndReplaysOnceTheHolderCommits() throws Exception {
		IdempotencyService first = service(DuplicatePolicy.WAIT, Duration.ofSeconds(30), Duration.ofMillis(100));
		IdempotencyService second = service(DuplicatePolicy.WAIT, Duration.ofSeconds(30), Duration.ofMillis(100));
		String key = UUID.randomUUID().toString();
		CountDownLatch holding = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CompletableFuture<IdempotentResult<String>> holder = CompletableFuture
			.supplyAsync(() -> first.executeInTransaction(request(key), String.class, () -> {
				holding.countDown();
				await(release);
				return "first";
			}));
		await(holding);
		AtomicReference<IdempotentResult<String>> duplicate = new AtomicReference<>();
		CompletableFuture<Void> waiting = CompletableFuture
			.runAsync(() -> duplicate.set(second.executeInTransaction(request(key), String.class, () -> "second")));
		awaitTrue(() -> second.parkedDuplicates() == 1);
		release.countDown();
		holder.get(20, TimeUnit.SECONDS);
		waiting.get(20, TimeUnit.SECONDS);
		assertThat(duplicate.get().value()).isEqualTo("first");
		assertThat(duplicate.get().replayed()).isTrue();
	}

	@Test
	void aDuplicateInAnotherInstanceIsWokenByTheHoldersInstanceWhenItsTransactionEnds() throws Exception {
		PostgresNotificationListener firstListener = new PostgresNotificationListener(dataSource,
				PostgresNotificationListener.DEFAULT_RECEIVE_TIMEOUT,
				PostgresNotificationListener.DEFAULT_MAX_RECONNECT_DELAY,
				PostgresNotificationListener.DEFAULT_VALIDATION_INTERVAL,
				io.ductor.worker.internal.DuctorThreads.platform());
		PostgresNotificationListener secondListener = new PostgresNotificationListener(dataSource,
				PostgresNotificationListener.DEFAULT_RECEIVE_TIMEOUT,
				PostgresNotificationListener.DEFAULT_MAX_RECONNECT_DELAY,
				PostgresNotificationListener.DEFAULT_VALIDATION_INTERVAL,
				io.ductor.worker.internal.DuctorThreads.platform());
		firstListener.start();
		secondListener.start();
		try {
			// polling alone would take a minute
			IdempotencyService first = service(DuplicatePolicy.WAIT, Duration.ofSeconds(90), Duration.ofSeconds(60),
					firstListener);
			IdempotencyService second = service(DuplicatePolicy.WAIT, Duration.ofSeconds(90), Duration.ofSeconds(60),
					secondListener);
			ListenerProbe.listening(secondListener, dataSource, IdempotencyService.CHANNEL).close();
			ListenerProbe announcements = ListenerProbe.listening(firstListener, dataSource,
					IdempotencyService.WAITING_CHANNEL);
			String key = UUID.randomUUID().toString();
			CountDownLatch holding = new CountDownLatch(1);
			CountDownLatch release = new CountDownLatch(1);
			CompletableFuture<IdempotentResult<String>> holder = CompletableFuture
				.supplyAsync(() -> first.executeInTransaction(request(key), String.class, () -> {
					holding.countDown();
					await(release);
					return "first";
				}));
			await(holding);
			CompletableFuture<IdempotentResult<String>> duplicate = CompletableFuture
				.supplyAsync(() -> second.executeInTransaction(request(key), String.class, () -> "second"));
			awaitTrue(() -> second.parkedDuplicates() == 1);
			announcements.awaitHeard((payload) -> payload.contains(key));
			announcements.close();
			release.countDown();
			assertThat(holder.get(20, TimeUnit.SECONDS).value()).isEqualTo("first");
			IdempotentResult<String> replayed = duplicate.get(10, TimeUnit.SECONDS);
			assertThat(replayed.value()).isEqualTo("first");
			assertThat(replayed.replayed()).isTrue();
		}
		finally {
			firstListener.stop();
			secondListener.stop();
		}
	}

	@Test
	void everyReleaseIsCountedWithItsReason() {
		IdempotencyService service = service(DuplicatePolicy.WAIT, Duration.ofSeconds(5), Duration.ofSeconds(1));
		int ownerBefore = count("failed_by_owner");
		int failedBefore = count("handler_failed");
		int sweptBefore = count("swept");
		service.fail(((ReserveOutcome.Reserved) service.reserve(request(UUID.randomUUID().toString()))).reservation());
		assertThat(count("failed_by_owner")).isEqualTo(ownerBefore + 1);

		assertThatThrownBy(() -> service.execute(request(UUID.randomUUID().toString()), String.class, () -> {
			throw new IllegalStateException("down");
		})).hasMessage("down");
		assertThatThrownBy(
				() -> service.executeInTransaction(request(UUID.randomUUID().toString()), String.class, () -> {
					throw new IllegalStateException("down");
				}))
			.hasMessage("down");
		assertThat(count("handler_failed")).isEqualTo(failedBefore + 2);

		String abandoned = UUID.randomUUID().toString();
		service.reserve(request(abandoned));
		rows.age("", "placements", abandoned, "11 minutes");
		assertThat(
				new IdempotencySweeper(new io.ductor.idempotency.internal.IdempotencyStore(dataSource), 1000, observer)
					.sweep())
			.isOne();
		assertThat(count("swept")).isEqualTo(sweptBefore + 1);
	}

	static int fewestActiveWithin(Duration duration) throws InterruptedException {
		int fewest = Integer.MAX_VALUE;
		long end = System.nanoTime() + duration.toNanos();
		// sampled over the whole window: that connections stay held throughout has no
		// signal to wait for
		while (System.nanoTime() < end) {
			fewest = Math.min(fewest, dataSource.getHikariPoolMXBean().getActiveConnections());
			Thread.sleep(10);
		}
		return fewest;
	}

	static int count(String reason) {
		AtomicInteger count = released.get(reason);
		return (count != null) ? count.get() : 0;
	}

}
