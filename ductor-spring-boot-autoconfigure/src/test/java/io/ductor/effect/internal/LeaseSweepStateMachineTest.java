package io.ductor.effect.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;
import org.flywaydb.core.Flyway;

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

/**
 * The lifecycle of the leases the reconciler's sweep watches ({@link LeaseSweep}),
 * against a model, on real PostgreSQL, with the sweep running on a thread of its own all
 * along (as the reconciler does, every 20 ms here): drainers (three lease owners) record
 * intents already leased at commit, claim recorded ones, complete them (fenced by owner
 * and attempt), beat (the heartbeat's statement), drop an attempt they hold (a forgotten
 * claim: no more beats for it), crash (forget everything), let leases expire, and hold a
 * recording transaction open past the lease, so that the sweep meets a lease whose
 * transaction has not ended and one that commits already expired, and leave up to three
 * transactions open across steps (each with its id taken, most with a lease recorded,
 * committed or rolled back by a later step), so that the sweep meets several running
 * transactions with leases committed between and after them. After every step:
 * <ul>
 * <li>no intent completed twice, and no completion of an attempt whose lease was lost
 * (redriven, then claimed by another) succeeds;</li>
 * <li>never two live holders: every intent in flight has one lease owner and attempt, and
 * no drainer of the model that does not hold that attempt has its completion
 * accepted;</li>
 * <li>the sweep's watermark is below every lease it watches that is still in flight, and
 * below every transaction still open;</li>
 * <li>an intent whose lease expired is redriven within the lease and the sweep's round
 * (checked at the end, and after each expiry step), whatever transactions stay open.</li>
 * </ul>
 * At the end every drainer crashes, leases expire, and a new drainer claims and completes
 * whatever was redriven: every committed intent is completed exactly once.
 */
class LeaseSweepStateMachineTest {

	static final Duration LEASE = Duration.ofMillis(600);

	static final List<String> OWNERS = List.of("d1", "d2", "d3");

	static TestDatabase database;

	static HikariDataSource dataSource;

	static IntentRecorder recorder;

	static IntentClaims claims;

	static IntentOutcomes outcomes;

	static DrainerLeases leases;

	static IntentRedrive redrive;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	static final AtomicLong steps = new AtomicLong();

	static final AtomicLong redrivenBySweep = new AtomicLong();

	@BeforeContainer
	static void start() {
		database = TestDatabases.create();
		dataSource = database.newDataSource(12);
		Flyway.configure()
			.dataSource(dataSource)
			.locations(DuctorSchema.LOCATION)
			.table(DuctorSchema.HISTORY_TABLE)
			.load()
			.migrate();
		recorder = new IntentRecorder(dataSource);
		claims = new IntentClaims(dataSource);
		outcomes = new IntentOutcomes(dataSource);
		leases = new DrainerLeases(dataSource);
		redrive = new IntentRedrive(dataSource);
		tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		jdbc = JdbcClient.create(dataSource);
	}

	@AfterContainer
	static void stop() {
		System.out.println("Lease sweep state machine: steps " + steps.get() + ", intents redriven by the sweep "
				+ redrivenBySweep.get());
		if (dataSource != null) {
			dataSource.close();
		}
		if (database != null) {
			TestDatabases.drop(database);
		}
	}

	static volatile World current;

	@AfterTry
	void endSequence() {
		World world = current;
		if (world != null) {
			world.close();
		}
	}

	@Property(tries = 6, shrinking = ShrinkingMode.OFF)
	void everyCommittedIntentCompletesExactlyOnce(@ForAll("sequences") ActionChain<World> chain) {
		World end = chain.withInvariant("the sweep's promises", World::check).run();
		end.finish();
	}

	@Provide
	Arbitrary<ActionChain<World>> sequences() {
		return ActionChain.<World>startWith(World::new)
			.withAction(6, step("record leased", World::recordLeased))
			.withAction(2, step("record pending", World::recordPending))
			.withAction(3, step("claim", World::claim))
			.withAction(6, step("complete", World::complete))
			.withAction(3, step("beat", World::beat))
			.withAction(2, step("drop", World::drop))
			.withAction(1, step("crash", World::crash))
			.withAction(2, step("expire", World::expire))
			.withAction(1, step("record leased, commit after the lease", World::recordLate))
			.withAction(3, step("open a transaction", World::open))
			.withAction(2, step("end an open transaction", World::end))
			.withMaxTransformations(25);
	}

