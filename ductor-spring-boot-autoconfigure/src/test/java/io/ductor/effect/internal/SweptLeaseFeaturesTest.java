package io.ductor.effect.internal;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectStatus;
import io.ductor.effect.Receiver;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.effect.internal.IntentOutcomes.Completion;
import io.ductor.effect.internal.IntentRecorder.NewIntent;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Ordering keys, concurrency slots and operator moves where a lease is watched by the
 * reconciler's sweep ({@link LeaseSweep}) rather than by the lease index: taken by a
 * drainer's claim or by the recording at commit, expired, redriven by the sweep, taken
 * again. Each {@link IntentRedrive#redriveExpired} call is one reconciler round; the
 * drainers' claims and completions are the drainer's own statements.
 */
class SweptLeaseFeaturesTest {

	/** Long enough for two claims on a loaded machine. */
	static final Duration SHORT = Duration.ofSeconds(2);

	static final Duration LONG = Duration.ofMinutes(5);

	static TestDatabase database;

	static HikariDataSource dataSource;

	static IntentRecorder recorder;

	static IntentClaims claims;

	static IntentOutcomes outcomes;

	static IntentRedrive reconciler;

	static OperatorMoves moves;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		database = TestDatabases.create();
		dataSource = database.newDataSource(6);
		Flyway.configure()
			.dataSource(dataSource)
			.locations(DuctorSchema.LOCATION)
			.table(DuctorSchema.HISTORY_TABLE)
			.load()
			.migrate();
		recorder = new IntentRecorder(dataSource);
		claims = new IntentClaims(dataSource);
		outcomes = new IntentOutcomes(dataSource);
		reconciler = new IntentRedrive(dataSource);
		moves = new OperatorMoves(dataSource);
		tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		jdbc = JdbcClient.create(dataSource);
	}

	@AfterAll
	static void stop() {
		if (dataSource != null) {
			dataSource.close();
		}
		if (database != null) {
			TestDatabases.drop(database);
		}
	}

	@Test
	void theIntentsOfAnOrderingKeyRunOneAtATimeInOrderAcrossASweptExpiryAndRedrive() {
		String effect = "ordered-" + UUID.randomUUID();
		String key = "order-" + UUID.randomUUID();
		long a = record(effect, key, Receiver.IDEMPOTENT, 5);
		long b = record(effect, key, Receiver.IDEMPOTENT, 5);
		long c = record(effect, key, Receiver.IDEMPOTENT, 5);

		List<ClaimedIntent> first = claims.claim("d1", SHORT, 10, effect);
		assertThat(first).extracting(ClaimedIntent::id).containsExactly(a);
		assertThat(swept(a)).as("the claim's lease is the sweep's").isTrue();
		assertThat(claims.claim("d1", SHORT, 10, effect)).as("the key's later intents wait").isEmpty();

		// d1 crashes: its lease expires; until the sweep redrives it, the key stays held
		awaitExpired(a);
		assertThat(claims.claim("d2", LONG, 10, effect)).as("an expired attempt not yet redriven holds its key")
			.isEmpty();
		reconciler.redriveExpired(500, List.of(), List.of());
		assertThat(status(a)).isEqualTo("pending");

		List<ClaimedIntent> again = claims.claim("d2", LONG, 10, effect);
		assertThat(again).as("the redriven head runs again before the key's later intents")
			.extracting(ClaimedIntent::id, ClaimedIntent::attempt)
			.containsExactly(org.assertj.core.groups.Tuple.tuple(a, 2));
		assertThat(complete("d1", a, 1)).as("the crashed drainer's completion is fenced").isFalse();
		assertThat(claims.claim("d2", LONG, 10, effect)).isEmpty();
		reconciler.redriveExpired(500, List.of(), List.of());
		assertThat(status(a)).as("a live lease is not redriven").isEqualTo("in_flight");

		assertThat(complete("d2", a, 2)).isTrue();
		assertThat(claims.claim("d2", LONG, 10, effect)).extracting(ClaimedIntent::id).containsExactly(b);
		assertThat(complete("d2", b, 1)).isTrue();
		assertThat(claims.claim("d2", LONG, 10, effect)).extracting(ClaimedIntent::id).containsExactly(c);
	}

	@Test
	void aConcurrencyLimitHoldsAcrossASweptExpiryAndRedrive() {
		String effect = "limited-" + UUID.randomUUID();
		EffectSlots slots = new EffectSlots(dataSource, () -> Map.of(effect, 2));
		for (int i = 0; i < 5; i++) {
			record(effect, null, Receiver.IDEMPOTENT, 5);
		}
		List<ClaimedIntent> taken = slots.claim(claims, "d1", SHORT, 10);
		assertThat(taken).hasSize(2);
		assertThat(taken).allSatisfy((claimed) -> assertThat(swept(claimed.id())).isTrue());
		assertThat(slots.claim(claims, "d1", SHORT, 10)).as("both slots held").isEmpty();
		assertThat(slots.inUse()).containsEntry(effect, 2);

		// d1 crashes: once the leases expired their slots are free, and the sweep
		// redrives the attempts
		taken.forEach((claimed) -> awaitExpired(claimed.id()));
		assertThat(slots.inUse()).containsEntry(effect, 0);
		reconciler.redriveExpired(500, List.of(), List.of());
		taken.forEach((claimed) -> assertThat(status(claimed.id())).isEqualTo("pending"));

		List<ClaimedIntent> retaken = slots.claim(claims, "d2", LONG, 10);
		assertThat(retaken).hasSize(2);
		assertThat(slots.claim(claims, "d2", LONG, 10)).as("never more than the limit").isEmpty();
		assertThat(liveInFlight(effect)).isEqualTo(2);
		taken.forEach((claimed) -> assertThat(complete("d1", claimed.id(), claimed.attempt()))
			.as("the crashed drainer's completion is fenced")
			.isFalse());
		assertThat(slots.claim(claims, "d3", LONG, 10)).as("fenced completions free no slot").isEmpty();

		assertThat(complete("d2", retaken.get(0).id(), retaken.get(0).attempt())).isTrue();
		assertThat(slots.claim(claims, "d2", LONG, 10)).as("one slot freed").hasSize(1);
		assertThat(liveInFlight(effect)).isEqualTo(2);
	}

	@Test
	void operatorMovesRefuseLeasedAndExpiredIntentsAndApplyToSweptOnes() {
		String effect = "moved-" + UUID.randomUUID();
		long x = recordLeased(effect, Receiver.IDEMPOTENT, 1, "d1");
		long y = recordLeased(effect, Receiver.NOT_IDEMPOTENT, 3, "d1");
		assertThat(outcomes.markStarted("d1", y, 1)).isTrue();
		long z = recordLeased(effect, Receiver.NOT_IDEMPOTENT, 3, "d1");
		List<Long> all = List.of(x, y, z);

		// leased: every move is refused
		all.forEach(SweptLeaseFeaturesTest::assertEveryMoveRefused);
		// expired, not yet swept: still in flight, still refused
		all.forEach(SweptLeaseFeaturesTest::awaitExpired);
		all.forEach(SweptLeaseFeaturesTest::assertEveryMoveRefused);

		reconciler.redriveExpired(500, List.of(), List.of());
		assertThat(status(x)).as("its last attempt's lease expired").isEqualTo("failed");
		assertThat(status(y)).as("started, not idempotent").isEqualTo("needs_decision");
		assertThat(status(z)).as("never started: uncounted").isEqualTo("pending");
		assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE id IN (?, ?) AND parked_at IS NOT NULL")
			.params(x, y)
			.query(Long.class)
			.single()).as("parked where the console finds them").isEqualTo(2);

		// retry (the console's bulk retry), resolve, cancel: as for any parked intent
		assertThat(moves.retryBatch(effect, EffectStatus.FAILED, 1, 500, databaseNow())).isEqualTo(1);
		assertThat(moves.transition(y, List.of(EffectStatus.NEEDS_DECISION, EffectStatus.RECONCILING),
				EffectStatus.COMPLETED, "resolved: marked done by an operator", null, null))
			.isPresent();
		assertThat(moves.transition(z,
				List.of(EffectStatus.PENDING, EffectStatus.RECONCILING, EffectStatus.FAILED,
						EffectStatus.NEEDS_DECISION),
				EffectStatus.CANCELLED, "cancelled by an operator", null, null))
			.isPresent();
		assertThat(status(y)).isEqualTo("completed");
		assertThat(status(z)).isEqualTo("cancelled");

		long oldXid = leaseXid(x);
		List<ClaimedIntent> retried = claims.claim("d2", LONG, 10, effect);
		assertThat(retried).extracting(ClaimedIntent::id, ClaimedIntent::attempt)
			.containsExactly(org.assertj.core.groups.Tuple.tuple(x, 2));
		assertThat(leaseXid(x)).as("the new lease is the sweep's, under the claim's transaction").isGreaterThan(oldXid);
		all.forEach(
				(id) -> assertThat(complete("d1", id, 1)).as("the crashed drainer's completion of " + id).isFalse());
		assertThat(complete("d2", x, 2)).isTrue();
		reconciler.redriveExpired(500, List.of(), List.of());
		assertThat(List.of(status(x), status(y), status(z))).containsExactly("completed", "completed", "cancelled");
	}

	static void assertEveryMoveRefused(long id) {
		assertThat(moves.transition(id, List.of(EffectStatus.FAILED, EffectStatus.NEEDS_DECISION), EffectStatus.PENDING,
				"retried by an operator", 5, null))
			.as("retry of " + id)
			.isEmpty();
		assertThat(moves.transition(id, List.of(EffectStatus.NEEDS_DECISION, EffectStatus.RECONCILING),
				EffectStatus.COMPLETED, "resolved: marked done by an operator", null, null))
			.as("resolve of " + id)
			.isEmpty();
		assertThat(moves.transition(id,
				List.of(EffectStatus.PENDING, EffectStatus.RECONCILING, EffectStatus.FAILED,
						EffectStatus.NEEDS_DECISION),
				EffectStatus.CANCELLED, "cancelled by an operator", null, null))
			.as("cancel of " + id)
			.isEmpty();
		assertThat(status(id)).isEqualTo("in_flight");
	}

	static long record(String effect, String orderingKey, Receiver receiver, int maxAttempts) {
		return tx.execute((status) -> recorder.insert(new NewIntent(effect, "k-" + UUID.randomUUID(), "[]", "f",
				receiver, maxAttempts, Duration.ZERO, orderingKey, null, null, null)));
	}

	static long recordLeased(String effect, Receiver receiver, int maxAttempts, String owner) {
		return tx
			.execute((status) -> recorder.insertLeased(new NewIntent(effect, "k-" + UUID.randomUUID(), "[]", "f",
					receiver, maxAttempts, Duration.ZERO, null, null, null, null), owner, SHORT))
			.id();
	}

	static boolean complete(String owner, long id, int attempt) {
		return !outcomes.complete(owner, List.of(new Completion(id, attempt, EffectStatus.COMPLETED, null, null)))
			.isEmpty();
	}

	static boolean swept(long id) {
		return jdbc
			.sql("SELECT lease_swept AND lease_xid IS NOT NULL AND queue_lease_expires_at IS NULL "
					+ "FROM eec_effect_intent WHERE id = ?")
			.param(id)
			.query(Boolean.class)
			.single();
	}

	static long leaseXid(long id) {
		return jdbc.sql("SELECT lease_xid FROM eec_effect_intent WHERE id = ?").param(id).query(Long.class).single();
	}

	static long liveInFlight(String effect) {
		return jdbc
			.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = ? AND status = 'in_flight' "
					+ "AND lease_expires_at > ductor_now()")
			.param(effect)
			.query(Long.class)
			.single();
	}

	static OffsetDateTime databaseNow() {
		return jdbc.sql("SELECT ductor_now()").query(OffsetDateTime.class).single();
	}

	static void awaitExpired(long id) {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> jdbc.sql("SELECT lease_expires_at < ductor_now() FROM eec_effect_intent WHERE id = ?")
				.param(id)
				.query(Boolean.class)
				.single());
	}

	static String status(long id) {
		return jdbc.sql("SELECT status FROM eec_effect_intent WHERE id = ?").param(id).query(String.class).single();
	}

}
