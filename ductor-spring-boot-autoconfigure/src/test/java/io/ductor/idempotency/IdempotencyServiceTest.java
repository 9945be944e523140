package io.ductor.idempotency;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import io.ductor.Concurrently;
import io.ductor.IdempotencyKeyReuseException;
import io.ductor.idempotency.internal.DefaultIdempotencyService;
import io.ductor.idempotency.internal.IdempotencySettings;
import io.ductor.idempotency.internal.IdempotencySweeper;
import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.internal.ListenerProbe;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.json.internal.JsonCodec;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IdempotencyServiceTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static final Duration LONG = Duration.ofMinutes(10);

	static HikariDataSource dataSource;

	static PostgresNotificationListener listener;

	static IdempotencyService service;

	static IdempotencyRows rows;

	@BeforeAll
	static void migrate() {
		dataSource = postgres.newDataSource(40);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		listener = new PostgresNotificationListener(dataSource, PostgresNotificationListener.DEFAULT_RECEIVE_TIMEOUT,
				PostgresNotificationListener.DEFAULT_MAX_RECONNECT_DELAY,
				PostgresNotificationListener.DEFAULT_VALIDATION_INTERVAL,
				io.ductor.worker.internal.DuctorThreads.platform());
		listener.start();
		service = service(dataSource, settings(LONG, LONG, DuplicatePolicy.WAIT, Duration.ofSeconds(60)), listener);
		rows = new IdempotencyRows(dataSource);
		JdbcClient.create(dataSource)
			.sql("CREATE TABLE test_order (id text PRIMARY KEY, amount integer NOT NULL)")
			.update();
	}

	@AfterAll
	static void close() {
		listener.stop();
		dataSource.close();
	}

	static IdempotencyService service(DataSource dataSource, IdempotencySettings settings,
			PostgresNotificationListener listener) {
		return new DefaultIdempotencyService(dataSource, new DataSourceTransactionManager(dataSource),
				new io.ductor.idempotency.internal.IdempotencyStore(dataSource),
				new JsonCodec(JsonMapper.builder().build()), settings, listener,
				io.ductor.observation.internal.DuctorInstrumentation.NOOP);
	}

	static IdempotencySettings settings(Duration pendingTtl, Duration completedTtl, DuplicatePolicy policy,
			Duration waitTimeout) {
		return new IdempotencySettings(pendingTtl, completedTtl, policy, waitTimeout, Duration.ofSeconds(1));
	}

	static IdempotentRequest request(String key) {
		return new IdempotentRequest("", "orders", key, "fp-1");
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	@Test
	void manyConcurrentCallsWithOneKeyUnderWaitRunTheActionOnceAndAllGetItsResult() throws Exception {
		String key = newKey();
		AtomicInteger runs = new AtomicInteger();
		int threads = 40;
		List<IdempotentResult<Placed>> results = Concurrently.run(threads,
				(thread) -> service.execute(request(key), DuplicatePolicy.WAIT, Placed.class, () -> {
					runs.incrementAndGet();
					// hold the key until every other caller is parked on it
					awaitTrue(() -> service.parkedDuplicates() == threads - 1);
					return new Placed("order-" + key, 42);
				}));
		assertThat(runs).hasValue(1);
		assertThat(results).extracting(IdempotentResult::value).containsOnly(new Placed("order-" + key, 42));
		assertThat(results).filteredOn(IdempotentResult::replayed).hasSize(threads - 1);
		assertThat(results).extracting(IdempotentResult::decisionId).containsOnly(results.get(0).decisionId());
		assertThat(rows.row("", "orders", key)).containsEntry("status", "completed")
			.containsEntry("response_status", 200)
			.containsEntry("body", "{\"orderId\":\"order-" + key + "\",\"amount\":42}");
	}

	@Test
	void manyConcurrentCallsWithOneKeyUnderRejectRunOnceAndTheRestAreInFlight() throws Exception {
		String key = newKey();
		int threads = 40;
		CountDownLatch rejected = new CountDownLatch(threads - 1);
		AtomicInteger runs = new AtomicInteger();
		List<Object> results = Concurrently.run(threads, (thread) -> {
			try {
				return service.execute(request(key), DuplicatePolicy.REJECT, Placed.class, () -> {
					runs.incrementAndGet();
					await(rejected);
					return new Placed("order", 1);
				});
			}
			catch (IdempotencyKeyInFlightException ex) {
				rejected.countDown();
				return ex;
			}
		});
		assertThat(runs).hasValue(1);
		assertThat(results).filteredOn(IdempotentResult.class::isInstance).hasSize(1);
		assertThat(results).filteredOn(IdempotencyKeyInFlightException.class::isInstance)
			.hasSize(threads - 1)
			.allSatisfy((ex) -> assertThat(((Exception) ex).getMessage()).contains(key)
				.contains("duplicate policy REJECT"));
	}

	@Test
	void aWaitingDuplicateGivesUpWithAClearInFlightErrorAfterTheWaitTimeout() {
		IdempotencyService impatient = service(dataSource,
				settings(LONG, LONG, DuplicatePolicy.WAIT, Duration.ofMillis(300)), listener);
		String key = newKey();
		assertThat(impatient.reserve(request(key))).isInstanceOf(ReserveOutcome.Reserved.class);
		assertThatThrownBy(() -> impatient.execute(request(key), Placed.class, () -> new Placed("x", 1)))
			.isInstanceOf(IdempotencyKeyInFlightException.class)
			.hasMessageContaining("after waiting PT0.3S (ductor.idempotency.wait-timeout)");
		assertThat(rows.status("", "orders", key)).isEqualTo("pending");
	}

	@Test
	void aDuplicateParkedInAnotherInstanceIsWokenByNotifyNotByPolling() throws Exception {
		HikariDataSource otherPool = postgres.newDataSource(4);
		PostgresNotificationListener otherListener = new PostgresNotificationListener(otherPool,
				PostgresNotificationListener.DEFAULT_RECEIVE_TIMEOUT,
				PostgresNotificationListener.DEFAULT_MAX_RECONNECT_DELAY,
				PostgresNotificationListener.DEFAULT_VALIDATION_INTERVAL,
				io.ductor.worker.internal.DuctorThreads.platform());
		otherListener.start();
		try {
			// polls once an hour: only the NOTIFY from this instance's completion can
			// wake it in time
			IdempotencyService other = service(otherPool, new IdempotencySettings(LONG, LONG, DuplicatePolicy.WAIT,
					Duration.ofSeconds(30), Duration.ofHours(1)), otherListener);
			String key = newKey();
			Reservation reservation = ((ReserveOutcome.Reserved) service.reserve(request(key))).reservation();
			awaitTrue(otherListener::isConnected);
			var waiting = java.util.concurrent.CompletableFuture
				.supplyAsync(() -> other.reserve(request(key), DuplicatePolicy.WAIT));
			awaitTrue(() -> other.parkedDuplicates() == 1);
			service.complete(reservation, "decision-1", StoredResponse.of(201, "done".getBytes()));
			ReserveOutcome outcome = waiting.get(20, TimeUnit.SECONDS);
			assertThat(outcome).isInstanceOf(ReserveOutcome.Replay.class);
			assertThat(((ReserveOutcome.Replay) outcome).decision().decisionId()).isEqualTo("decision-1");
			assertThat(((ReserveOutcome.Replay) outcome).decision().response().bodyAsString()).isEqualTo("done");
		}
		finally {
			otherListener.stop();
		}
	}

	@Test
	void settlingAKeyNotifiesOnlyWhenADuplicateIsWaitingForIt() throws Exception {
		HikariDataSource otherPool = postgres.newDataSource(4);
		PostgresNotificationListener otherListener = new PostgresNotificationListener(otherPool,
				PostgresNotificationListener.DEFAULT_RECEIVE_TIMEOUT,
				PostgresNotificationListener.DEFAULT_MAX_RECONNECT_DELAY,
				PostgresNotificationListener.DEFAULT_VALIDATION_INTERVAL,
				io.ductor.worker.internal.DuctorThreads.platform());
		otherListener.start();
		try {
			IdempotencyService other = service(otherPool, new IdempotencySettings(LONG, LONG, DuplicatePolicy.WAIT,
					Duration.ofSeconds(30), Duration.ofHours(1)), otherListener);
			ListenerProbe.listening(otherListener, dataSource, IdempotencyService.CHANNEL).close();
			ListenerProbe heard = ListenerProbe.listening(listener, dataSource, IdempotencyService.CHANNEL);
			String quiet = newKey();
			service.complete(((ReserveOutcome.Reserved) service.reserve(request(quiet))).reservation(), "d",
					StoredResponse.of(201, "x".getBytes()));

			String awaited = newKey();
			Reservation reservation = ((ReserveOutcome.Reserved) service.reserve(request(awaited))).reservation();
			var waiting = java.util.concurrent.CompletableFuture
				.supplyAsync(() -> other.reserve(request(awaited), DuplicatePolicy.WAIT));
			org.springframework.jdbc.core.simple.JdbcClient jdbc = org.springframework.jdbc.core.simple.JdbcClient
				.create(dataSource);
			awaitTrue(() -> jdbc.sql("SELECT has_waiters FROM eec_routing_idempotency WHERE idempotency_key = ?")
				.param(awaited)
				.query(Boolean.class)
				.single());
			service.complete(reservation, "d", StoredResponse.of(201, "y".getBytes()));
			assertThat(waiting.get(20, TimeUnit.SECONDS)).isInstanceOf(ReserveOutcome.Replay.class);
			heard.awaitHeard((payload) -> payload.endsWith(awaited));
			// notifications arrive in commit order: the quiet key's would have come first
			assertThat(heard.heard()).noneMatch((payload) -> payload.endsWith(quiet));
			heard.close();
		}
		finally {
			otherListener.stop();
			otherPool.close();
		}
	}

	@Test
	void aReservationWhoseOwnerCrashedIsSweptAfterItsTtlAndTheRetryRunsOnce() throws Exception {
		IdempotencyService shortLived = service(dataSource,
				settings(Duration.ofMillis(200), LONG, DuplicatePolicy.WAIT, Duration.ofSeconds(30)), listener);
		IdempotencySweeper sweeper = new IdempotencySweeper(
				new io.ductor.idempotency.internal.IdempotencyStore(dataSource), 100,
				io.ductor.metrics.internal.DuctorObserver.NOOP);
		String key = newKey();
		// the owner reserves and dies without completing or failing
		assertThat(shortLived.reserve(request(key))).isInstanceOf(ReserveOutcome.Reserved.class);
		assertThat(rows.row("", "orders", key)).containsEntry("ttl_millis", 200L);
		assertThat(shortLived.reserve(request(key))).isInstanceOf(ReserveOutcome.InFlight.class);

		// a duplicate waits for it; the sweeper releases the key once the database clock
		// passes its TTL
		var retry = java.util.concurrent.CompletableFuture.supplyAsync(() -> shortLived.execute(request(key),
				Placed.class, () -> new Placed("retried", runsOfRetry.incrementAndGet())));
		awaitTrue(() -> Boolean.TRUE.equals(rows.row("", "orders", key).get("expired")));
		assertThat(sweeper.sweep()).isGreaterThanOrEqualTo(1);

		IdempotentResult<Placed> result = retry.get(20, TimeUnit.SECONDS);
		assertThat(result.replayed()).isFalse();
		assertThat(runsOfRetry).hasValue(1);
		assertThat(rows.status("", "orders", key)).isEqualTo("completed");
		assertThat(shortLived.execute(request(key), Placed.class, () -> new Placed("again", 99)).value())
			.isEqualTo(new Placed("retried", 1));
		assertThat(runsOfRetry).hasValue(1);
	}

	static final AtomicInteger runsOfRetry = new AtomicInteger();

	@Test
	void theSweeperLeavesReservationsWithinTheirTtlAlone() {
		String key = newKey();
		service.reserve(request(key));
		new IdempotencySweeper(new io.ductor.idempotency.internal.IdempotencyStore(dataSource), 1000,
				io.ductor.metrics.internal.DuctorObserver.NOOP)
			.sweep();
		assertThat(rows.status("", "orders", key)).isEqualTo("pending");
	}

	@Test
	void aCompletedKeyReplaysWithinItsTtlAndRunsAgainAfterIt() {
		String key = newKey();
		AtomicInteger runs = new AtomicInteger();
		assertThat(
				service.execute(request(key), Placed.class, () -> new Placed("a", runs.incrementAndGet())).replayed())
			.isFalse();
		assertThat(rows.row("", "orders", key)).containsEntry("ttl_millis", 600_000L);
		IdempotentResult<Placed> replay = service.execute(request(key), Placed.class,
				() -> new Placed("b", runs.incrementAndGet()));
		assertThat(replay.replayed()).isTrue();
		assertThat(replay.value()).isEqualTo(new Placed("a", 1));

		rows.age("", "orders", key, "10 minutes 1 second");
		IdempotentResult<Placed> after = service.execute(request(key), Placed.class,
				() -> new Placed("c", runs.incrementAndGet()));
		assertThat(after.replayed()).isFalse();
		assertThat(after.value()).isEqualTo(new Placed("c", 2));
		assertThat(rows.row("", "orders", key)).containsEntry("status", "completed")
			.containsEntry("expired", false)
			.containsEntry("body", "{\"orderId\":\"c\",\"amount\":2}");
	}

	@Test
	void aCompletionStoresExactlyWhatItWasGivenAndDuplicatesReplayIt() {
		StoredResponse withHeaders = new StoredResponse(201,
				Map.of("Location", List.of("/orders/7"), "X-Trace", List.of("a", "b")), "created".getBytes());
		StoredResponse bare = StoredResponse.of(204, new byte[0]);
		Map<String, StoredResponse> responses = new HashMap<>();
		responses.put("headers", withHeaders);
		responses.put("no headers", bare);
		responses.put("no response", null);
		responses.forEach((name, response) -> {
			String key = newKey();
			String decisionId = name.equals("headers") ? "order-7" : null;
			service.complete(((ReserveOutcome.Reserved) service.reserve(request(key))).reservation(), decisionId,
					response);

			ReserveOutcome replay = service.reserve(request(key));
			assertThat(replay).as(name).isInstanceOf(ReserveOutcome.Replay.class);
			assertThat(((ReserveOutcome.Replay) replay).decision().decisionId()).as(name).isEqualTo(decisionId);
			assertThat(((ReserveOutcome.Replay) replay).decision().response()).as(name).isEqualTo(response);
			assertThat(rows.row("", "orders", key)).as(name)
				.containsEntry("status", "completed")
				.containsEntry("ttl_millis", 600_000L);
		});
	}

	@Test
	void twoTenantsUsingTheSameKeyNeverSeeEachOthersDecision() {
		String key = newKey();
		IdempotencyService rejecting = service(dataSource, settings(LONG, LONG, DuplicatePolicy.REJECT, LONG), null);
		for (String tenant : List.of("tenant-a", "tenant-b")) {
			IdempotentRequest request = new IdempotentRequest(tenant, "orders", key, "fp-1");
			assertThat(rejecting.execute(request, Placed.class, () -> new Placed(tenant, 1)).replayed()).isFalse();
		}
		for (String tenant : List.of("tenant-a", "tenant-b")) {
			IdempotentRequest request = new IdempotentRequest(tenant, "orders", key, "fp-1");
			IdempotentResult<Placed> replay = rejecting.execute(request, Placed.class, () -> new Placed("new", 2));
			assertThat(replay.replayed()).isTrue();
			assertThat(replay.value()).isEqualTo(new Placed(tenant, 1));
		}
		assertThat(rows.count("idempotency_key = ?", key)).isEqualTo(2);
	}

	@Test
	void aSweptAndReclaimedReservationsOldOwnerCannotCompleteOrReleaseIt() {
		String key = newKey();
		Reservation old = ((ReserveOutcome.Reserved) service.reserve(request(key))).reservation();
		rows.age("", "orders", key, "11 minutes");
		assertThat(new IdempotencySweeper(new io.ductor.idempotency.internal.IdempotencyStore(dataSource), 1000,
				io.ductor.metrics.internal.DuctorObserver.NOOP)
			.sweep()).isGreaterThanOrEqualTo(1);
		ReserveOutcome reclaimed = service.reserve(request(key));
		assertThat(reclaimed).isInstanceOf(ReserveOutcome.Reserved.class);
		Reservation current = ((ReserveOutcome.Reserved) reclaimed).reservation();

		assertThatThrownBy(() -> service.complete(old, "stale", StoredResponse.of(200, "stale".getBytes())))
			.isInstanceOf(ReservationLostException.class)
			.hasMessageContaining(key)
			.hasMessageContaining("ductor.idempotency.pending-ttl");
		assertThat(service.fail(old)).isFalse();
		assertThat(rows.row("", "orders", key)).containsEntry("status", "pending")
			.containsEntry("owner_token", current.ownerToken().toString());

		service.complete(current, "fresh", StoredResponse.of(200, "fresh".getBytes()));
		assertThat(rows.row("", "orders", key)).containsEntry("status", "completed")
			.containsEntry("decision_id", "fresh")
			.containsEntry("body", "fresh");
	}

	@Test
	void aSweptReservationNobodyReclaimedCanStillBeCompletedByItsOwner() {
		String key = newKey();
		Reservation owner = ((ReserveOutcome.Reserved) service.reserve(request(key))).reservation();
		rows.age("", "orders", key, "11 minutes");
		new IdempotencySweeper(new io.ductor.idempotency.internal.IdempotencyStore(dataSource), 1000,
				io.ductor.metrics.internal.DuctorObserver.NOOP)
			.sweep();
		assertThat(rows.status("", "orders", key)).isEqualTo("failed_before_commit");
		service.complete(owner, "late", StoredResponse.of(200, "late".getBytes()));
		assertThat(rows.row("", "orders", key)).containsEntry("status", "completed").containsEntry("body", "late");
	}

	@Test
	void anActionThatThrowsReleasesTheKeySoTheRetryRunsAgain() {
		String key = newKey();
		assertThatThrownBy(() -> service.execute(request(key), Placed.class, () -> {
			throw new IllegalStateException("gateway down");
		})).hasMessage("gateway down");
		assertThat(rows.status("", "orders", key)).isEqualTo("failed_before_commit");
		assertThat(service.execute(request(key), Placed.class, () -> new Placed("ok", 1)).replayed()).isFalse();
		assertThat(rows.status("", "orders", key)).isEqualTo("completed");
	}

	@Test
	void oneTransactionModeCommitsTheWriteAndTheDecisionTogetherAndReplaysWithoutRerunning() throws Exception {
		String key = newKey();
		JdbcClient jdbc = JdbcClient.create(dataSource);
		AtomicInteger runs = new AtomicInteger();
		List<IdempotentResult<Placed>> results = Concurrently.run(16,
				(thread) -> service.executeInTransaction(request(key), Placed.class, () -> {
					runs.incrementAndGet();
					jdbc.sql("INSERT INTO test_order (id, amount) VALUES (?, 5)").param(key).update();
					return new Placed(key, 5);
				}));
		assertThat(runs).hasValue(1);
		assertThat(results).extracting(IdempotentResult::value).containsOnly(new Placed(key, 5));
		assertThat(jdbc.sql("SELECT count(*) FROM test_order WHERE id = ?").param(key).query(Long.class).single())
			.isOne();
		assertThat(rows.status("", "orders", key)).isEqualTo("completed");
	}

	@Test
	void oneTransactionModeLeavesNeitherTheWriteNorTheRecordWhenTheActionFails() {
		String key = newKey();
		JdbcClient jdbc = JdbcClient.create(dataSource);
		assertThatThrownBy(() -> service.executeInTransaction(request(key), Placed.class, () -> {
			jdbc.sql("INSERT INTO test_order (id, amount) VALUES (?, 7)").param(key).update();
			throw new IllegalStateException("validation failed after the write");
		})).hasMessage("validation failed after the write");
		assertThat(jdbc.sql("SELECT count(*) FROM test_order WHERE id = ?").param(key).query(Long.class).single())
			.isZero();
		assertThat(rows.row("", "orders", key)).isEmpty();
		assertThat(service.executeInTransaction(request(key), Placed.class, () -> new Placed(key, 8)).value())
			.isEqualTo(new Placed(key, 8));
	}

	@Test
	void oneTransactionModeBoundsTheWaitForAnOpenTransaction() throws Exception {
		IdempotencyService impatient = service(dataSource,
				settings(LONG, LONG, DuplicatePolicy.WAIT, Duration.ofMillis(200)), null);
		String key = newKey();
		CountDownLatch holding = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		var first = java.util.concurrent.CompletableFuture
			.supplyAsync(() -> impatient.executeInTransaction(request(key), Placed.class, () -> {
				holding.countDown();
				await(release);
				return new Placed("first", 1);
			}));
		await(holding);
		try {
			assertThatThrownBy(
					() -> impatient.executeInTransaction(request(key), Placed.class, () -> new Placed("second", 2)))
				.isInstanceOf(IdempotencyKeyInFlightException.class)
				.hasMessageContaining("still being processed by an earlier request after waiting PT0.2S")
				.hasMessageContaining("ductor.idempotency.wait-timeout");
		}
		finally {
			release.countDown();
		}
		assertThat(first.get(20, TimeUnit.SECONDS).value()).isEqualTo(new Placed("first", 1));
		// the wait touched no session setting: the caller's own work runs with the
		// default lock_timeout
		assertThat(impatient.executeInTransaction(request(key), Placed.class, () -> new Placed("third", 3)).value())
			.isEqualTo(new Placed("first", 1));
		// and the caller's own work after the reservation, in the same transaction, runs
		// without it
		assertThat(impatient
			.executeInTransaction(request(newKey()), String.class,
					() -> JdbcClient.create(dataSource)
						.sql("SELECT current_setting('lock_timeout')")
						.query(String.class)
						.single())
			.value()).isEqualTo("0");
	}

	@Test
	void aReplayInsideAnOpenTransactionLocksNothingSoAnotherReplayIsNotHeldUp() throws Exception {
		IdempotencyService rejecting = service(dataSource,
				settings(LONG, LONG, DuplicatePolicy.REJECT, Duration.ofMillis(200)), null);
		String key = newKey();
		Placed first = rejecting.executeInTransaction(request(key), Placed.class, () -> new Placed("first", 1)).value();
		new org.springframework.transaction.support.TransactionTemplate(
				new org.springframework.jdbc.datasource.DataSourceTransactionManager(dataSource))
			.executeWithoutResult((status) -> {
				assertThat(rejecting.executeInTransaction(request(key), Placed.class, () -> new Placed("again", 2))
					.value()).isEqualTo(first);
				// the transaction that replayed is still open: another one replays at
				// once, not "in flight"
				var other = java.util.concurrent.CompletableFuture.supplyAsync(
						() -> rejecting.executeInTransaction(request(key), Placed.class, () -> new Placed("other", 3))
							.value());
				try {
					assertThat(other.get(20, TimeUnit.SECONDS)).isEqualTo(first);
				}
				catch (Exception ex) {
					throw new AssertionError("the second replay failed", ex);
				}
			});
	}

	@Test
	void anEmptyKeyOptsOutAndWritesNothing() {
		AtomicInteger runs = new AtomicInteger();
		for (int i = 0; i < 2; i++) {
			IdempotentResult<Placed> result = service.execute(new IdempotentRequest("", "opt-out", "", "fp"),
					Placed.class, () -> new Placed("x", runs.incrementAndGet()));
			assertThat(result.replayed()).isFalse();
			assertThat(result.decisionId()).isNull();
		}
		assertThat(runs).hasValue(2);
		assertThat(service.reserve("", "opt-out", "", "fp")).isInstanceOf(ReserveOutcome.OptedOut.class);
		assertThat(rows.count("pool_id = 'opt-out'")).isZero();
	}

	@Test
	void aKeyReusedForAnotherRequestIsRefusedAndNothingChanges() {
		String key = newKey();
		service.execute(request(key), Placed.class, () -> new Placed("first", 1));
		Map<String, Object> before = rows.row("", "orders", key);
		IdempotentRequest other = new IdempotentRequest("", "orders", key, "fp-2");
		assertThat(service.reserve(other)).isInstanceOf(ReserveOutcome.FingerprintMismatch.class);
		assertThatThrownBy(() -> service.execute(other, Placed.class, () -> new Placed("second", 2)))
			.isInstanceOf(IdempotencyKeyReuseException.class)
			.hasMessageContaining(key)
			.hasMessageContaining("already used for a different request");
		assertThat(rows.row("", "orders", key)).isEqualTo(before);

		String pendingKey = newKey();
		service.reserve(request(pendingKey));
		assertThat(service.reserve(new IdempotentRequest("", "orders", pendingKey, "fp-2"), DuplicatePolicy.WAIT))
			.isInstanceOf(ReserveOutcome.FingerprintMismatch.class);
	}

	@Test
	void malformedKeysAreRefusedBeforeAnythingIsWritten() {
		long before = rows.count("true");
		assertThatThrownBy(() -> service.reserve("", "orders", "k".repeat(256), "fp"))
			.isInstanceOf(InvalidIdempotencyKeyException.class)
			.hasMessage("idempotency key must be at most 255 characters but has 256");
		assertThatThrownBy(() -> service.reserve("", "orders", "has space", "fp"))
			.isInstanceOf(InvalidIdempotencyKeyException.class)
			.hasMessageContaining("visible ASCII characters (0x21-0x7E) but has U+0020 at index 3");
		assertThatThrownBy(() -> service.reserve("", "orders", "clé", "fp"))
			.isInstanceOf(InvalidIdempotencyKeyException.class)
			.hasMessageContaining("U+00E9 at index 2");
		assertThatThrownBy(() -> service.reserve("", "orders", "tab\tkey", "fp"))
			.isInstanceOf(InvalidIdempotencyKeyException.class);
		assertThatThrownBy(() -> service.reserve("", "orders", null, "fp"))
			.isInstanceOf(InvalidIdempotencyKeyException.class)
			.hasMessageContaining("pass \"\" to opt out");
		assertThatThrownBy(() -> service.reserve(null, "orders", "k", "fp"))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("tenantScope");
		assertThatThrownBy(() -> service.reserve("", " ", "k", "fp")).hasMessageContaining("pool must not be blank");
		assertThatThrownBy(() -> service.reserve("", "orders", "k", null))
			.hasMessageContaining("fingerprint must not be null");
		assertThat(rows.count("true")).isEqualTo(before);
		assertThat(service.reserve("", "orders", "k".repeat(255), "fp")).isInstanceOf(ReserveOutcome.Reserved.class);
	}

	static void awaitTrue(BooleanSupplier condition) {
		org.awaitility.Awaitility.await()
			.atMost(java.time.Duration.ofSeconds(30))
			.pollInterval(java.time.Duration.ofMillis(5))
			.until(condition::getAsBoolean);
	}

	static void await(CountDownLatch latch) {
		try {
			if (!latch.await(30, TimeUnit.SECONDS)) {
				throw new AssertionError("latch not released within 30 s");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new AssertionError(ex);
		}
	}

	record Placed(String orderId, int amount) {
	}

}