	static Action.Independent<World> step(String name, StepBody body) {
		return new Action.Independent<>() {
			@Override
			public Arbitrary<Transformer<World>> transformer() {
				return Arbitraries.integers()
					.between(0, 1_000)
					.map((seed) -> Transformer.mutate(name + "#" + seed, (world) -> {
						steps.incrementAndGet();
						body.run(world, seed);
					}));
			}
		};
	}

	@FunctionalInterface
	interface StepBody {

		void run(World world, int seed);

	}

	/** One sequence: its intents, the drainers' holdings and the sweep's thread. */
	static final class World {

		final String tag = UUID.randomUUID().toString().substring(0, 8);

		/** Intents committed, by id. */
		final Set<Long> committed = ConcurrentHashMap.newKeySet();

		/** Completions accepted, by id. */
		final Map<Long, Integer> completions = new HashMap<>();

		/** What each drainer believes it holds: attempt by intent id. */
		final Map<String, Map<Long, Integer>> held = new LinkedHashMap<>();

		final AtomicBoolean sweeping = new AtomicBoolean(true);

		final AtomicReference<Throwable> sweepFailure = new AtomicReference<>();

		final Thread sweeper;

		/** Transactions left open across steps, oldest first. */
		final List<OpenTransaction> open = new ArrayList<>();

		final ExecutorService openThreads = Executors.newCachedThreadPool();

		int sequence;

		World() {
			current = this;
			OWNERS.forEach((owner) -> this.held.put(owner(owner), new HashMap<>()));
			this.sweeper = new Thread(() -> {
				while (this.sweeping.get()) {
					try {
						redrivenBySweep.addAndGet(redrive.redriveExpired(1000, List.of(), List.of()).size());
						Thread.sleep(20);
					}
					catch (InterruptedException ex) {
						return;
					}
					catch (Throwable ex) {
						this.sweepFailure.compareAndSet(null, ex);
					}
				}
			}, "sweeper-" + this.tag);
			this.sweeper.start();
		}

		String owner(String name) {
			return name + "-" + this.tag;
		}

		String pick(int seed) {
			List<String> owners = new ArrayList<>(this.held.keySet());
			return owners.get(seed % owners.size());
		}

		/** Attempts enough that no sequence's expiries fail an intent. */
		NewIntent intent() {
			return new NewIntent("sweep-model", "sweep-" + this.tag + "-" + (++this.sequence), "[]", "f",
					Receiver.IDEMPOTENT, 1_000, Duration.ZERO, null, null, null, null);
		}

		void recordLeased(int seed) {
			String owner = pick(seed);
			ClaimedIntent claimed = tx.execute((status) -> recorder.insertLeased(intent(), owner, LEASE));
			this.committed.add(claimed.id());
			this.held.get(owner).put(claimed.id(), 1);
		}

		/**
		 * A recording transaction open past the lease: the sweep runs meanwhile and must
		 * not pass the lease while its transaction is open; the drainer never gets it
		 * (its instance paused), so only a redrive can finish it.
		 */
		void recordLate(int seed) {
			String owner = pick(seed);
			ClaimedIntent claimed = tx.execute((status) -> {
				ClaimedIntent inserted = recorder.insertLeased(intent(), owner, LEASE);
				sleep(LEASE.plusMillis(200));
				return inserted;
			});
			this.committed.add(claimed.id());
		}

		/**
		 * Leaves a transaction open across steps with its id taken and, most times, an
		 * intent recorded leased in it; the drainer never gets it, so only a redrive can
		 * finish it once the transaction commits.
		 */
		void open(int seed) {
			if (this.open.size() >= 3) {
				return;
			}
			String owner = pick(seed);
			NewIntent intent = (seed % 4 != 0) ? intent() : null;
			OpenTransaction transaction = new OpenTransaction(seed % 7 == 0);
			CountDownLatch began = new CountDownLatch(1);
			AtomicLong xid = new AtomicLong();
			transaction.result = CompletableFuture.supplyAsync(() -> tx.execute((status) -> {
				xid.set(jdbc.sql("SELECT txid_current()").query(Long.class).single());
				Long id = (intent != null) ? recorder.insertLeased(intent, owner, LEASE).id() : null;
				began.countDown();
				awaitEnd(transaction.end);
				if (transaction.rollback) {
					status.setRollbackOnly();
				}
				return id;
			}), this.openThreads);
			await(began);
			transaction.xid = xid.get();
			this.open.add(transaction);
		}

