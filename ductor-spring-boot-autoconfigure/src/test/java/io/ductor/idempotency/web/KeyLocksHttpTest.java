package io.ductor.idempotency.web;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.Fingerprints;
import io.ductor.idempotency.IdempotencyRows;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyProperties;
import io.ductor.idempotency.internal.DefaultIdempotencyService;
import io.ductor.idempotency.internal.IdempotencySettings;
import io.ductor.idempotency.internal.LockKeys;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.json.internal.JsonCodec;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The advisory locks of keys and the wake-ups between instances, over real HTTP on two
 * instances of one application on one PostgreSQL: keys whose locks collide never meet, a
 * replay locks nothing, and a duplicate on another instance is woken as soon as the
 * holder's transaction ends, however many local duplicates looked meanwhile.
 */
class KeyLocksHttpTest {

	/** Keys starting with this share one advisory lock, whatever their tenant. */
	static final String COLLIDING = "collide-";

	static final long COLLIDING_LOCK = 42;

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext first;

	static ConfigurableApplicationContext second;

	static Client one;

	static Client two;

	static Gate gate;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		jdbc = JdbcClient.create(postgres.dataSource());
		jdbc.sql("CREATE TABLE booking (booking_key text PRIMARY KEY)").update();
		// the first instance holds keys; its duplicates wait 3 s at most
		first = start(new Gate(), "3s");
		// the second one's duplicates wait longer than the test: woken, or answered late
		second = start(first.getBean(Gate.class), "120s");
		gate = first.getBean(Gate.class);
		one = new Client(first);
		two = new Client(second);
	}

	static ConfigurableApplicationContext start(Gate shared, String waitTimeout) {
		return new SpringApplicationBuilder(LockApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "spring.datasource.hikari.maximum-pool-size=10",
					"ductor.idempotency.wait-timeout=" + waitTimeout, "ductor.idempotency.poll-interval=60s",
					"ductor.idempotency.sweeper.interval=1h", "ductor.retention.enabled=false",
					"spring.flyway.enabled=false")
			.initializers((context) -> context.getBeanFactory().registerSingleton("gate", shared))
			.run();
	}

	@AfterAll
	static void stop() {
		second.close();
		first.close();
	}

	@Test
	void aKeysAdvisoryLockIsSixtyFourBitsWide() throws Exception {
		String key = "plain-" + UUID.randomUUID();
		gate.close(key);
		CompletableFuture<HttpResponse<String>> held = one.postAsync("/bookings/" + key, key);
		Gate.await("the handler runs", () -> gate.runs(key) == 1);
		// the single-bigint form: classid and objid are its high and low halves
		List<Map<String, Object>> locks = jdbc.sql("""
				SELECT classid::bigint AS high, objid::bigint AS low, objsubid FROM pg_locks
				WHERE locktype = 'advisory' AND pid = ?""").param(gate.seen(key)).query().listOfRows();
		gate.open(key);
		assertThat(held.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		long lockKey = LockKeys.SHA256.lockKey(jdbc.sql("""
				SELECT tenant_scope, pool_id, idempotency_key, request_fingerprint FROM eec_routing_idempotency
				WHERE idempotency_key = ?""")
			.param(key)
			.query((rs, row) -> new IdempotentRequest(rs.getString(1), rs.getString(2), rs.getString(3),
					rs.getString(4)))
			.single());
		assertThat(locks).containsExactly(Map.of("high", lockKey >>> 32, "low", lockKey & 0xFFFFFFFFL, "objsubid", 1));
	}

	@Test
	void aNewKeyWhoseLockCollidesWithAnotherTenantsKeyInFlightRunsAtOnceUnderReject() throws Exception {
		String alice = COLLIDING + "alice-" + UUID.randomUUID();
		String bob = COLLIDING + "bob-" + UUID.randomUUID();
		gate.close(alice);
		CompletableFuture<HttpResponse<String>> first = one.postAsync("/bookings/rejecting/" + alice, alice, "X-Tenant",
				"alice");
		Gate.await("alice's handler runs", () -> gate.runs(alice) == 1);

		HttpResponse<String> bobs = one.post("/bookings/rejecting/" + bob, bob, "X-Tenant", "bob");
		boolean aliceStillRunning = !first.isDone();
		gate.open(alice);

		assertThat(bobs.statusCode()).as(bobs.body()).isEqualTo(201);
		assertThat(aliceStillRunning).isTrue();
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		assertThat(bookings(alice)).isOne();
		assertThat(bookings(bob)).isOne();
	}

	@Test
	void aNewKeyWhoseLockCollidesWithAnotherTenantsKeyInFlightIsNeverAnswered409UnderWait() throws Exception {
		String alice = COLLIDING + "alice-" + UUID.randomUUID();
		String bob = COLLIDING + "bob-" + UUID.randomUUID();
		gate.close(alice);
		CompletableFuture<HttpResponse<String>> first = one.postAsync("/bookings/" + alice, alice, "X-Tenant", "alice");
		Gate.await("alice's handler runs", () -> gate.runs(alice) == 1);

		// alice holds the lock for longer than bob's wait timeout (3 s)
		HttpResponse<String> bobs = one.post("/bookings/" + bob, bob, "X-Tenant", "bob");
		boolean aliceStillRunning = !first.isDone();
		gate.open(alice);

		assertThat(bobs.statusCode()).as(bobs.body()).isEqualTo(201);
		assertThat(aliceStillRunning).isTrue();
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		assertThat(bookings(bob)).isOne();
		// and alice's own duplicate still waits for her, and gets her answer
		HttpResponse<String> duplicate = two.post("/bookings/" + alice, alice, "X-Tenant", "alice");
		assertThat(duplicate.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(bookings(alice)).isOne();
	}

	@Test
	void aDuplicateOnAnotherInstanceIsWokenWhenTheHolderEndsThoughALocalDuplicateLookedMeanwhile() throws Exception {
		String key = "woken-" + UUID.randomUUID();
		gate.close(key);
		CompletableFuture<HttpResponse<String>> holder = one.postAsync("/bookings/" + key, key);
		Gate.await("the holder's handler runs", () -> gate.runs(key) == 1);

		// the other instance's duplicate announces that it waits, and the holder's
		// instance has read the announcement (its listener calls handlers in order)
		List<String> announced = new CopyOnWriteArrayList<>();
		first.getBean(PostgresNotificationListener.class)
			.subscribe(IdempotencyService.WAITING_CHANNEL, (payload) -> announced.add(payload));
		CompletableFuture<HttpResponse<String>> remote = two.postAsync("/bookings/" + key, key);
		Gate.await("the remote duplicate announced that it waits",
				() -> announced.stream().anyMatch((payload) -> payload.endsWith(key)));

		// a local duplicate looks at the key twice (its second look follows its first
		// attempt's end)
		AttemptCounter attempts = first.getBean(AttemptCounter.class);
		int before = attempts.ended.get();
		CompletableFuture<HttpResponse<String>> local = one.postAsync("/bookings/" + key, key);
		Gate.await("the local duplicate looked twice", () -> attempts.ended.get() >= before + 2);

		gate.open(key);
		assertThat(holder.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		assertThat(local.get(30, TimeUnit.SECONDS).headers().firstValue("Idempotency-Replayed")).hasValue("true");
		// woken by the holder's announcement, not by its poll interval (60 s)
		HttpResponse<String> woken = remote.get(20, TimeUnit.SECONDS);
		assertThat(woken.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(bookings(key)).isOne();
	}

	@Test
	void aReplayInsideTheCallersTransactionTakesNoLockSoAnExpiredKeyIsTakenOverMeanwhile() throws Exception {
		String batch = "batch-" + UUID.randomUUID();
		List<String> keys = List.of(batch + "-1", batch + "-2", batch + "-3");
		String body = "[\"" + String.join("\",\"", keys) + "\"]";
		assertThat(one.send("POST", "/imports/" + batch + "-first", null, body).body()).isEqualTo("3 imported");

		// the same batch again: three replays inside the import's transaction, held open
		String again = batch + "-again";
		gate.close(again);
		CompletableFuture<HttpResponse<String>> replaying = one.sendAsync("POST", "/imports/" + again, null, body);
		Gate.await("the import replayed its keys", () -> gate.runs(again) == 1);
		long locksHeld = jdbc.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = ?")
			.param(gate.seen(again))
			.query(Long.class)
			.single();
		// meanwhile the first key's decision expires, and another request takes it over
		new IdempotencyRows(postgres.dataSource()).age("", "imports", keys.get(0), "25 hours");
		HttpResponse<String> takeover = one.send("POST", "/imports/" + batch + "-takeover", null,
				"[\"" + keys.get(0) + "\"]");
		gate.open(again);

		assertThat(locksHeld).as("advisory locks held by the replaying transaction").isZero();
		assertThat(takeover.body()).isEqualTo("1 imported");
		assertThat(replaying.get(30, TimeUnit.SECONDS).body()).isEqualTo("0 imported");
	}

	static long bookings(String key) {
		return jdbc.sql("SELECT count(*) FROM booking WHERE booking_key = ?").param(key).query(Long.class).single();
	}

	@RestController
	static class BookingController {

		private final Gate gate;

		private final JdbcTemplate jdbc;

		private final IdempotencyService idempotency;

		BookingController(Gate gate, JdbcTemplate jdbc, IdempotencyService idempotency) {
			this.gate = gate;
			this.jdbc = jdbc;
			this.idempotency = idempotency;
		}

		@PostMapping("/bookings/{key}")
		@Idempotent
		org.springframework.http.ResponseEntity<String> book(@PathVariable String key) {
			return booked(key);
		}

		@PostMapping("/bookings/rejecting/{key}")
		@Idempotent(duplicatePolicy = DuplicatePolicy.REJECT)
		org.springframework.http.ResponseEntity<String> bookOrReject(@PathVariable String key) {
			return booked(key);
		}

		private org.springframework.http.ResponseEntity<String> booked(String key) {
			this.jdbc.update("INSERT INTO booking VALUES (?)", key);
			this.gate.saw(key, this.jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class));
			this.gate.pass(key);
			return org.springframework.http.ResponseEntity.status(201).body("booked " + key);
		}

		/**
		 * Imports a batch in one transaction of its own, each item once per key: the
		 * one-transaction form joined to the import's transaction.
		 */
		@PostMapping("/imports/{batch}")
		@Transactional
		public String importAll(@PathVariable String batch, @RequestBody List<String> keys) {
			AtomicInteger imported = new AtomicInteger();
			for (String key : keys) {
				IdempotentRequest request = new IdempotentRequest("", "imports", key, Fingerprints.sha256(key));
				this.idempotency.executeInTransaction(request, String.class, () -> {
					this.jdbc.update("INSERT INTO booking VALUES (?)", key + "@" + batch);
					imported.incrementAndGet();
					return key;
				});
			}
			this.gate.saw(batch, this.jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class));
			this.gate.pass(batch);
			return imported + " imported";
		}

	}

	/** Counts the transactions that ended on request threads. */
	static final class AttemptCounter extends JdbcTransactionManager {

		final AtomicInteger ended = new AtomicInteger();

		AttemptCounter(DataSource dataSource) {
			super(dataSource);
		}

		@Override
		protected void doCleanupAfterCompletion(Object transaction) {
			super.doCleanupAfterCompletion(transaction);
			if (Thread.currentThread().getName().contains("exec")) {
				this.ended.incrementAndGet();
			}
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(BookingController.class)
	static class LockApplication {

		@Bean
		AttemptCounter transactionManager(DataSource dataSource) {
			return new AttemptCounter(dataSource);
		}

		@Bean
		TenantScopeResolver tenantFromHeader() {
			return (request) -> (request.getHeader("X-Tenant") != null) ? request.getHeader("X-Tenant") : "";
		}

		/** The service, with the locks of the colliding keys made to collide. */
		@Bean
		IdempotencyService idempotencyService(DataSource dataSource, AttemptCounter transactionManager, JsonCodec json,
				ObjectProvider<PostgresNotificationListener> listener, DuctorIdempotencyProperties properties) {
			IdempotencySettings settings = new IdempotencySettings(properties.pendingTtl(), properties.completedTtl(),
					properties.duplicatePolicy(), properties.waitTimeout(), properties.pollInterval())
				.withLockKeys((request) -> request.key().startsWith(COLLIDING) ? COLLIDING_LOCK
						: LockKeys.SHA256.lockKey(request));
			return new DefaultIdempotencyService(dataSource, transactionManager,
					new io.ductor.idempotency.internal.IdempotencyStore(dataSource), json, settings,
					listener.getIfAvailable(), io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		}

	}

}