		/** Commits (or rolls back) one of the transactions left open. */
		void end(int seed) {
			if (!this.open.isEmpty()) {
				endOpen(this.open.remove(seed % this.open.size()));
			}
		}

		void endOpen(OpenTransaction transaction) {
			transaction.end.countDown();
			try {
				Long id = transaction.result.get(10, TimeUnit.SECONDS);
				if (id != null && !transaction.rollback) {
					this.committed.add(id);
				}
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}

		void recordPending(int seed) {
			long id = tx.execute((status) -> recorder.insert(intent()));
			this.committed.add(id);
		}

		void claim(int seed) {
			String owner = pick(seed);
			for (ClaimedIntent claimed : claims.claim(owner, LEASE, 1 + seed % 4, "sweep-model")) {
				this.held.get(owner).put(claimed.id(), claimed.attempt());
			}
		}

		void complete(int seed) {
			String owner = pick(seed);
			Map<Long, Integer> holding = this.held.get(owner);
			if (holding.isEmpty()) {
				return;
			}
			List<Long> ids = new ArrayList<>(holding.keySet());
			long id = ids.get(seed % ids.size());
			int attempt = holding.remove(id);
			// the sweep runs on: read the attempt's standing under the row's lock, as
			// the completion will
			List<Settled> settled = tx.execute((status) -> {
				boolean holds = !jdbc.sql("""
						SELECT 1 FROM eec_effect_intent WHERE id = ? AND status = 'in_flight' AND lease_owner = ?
						  AND attempts = ? FOR UPDATE""").params(id, owner, attempt).query().listOfRows().isEmpty();
				List<Settled> done = outcomes.complete(owner,
						List.of(new Completion(id, attempt, EffectStatus.COMPLETED, null, null)));
				assertThat(!done.isEmpty())
					.as("completion of intent " + id + " attempt " + attempt + " by " + owner
							+ " accepted exactly when that attempt holds it")
					.isEqualTo(holds);
				return done;
			});
			if (!settled.isEmpty()) {
				this.completions.merge(id, 1, Integer::sum);
			}
		}

		void beat(int seed) {
			String owner = pick(seed);
			Map<Long, Integer> holding = this.held.get(owner);
			if (holding.isEmpty()) {
				return;
			}
			leases.extendLeases(owner, LEASE, new HashMap<>(holding)).forEach((id, beat) -> {
				if (beat == DrainerLeases.LeaseBeat.LOST) {
					holding.remove(id);
				}
			});
		}

		void drop(int seed) {
			Map<Long, Integer> holding = this.held.get(pick(seed));
			if (!holding.isEmpty()) {
				holding.remove(new ArrayList<>(holding.keySet()).get(seed % holding.size()));
			}
		}

		void crash(int seed) {
			this.held.get(pick(seed)).clear();
		}

		/** No beat for a whole lease and a few of the sweep's rounds. */
		void expire(int seed) {
			sleep(LEASE.plusMillis(300));
			// every lease expired by now: the sweep redrives each within its rounds
			awaitNoExpiredLease();
		}

		void awaitNoExpiredLease() {
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (expiredInFlight() > 0) {
				assertThat(System.nanoTime()).as("an expired lease was left in flight beyond 10 s")
					.isLessThan(deadline);
				sleep(Duration.ofMillis(50));
			}
		}

		long expiredInFlight() {
			return jdbc.sql("""
					SELECT count(*) FROM eec_effect_intent
					WHERE idempotency_key LIKE :prefix AND status = 'in_flight'
					  AND lease_expires_at < ductor_now() - interval '200 milliseconds'""")
				.param("prefix", "sweep-" + this.tag + "-%")
				.query(Long.class)
				.single();
		}

		void check() {
			assertThat(this.sweepFailure.get()).as("the sweep's thread failed").isNull();
			this.completions.forEach((id, count) -> assertThat(count).as("completions of intent " + id).isEqualTo(1));
			// the watermark is below every lease it watches that is still in flight
			long passed = jdbc.sql("""
					SELECT count(*) FROM eec_effect_intent i, eec_effect_lease_sweep w
					WHERE w.name = 'intents' AND i.status = 'in_flight' AND i.lease_swept
					  AND (i.lease_xid, i.id) <= (w.lease_xid, w.intent_id)""").query(Long.class).single();
			assertThat(passed).as("in-flight leases the sweep's watermark passed").isZero();
			long watermark = jdbc.sql("SELECT lease_xid FROM eec_effect_lease_sweep WHERE name = 'intents'")
				.query(Long.class)
				.single();
			this.open.forEach(
					(transaction) -> assertThat(watermark).as("the sweep's watermark against a transaction still open")
						.isLessThan(transaction.xid));
			// never two live holders: a drainer's belief matches the table, or is stale
			Map<Long, String> holders = new HashMap<>();
			this.held.forEach((owner, holding) -> holding.forEach((id, attempt) -> {
				List<Map<String, Object>> live = jdbc.sql("""
						SELECT 1 FROM eec_effect_intent WHERE id = ? AND status = 'in_flight' AND lease_owner = ?
						  AND attempts = ? AND lease_expires_at > ductor_now()""")
					.params(id, owner, attempt)
					.query()
					.listOfRows();
				if (!live.isEmpty()) {
					assertThat(holders.put(id, owner)).as("a second live holder of intent " + id).isNull();
				}
			}));
		}

		/**
		 * Every drainer crashes; once their leases expired the sweep has redriven them; a
		 * new drainer completes whatever waits. Every committed intent is then completed
		 * exactly once.
		 */
		void finish() {
			try {
				new ArrayList<>(this.open).forEach(this::endOpen);
				this.open.clear();
				this.held.values().forEach(Map::clear);
				sleep(LEASE.plusMillis(300));
				awaitNoExpiredLease();
				String last = owner("last");
				for (int round = 0; round < 50; round++) {
					List<ClaimedIntent> due = claims.claim(last, Duration.ofMinutes(1), 100, "sweep-model");
					if (due.isEmpty()) {
						break;
					}
					List<Completion> done = due.stream()
						.map((c) -> new Completion(c.id(), c.attempt(), EffectStatus.COMPLETED, null, null))
						.toList();
					for (Settled settled : outcomes.complete(last, done)) {
						this.completions.merge(settled.id(), 1, Integer::sum);
					}
				}
				check();
				List<String> notCompleted = jdbc.sql("""
						SELECT id || ' ' || status || ' attempts ' || attempts || ': ' || coalesce(last_error, '')
						FROM eec_effect_intent WHERE idempotency_key LIKE :prefix AND status <> 'completed'""")
					.param("prefix", "sweep-" + this.tag + "-%")
					.query(String.class)
					.list();
				assertThat(notCompleted).as("committed intents not completed").isEmpty();
				assertThat(new HashSet<>(this.completions.keySet())).as("intents completed")
					.isEqualTo(new HashSet<>(this.committed));
			}
			finally {
				close();
			}
		}

		void close() {
			this.open.forEach((transaction) -> transaction.end.countDown());
			this.openThreads.shutdown();
			this.sweeping.set(false);
			try {
				this.sweeper.join(10_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	/** A transaction left open across steps. */
	static final class OpenTransaction {

		final boolean rollback;

		final CountDownLatch end = new CountDownLatch(1);

		CompletableFuture<Long> result;

		long xid;

		OpenTransaction(boolean rollback) {
			this.rollback = rollback;
		}

	}

	/** A transaction left open waits for its end as long as a sequence may take. */
	static void awaitEnd(CountDownLatch latch) {
		try {
			latch.await(5, TimeUnit.MINUTES);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static void await(CountDownLatch latch) {
		try {
			assertThat(latch.await(10, TimeUnit.SECONDS)).as("a transaction left open answered").isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
