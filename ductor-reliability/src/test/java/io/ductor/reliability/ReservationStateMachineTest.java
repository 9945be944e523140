package io.ductor.reliability;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariDataSource;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import io.ductor.IdempotencyKeyReuseException;
import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyKeyInFlightException;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReservationLostException;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.StoredDecision;
import io.ductor.idempotency.StoredResponse;
import io.ductor.idempotency.internal.DefaultIdempotencyService;
import io.ductor.idempotency.internal.IdempotencyRetentionPurger;
import io.ductor.idempotency.internal.IdempotencySettings;
import io.ductor.idempotency.internal.IdempotencySweeper;
import io.ductor.idempotency.internal.LockKeys;
import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.json.internal.JsonCodec;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The reservation state machine of {@code eec_routing_idempotency} against a model, on
 * real PostgreSQL: random sequences of reserve, work, complete, fail, sweep, purge,
 * crashes before and after the decision's commit, and clock advances, over two tenants,
 * two pools and two keys, with the public {@link IdempotencyService},
 * {@link IdempotencySweeper} and {@link IdempotencyRetentionPurger}. After every step:
 * every row is what the model says (so a key is free exactly when the model says so), no
 * decision was replayed to another tenant, pool or key, and no key has two decisions.
 * <p>
 * The model encodes the rule that a reservation may be released
 * ({@code failed_before_commit}) only when its decision provably did not commit. Two
 * paths decide:
 * <ul>
 * <li><b>two-phase</b> ({@code reserve}, the caller's own committed work, then
 * {@code complete}): a reservation whose work committed and whose completion never came
 * (a crash after the commit, or a handler slower than the pending TTL) is released by the
 * sweeper after the pending TTL, and a retry decides again. That is the documented window
 * of the two-phase mode: such a second decision is allowed and counted, never
 * hidden.</li>
 * <li><b>one transaction</b> ({@code executeInTransaction}): held to zero. No sequence
 * may give a key two decisions except through a released two-phase reservation.</li>
 * </ul>
 * Time is the database's: a clock advance moves every row's timestamps back by 65
 * minutes, with a pending TTL of 60 minutes, a completed TTL of 120 and a retention of
 * 180 (never a multiple of 65, so no step lands on a boundary).
 * <p>
 * The advisory locks of keys collide across tenants (a key's lock ignores its tenant),
 * and a second instance of the service can hold a one-transaction decision open while the
 * sequence goes on: the other tenant's same key must still be reserved, answered and
 * decided as if no lock collided, and the held key itself is in flight.
 */
class ReservationStateMachineTest {

	/** What the model predicts a reservation finds. */
	enum Result {

		RESERVED(ReserveOutcome.Reserved.class), REPLAY(ReserveOutcome.Replay.class),
		IN_FLIGHT(ReserveOutcome.InFlight.class), FINGERPRINT_MISMATCH(ReserveOutcome.FingerprintMismatch.class);

		final Class<? extends ReserveOutcome> type;

		Result(Class<? extends ReserveOutcome> type) {
			this.type = type;
		}

	}

	static final int ADVANCE_MINUTES = 65;

	static final int PENDING_TTL_MINUTES = 60;

	static final int COMPLETED_TTL_MINUTES = 120;

	static final int RETENTION_MINUTES = 180;

	static final List<String> TENANTS = List.of("alice", "bob");

	static final List<String> POOLS = List.of("orders", "payments");

	static final List<String> KEYS = List.of("k-1", "k-2");

	static final int SLOTS = TENANTS.size() * POOLS.size() * KEYS.size();

	static TestDatabase database;

	static HikariDataSource dataSource;

	static IdempotencyService service;

	/**
	 * A second instance, which holds one-transaction decisions open on a thread of its
	 * own.
	 */
	static IdempotencyService otherInstance;

	static final ExecutorService holder = Executors.newSingleThreadExecutor();

	/** The decision the other instance holds open, if any, across sequences. */
	static Held held;

	static IdempotencySweeper sweeper;

	static IdempotencyRetentionPurger purger;

	static final AtomicLong sequences = new AtomicLong();

	static final AtomicLong steps = new AtomicLong();

	static final AtomicLong windows = new AtomicLong();

	static final AtomicLong replaysChecked = new AtomicLong();

	static final Map<String, AtomicLong> actions = new java.util.concurrent.ConcurrentSkipListMap<>();

	@BeforeContainer
	static void start() {
		database = TestDatabases.create();
		dataSource = database.newDataSource(4);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		JdbcClient.create(dataSource).sql("""
				CREATE TABLE decision (
				    id     text PRIMARY KEY,
				    tenant text NOT NULL,
				    pool   text NOT NULL,
				    key    text NOT NULL,
				    epoch  int  NOT NULL,
				    path   text NOT NULL)""").update();
		IdempotencySettings settings = new IdempotencySettings(Duration.ofMinutes(PENDING_TTL_MINUTES),
				Duration.ofMinutes(COMPLETED_TTL_MINUTES), DuplicatePolicy.REJECT, Duration.ofSeconds(1),
				Duration.ofSeconds(1))
			.withLockKeys(ReservationStateMachineTest::lockIgnoringTenant);
		service = new DefaultIdempotencyService(dataSource, new DataSourceTransactionManager(dataSource),
				new io.ductor.idempotency.internal.IdempotencyStore(dataSource),
				new JsonCodec(JsonMapper.builder().build()), settings, null,
				io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		otherInstance = new DefaultIdempotencyService(dataSource, new DataSourceTransactionManager(dataSource),
				new io.ductor.idempotency.internal.IdempotencyStore(dataSource),
				new JsonCodec(JsonMapper.builder().build()), settings, null,
				io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		sweeper = new IdempotencySweeper(new io.ductor.idempotency.internal.IdempotencyStore(dataSource), 100,
				io.ductor.metrics.internal.DuctorObserver.NOOP);
		purger = new IdempotencyRetentionPurger(dataSource, Duration.ofMinutes(RETENTION_MINUTES));
	}

	/** The same key of two tenants shares one advisory lock. */
	static long lockIgnoringTenant(IdempotentRequest request) {
		return LockKeys.SHA256.lockKey(new IdempotentRequest("", request.pool(), request.key(), request.fingerprint()));
	}

	@AfterContainer
	static void stop() {
		endHeld();
		holder.shutdownNow();
		Map<String, Object> explored = new LinkedHashMap<>();
		actions.forEach((name, count) -> explored.put(name, count.get()));
		new Report("Reservation state machine")
			.parameter("slots", TENANTS.size() + " tenants x " + POOLS.size() + " pools x " + KEYS.size() + " keys")
			.parameter("steps per sequence", "up to " + maxSteps())
			.parameter("TTLs",
					"pending " + PENDING_TTL_MINUTES + " min, completed " + COMPLETED_TTL_MINUTES + " min, retention "
							+ RETENTION_MINUTES + " min; a clock advance is " + ADVANCE_MINUTES + " min")
			.figure("sequences run (shrinking included)", sequences.get())
			.figure("steps run, each followed by the invariants", steps.get())
			.figure("replays checked for tenant, pool and key", replaysChecked.get())
			.figure("two-phase window: keys decided twice after a released reservation (allowed, counted)",
					windows.get())
			.figure("steps by action", explored)
			.write();
		if (dataSource != null) {
			dataSource.close();
		}
		if (database != null) {
			TestDatabases.drop(database);
		}
	}

	static int maxSteps() {
		return "chaos".equals(Scale.current().name()) ? 80 : 40;
	}

	@Property(afterFailure = net.jqwik.api.AfterFailureMode.SAMPLE_FIRST)
	void everyStepKeepsOneDecisionPerKeyAndFreesAKeyExactlyWhenTheModelSays(
			@ForAll("sequences") ActionChain<World> chain) {
		World world = chain.withInvariant("rows, replays and decisions", World::check).run();
		sequences.incrementAndGet();
		windows.addAndGet(world.windows());
	}

	@Provide
	Arbitrary<ActionChain<World>> sequences() {
		return ActionChain.<World>startWith(World::new)
			.withAction(4, slotAction("reserve", World::reserve))
			.withAction(3, handleAction("work", (h) -> h.decision == null, World::work))
			.withAction(3, handleAction("complete", (h) -> h.decision != null, World::complete))
			.withAction(1, handleAction("fail", (h) -> h.decision == null, World::fail))
			.withAction(1, handleAction("crash before commit (two-phase)", (h) -> h.decision == null, World::abandon))
			.withAction(1, handleAction("crash after commit (two-phase)", (h) -> true, World::crashAfterCommit))
			.withAction(3, slotAction("executeInTransaction", World::executeInTransaction))
			.withAction(1, slotAction("crash before commit (one transaction)", World::crashInTransaction))
			.withAction(2, slotAction("hold a one-transaction decision open (other instance)", World::hold))
			.withAction(2, heldAction("commit the held decision", World::commitHeld))
			.withAction(1, heldAction("crash the held decision before its commit", World::crashHeld))
			.withAction(2, simpleAction("sweep", World::sweep))
			.withAction(1, simpleAction("purge", World::purge))
			.withAction(2, new Action.Independent<World>() {

				@Override
				public boolean precondition(World world) {
					// a held decision's timestamps are its transaction's: time stands
					// still while one is open
					return held == null;
				}

				@Override
				public Arbitrary<Transformer<World>> transformer() {
					return simpleAction("advance the clock", World::advance).transformer();
				}

			})
			.withMaxTransformations(maxSteps());
	}

	/**
	 * The two-phase window as a fixed sequence: the work commits, the process dies before
	 * the completion, the sweeper releases the reservation after the pending TTL, and a
	 * retry decides again. Documented for the two-phase mode; counted by the property
	 * above.
	 */
	@Example
	void twoPhaseCrashAfterCommitThenSweepThenRetryIsTheDocumentedSecondDecision() {
		World world = new World();
		world.reserve(0, "fp-a");
		world.crashAfterCommit(world.handles.get(0));
		world.advance();
		world.sweep();
		world.reserve(0, "fp-a");
		world.work(world.handles.get(0));
		world.complete(world.handles.get(0));
		world.check();
		assertThat(world.windows()).as("keys decided twice through the two-phase window").isEqualTo(1);
	}

	/**
	 * The same crash in the one-transaction form leaves nothing: the retry is the only
	 * decision.
	 */
	@Example
	void oneTransactionCrashBeforeCommitThenRetryDecidesOnce() {
		World world = new World();
		world.crashInTransaction(0, "fp-a");
		world.advance();
		world.sweep();
		world.executeInTransaction(0, "fp-a");
		world.executeInTransaction(0, "fp-a");
		world.check();
		assertThat(world.windows()).isZero();
		assertThat(world.decisionsInDatabase()).hasSize(1);
	}

	/**
	 * A swept reservation whose owner completes before any retry took the key still
	 * stores its decision.
	 */
	@Example
	void aSweptReservationCompletedBeforeAnyRetryKeepsItsDecision() {
		World world = new World();
		world.reserve(3, "fp-a");
		Handle slow = world.handles.get(0);
		world.work(slow);
		world.advance();
		world.sweep();
		world.complete(slow);
		world.reserve(3, "fp-a");
		world.check();
		assertThat(world.windows()).isZero();
	}

	/**
	 * Alice's key is held open by another instance; bob's same key shares its advisory
	 * lock. Bob is reserved, decides and replays as if alice did not exist, in both
	 * modes; alice's duplicate is in flight; then alice commits and replays her own
	 * decision.
	 */
	@Example
	void aKeyWhoseLockCollidesWithAnotherTenantsHeldKeyIsStillReservedAndDecided() {
		World world = new World();
		int alice = 0;
		int bob = slot("bob", "orders", "k-1");
		assertThat(lockIgnoringTenant(world.request(alice, "fp-a")))
			.isEqualTo(lockIgnoringTenant(world.request(bob, "fp-a")));
		world.hold(alice, "fp-a");
		world.reserve(bob, "fp-a");
		world.work(world.handles.get(0));
		world.complete(world.handles.get(0));
		world.reserve(bob, "fp-a");
		world.executeInTransaction(bob + 1, "fp-b");
		world.executeInTransaction(alice, "fp-a");
		world.reserve(alice, "fp-b");
		world.check();
		world.commitHeld();
		world.executeInTransaction(alice, "fp-a");
		world.check();
		assertThat(world.decisionsInDatabase()).hasSize(3);
	}

	static Action.Independent<World> slotAction(String name, SlotStep step) {
		return () -> Arbitraries.integers()
			.between(0, SLOTS - 1)
			.flatMap((slot) -> Arbitraries.of("fp-a", "fp-a", "fp-a", "fp-b")
				.map((fp) -> Transformer.mutate(name + " " + describe(slot) + " " + fp, (world) -> {
					count(name);
					step.apply(world, slot, fp);
				})));
	}

	static Action.Independent<World> simpleAction(String name, java.util.function.Consumer<World> step) {
		return () -> Arbitraries.just(Transformer.mutate(name, (world) -> {
			count(name);
			step.accept(world);
		}));
	}

	/**
	 * An action on one of the reservations held now, chosen by its position among those
	 * the action applies to when it runs (so that a shrunk sequence never acts on a
	 * reservation of another run); a no-op when none applies.
	 */
	static Action.Independent<World> handleAction(String name, java.util.function.Predicate<Handle> applies,
			java.util.function.BiConsumer<World, Handle> step) {
		return new Action.Independent<>() {

			@Override
			public boolean precondition(World world) {
				return world.handles.stream().anyMatch(applies);
			}

			@Override
			public Arbitrary<Transformer<World>> transformer() {
				return Arbitraries.integers()
					.between(0, 7)
					.map((index) -> Transformer.mutate(name + " (held reservation " + index + ")", (world) -> {
						List<Handle> candidates = world.handles.stream().filter(applies).toList();
						if (!candidates.isEmpty()) {
							count(name);
							step.accept(world, candidates.get(index % candidates.size()));
						}
					}));
			}

		};
	}

	/** An action on the decision held open by the other instance; a no-op without one. */
	static Action.Independent<World> heldAction(String name, java.util.function.Consumer<World> step) {
		return new Action.Independent<>() {

			@Override
			public boolean precondition(World world) {
				return held != null;
			}

			@Override
			public Arbitrary<Transformer<World>> transformer() {
				return Arbitraries.just(Transformer.mutate(name, (world) -> {
					if (held != null) {
						count(name);
						step.accept(world);
					}
				}));
			}

		};
	}

	static void count(String action) {
		steps.incrementAndGet();
		actions.computeIfAbsent(action, (k) -> new AtomicLong()).incrementAndGet();
	}

	static String describe(int slot) {
		return slotTenant(slot) + "/" + slotPool(slot) + "/" + slotKey(slot);
	}

	static String slotTenant(int slot) {
		return TENANTS.get(slot / (POOLS.size() * KEYS.size()));
	}

	static String slotPool(int slot) {
		return POOLS.get((slot / KEYS.size()) % POOLS.size());
	}

	static String slotKey(int slot) {
		return KEYS.get(slot % KEYS.size());
	}

	static int slot(String tenant, String pool, String key) {
		return TENANTS.indexOf(tenant) * POOLS.size() * KEYS.size() + POOLS.indexOf(pool) * KEYS.size()
				+ KEYS.indexOf(key);
	}

	/** Ends the held decision, if any, by crashing it: nothing of it commits. */
	static void endHeld() {
		if (held != null) {
			Held ending = held;
			held = null;
			ending.crash = true;
			ending.release.countDown();
			try {
				ending.result.get(30, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				// the crash it was told to have
			}
		}
	}

	/**
	 * A one-transaction decision the other instance holds open: reserved and written,
	 * waiting to be committed or crashed.
	 */
	static final class Held {

		final int slot;

		final int epoch;

		final String decision;

		final CountDownLatch reserved = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		volatile boolean crash;

		Future<IdempotentResult<String>> result;

		Held(int slot, int epoch, String decision) {
			this.slot = slot;
			this.epoch = epoch;
			this.decision = decision;
		}

	}

	@FunctionalInterface
	interface SlotStep {

		void apply(World world, int slot, String fingerprint);

	}

	/**
	 * What the model knows of one row of {@code eec_routing_idempotency}; times in
	 * minutes from now.
	 */
	static final class Row {

		String status;

		UUID owner;

		String fingerprint;

		/** The decision stored in the response body. */
		String decision;

		/**
		 * The row's {@code decision_id}: the decision for the two-phase path, the owner
		 * token for the one-transaction one.
		 */
		String decisionColumn;

		/** The stored response body. */
		String body;

		int expiresIn;

		int updatedAgo;

		boolean reclaimable() {
			return "failed_before_commit".equals(this.status)
					|| ("completed".equals(this.status) && this.expiresIn <= 0);
		}

	}

	/** A two-phase reservation held by a caller that has not settled it. */
	static final class Handle {

		final int slot;

		final Reservation reservation;

		final int epoch;

		String decision;

		Handle(int slot, Reservation reservation, int epoch) {
			this.slot = slot;
			this.reservation = reservation;
			this.epoch = epoch;
		}

		@Override
		public String toString() {
			return describe(this.slot) + "#" + this.reservation.ownerToken().toString().substring(0, 8);
		}

	}

	/** One decision committed by the caller's work. */
	record Decision(int slot, int epoch, String path, UUID owner) {
	}

	/**
	 * The system (the service on a database emptied for this sequence) and the model,
	 * side by side. An epoch of a key is a period in which it may have one decision; it
	 * ends only when a completed decision expired or its row was purged, never with a
	 * release.
	 */
	static final class World {

		final JdbcClient jdbc = JdbcClient.create(dataSource);

		final Map<Integer, Row> rows = new HashMap<>();

		final int[] epochs = new int[SLOTS];

		final List<Handle> handles = new ArrayList<>();

		final Map<String, Decision> decisions = new HashMap<>();

		final Set<UUID> sweptOwners = new HashSet<>();

		/** The fingerprint of the decision held open by the other instance. */
		String heldFingerprint;

		int sequence;

		World() {
			// a decision left open by the previous sequence would hold its locks
			endHeld();
			this.jdbc.sql("TRUNCATE eec_routing_idempotency, decision").update();
		}

		IdempotentRequest request(int slot, String fingerprint) {
			return new IdempotentRequest(slotTenant(slot), slotPool(slot), slotKey(slot), fingerprint);
		}

		Result predict(int slot, String fingerprint) {
			if (held != null && held.slot == slot) {
				// its row is not visible yet, whatever the fingerprint
				return Result.IN_FLIGHT;
			}
			Row row = this.rows.get(slot);
			if (row == null || row.reclaimable()) {
				return Result.RESERVED;
			}
			if (!row.fingerprint.equals(fingerprint)) {
				return Result.FINGERPRINT_MISMATCH;
			}
			return "pending".equals(row.status) ? Result.IN_FLIGHT : Result.REPLAY;
		}

		/** The epoch a reservation granted now would belong to. */
		int epochOfGrant(int slot) {
			Row row = this.rows.get(slot);
			// a released row continues its epoch: it was released because nothing was
			// decided
			return (row == null || "completed".equals(row.status)) ? this.epochs[slot] + 1 : this.epochs[slot];
		}

		Row pending(int slot, UUID owner, String fingerprint) {
			Row row = new Row();
			row.status = "pending";
			row.owner = owner;
			row.fingerprint = fingerprint;
			row.expiresIn = PENDING_TTL_MINUTES;
			this.rows.put(slot, row);
			return row;
		}

		String newDecisionId() {
			return "d-" + (++this.sequence);
		}

		void insertDecision(String id, int slot, int epoch, String path) {
			this.jdbc.sql("INSERT INTO decision (id, tenant, pool, key, epoch, path) VALUES (?, ?, ?, ?, ?, ?)")
				.params(id, slotTenant(slot), slotPool(slot), slotKey(slot), epoch, path)
				.update();
		}

		/**
		 * A replayed decision must be this key's current one, and belong to this tenant,
		 * pool and key.
		 */
		void checkReplay(int slot, String decisionId, String decisionColumn) {
			replaysChecked.incrementAndGet();
			assertThat(decisionId).as("replayed decision of " + describe(slot)).isEqualTo(this.rows.get(slot).decision);
			assertThat(decisionColumn).as("replayed decision id of " + describe(slot))
				.isEqualTo(this.rows.get(slot).decisionColumn);
			Map<String, Object> owner = this.jdbc.sql("SELECT tenant, pool, key FROM decision WHERE id = ?")
				.param(decisionId)
				.query()
				.singleRow();
			assertThat(List.of(owner.get("tenant"), owner.get("pool"), owner.get("key")))
				.as("the replayed decision " + decisionId + " belongs to the requester " + describe(slot))
				.isEqualTo(List.of(slotTenant(slot), slotPool(slot), slotKey(slot)));
		}

		void reserve(int slot, String fingerprint) {
			Result expected = predict(slot, fingerprint);
			int epoch = epochOfGrant(slot);
			ReserveOutcome outcome = service.reserve(request(slot, fingerprint));
			assertThat(outcome).as("reserve " + describe(slot) + " " + fingerprint).isInstanceOf(expected.type);
			if (expected == Result.RESERVED) {
				this.epochs[slot] = epoch;
				Reservation reservation = ((ReserveOutcome.Reserved) outcome).reservation();
				pending(slot, reservation.ownerToken(), fingerprint);
				this.handles.add(new Handle(slot, reservation, epoch));
			}
			else if (expected == Result.REPLAY) {
				StoredDecision decision = ((ReserveOutcome.Replay) outcome).decision();
				String body = new String(decision.response().body(), StandardCharsets.UTF_8);
				assertThat(body).as("replayed body of " + describe(slot)).isEqualTo(this.rows.get(slot).body);
				checkReplay(slot, body.replace("\"", ""), decision.decisionId());
			}
		}

		/** The two-phase caller's own work commits: the decision exists from now on. */
		void work(Handle handle) {
			String id = newDecisionId();
			insertDecision(id, handle.slot, handle.epoch, "two-phase");
			handle.decision = id;
			this.decisions.put(id,
					new Decision(handle.slot, handle.epoch, "two-phase", handle.reservation.ownerToken()));
		}

		void complete(Handle handle) {
			Row row = this.rows.get(handle.slot);
			boolean held = row != null && handle.reservation.ownerToken().equals(row.owner)
					&& ("pending".equals(row.status) || "failed_before_commit".equals(row.status));
			// the body a caller of execute() stores: the result as JSON, so either path
			// can replay it
			StoredResponse response = new StoredResponse(200, Map.of("Content-Type", List.of("application/json")),
					json(handle.decision).getBytes(StandardCharsets.UTF_8));
			if (held) {
				service.complete(handle.reservation, handle.decision, response);
				row.status = "completed";
				row.decision = handle.decision;
				row.decisionColumn = handle.decision;
				row.body = json(handle.decision);
				row.expiresIn = COMPLETED_TTL_MINUTES;
				row.updatedAgo = 0;
			}
			else {
				assertThatThrownBy(() -> service.complete(handle.reservation, handle.decision, response))
					.as("complete " + handle + " after the key changed hands")
					.isInstanceOf(ReservationLostException.class);
			}
			this.handles.remove(handle);
		}

		void fail(Handle handle) {
			Row row = this.rows.get(handle.slot);
			boolean held = row != null && handle.reservation.ownerToken().equals(row.owner)
					&& "pending".equals(row.status);
			assertThat(service.fail(handle.reservation)).as("fail " + handle).isEqualTo(held);
			if (held) {
				release(row);
			}
			this.handles.remove(handle);
		}

		/**
		 * A two-phase caller dies before its work committed: the reservation stays
		 * pending.
		 */
		void abandon(Handle handle) {
			this.handles.remove(handle);
		}

		/**
		 * A two-phase caller's work committed, then it died: the completion never comes.
		 */
		void crashAfterCommit(Handle handle) {
			if (handle.decision == null) {
				work(handle);
			}
			this.handles.remove(handle);
		}

		void executeInTransaction(int slot, String fingerprint) {
			Result expected = predict(slot, fingerprint);
			int epoch = epochOfGrant(slot);
			String id = newDecisionId();
			IdempotentRequest request = request(slot, fingerprint);
			switch (expected) {
				case RESERVED -> {
					IdempotentResult<String> result = service.executeInTransaction(request, String.class, () -> {
						insertDecision(id, slot, epoch, "one-transaction");
						return id;
					});
					assertThat(result.replayed()).isFalse();
					assertThat(result.value()).isEqualTo(id);
					this.epochs[slot] = epoch;
					UUID owner = UUID.fromString(result.decisionId());
					Row row = pending(slot, owner, fingerprint);
					row.status = "completed";
					row.decision = id;
					row.decisionColumn = result.decisionId();
					row.body = json(id);
					row.expiresIn = COMPLETED_TTL_MINUTES;
					this.decisions.put(id, new Decision(slot, epoch, "one-transaction", owner));
				}
				case REPLAY -> {
					IdempotentResult<String> result = service.executeInTransaction(request, String.class, () -> {
						insertDecision(id, slot, epoch, "one-transaction");
						return id;
					});
					assertThat(result.replayed()).as("executeInTransaction " + describe(slot) + " replays").isTrue();
					checkReplay(slot, result.value(), result.decisionId());
				}
				case IN_FLIGHT -> assertThatThrownBy(() -> service.executeInTransaction(request, String.class, () -> {
					insertDecision(id, slot, epoch, "one-transaction");
					return id;
				})).isInstanceOf(IdempotencyKeyInFlightException.class);
				default -> assertThatThrownBy(() -> service.executeInTransaction(request, String.class, () -> {
					insertDecision(id, slot, epoch, "one-transaction");
					return id;
				})).isInstanceOf(IdempotencyKeyReuseException.class);
			}
		}

		/**
		 * The one-transaction caller writes its decision and dies before the commit:
		 * nothing remains.
		 */
		void crashInTransaction(int slot, String fingerprint) {
			Result expected = predict(slot, fingerprint);
			String id = newDecisionId();
			IdempotentRequest request = request(slot, fingerprint);
			if (expected == Result.REPLAY) {
				IdempotentResult<String> result = service.executeInTransaction(request, String.class, () -> {
					throw new IllegalStateException("a replay must not run the action");
				});
				checkReplay(slot, result.value(), result.decisionId());
				return;
			}
			Class<? extends Throwable> failure = switch (expected) {
				case RESERVED -> Crash.class;
				case IN_FLIGHT -> IdempotencyKeyInFlightException.class;
				default -> IdempotencyKeyReuseException.class;
			};
			assertThatThrownBy(() -> service.executeInTransaction(request, String.class, () -> {
				insertDecision(id, slot, epochOfGrant(slot), "one-transaction");
				throw new Crash();
			})).isInstanceOf(failure);
		}

		/**
		 * The other instance reserves a key that has no row in a one-transaction
		 * decision, writes its decision and holds the transaction open; otherwise the
		 * step is an ordinary one-transaction decision of this instance.
		 */
		void hold(int slot, String fingerprint) {
			if (held != null || this.rows.containsKey(slot)) {
				executeInTransaction(slot, fingerprint);
				return;
			}
			int epoch = epochOfGrant(slot);
			Held holding = new Held(slot, epoch, newDecisionId());
			IdempotentRequest request = request(slot, fingerprint);
			holding.result = holder.submit(() -> otherInstance.executeInTransaction(request, String.class, () -> {
				insertDecision(holding.decision, slot, epoch, "one-transaction");
				holding.reserved.countDown();
				try {
					assertThat(holding.release.await(60, TimeUnit.SECONDS)).as("released").isTrue();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
				if (holding.crash) {
					throw new Crash();
				}
				return holding.decision;
			}));
			try {
				assertThat(holding.reserved.await(30, TimeUnit.SECONDS))
					.as("the other instance reserved " + describe(slot))
					.isTrue();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			this.heldFingerprint = fingerprint;
			held = holding;
		}

		void commitHeld() {
			Held holding = held;
			held = null;
			holding.release.countDown();
			IdempotentResult<String> result;
			try {
				result = holding.result.get(30, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				throw new AssertionError("the held decision of " + describe(holding.slot) + " failed", ex);
			}
			assertThat(result.replayed()).isFalse();
			assertThat(result.value()).isEqualTo(holding.decision);
			this.epochs[holding.slot] = holding.epoch;
			UUID owner = UUID.fromString(result.decisionId());
			Row row = pending(holding.slot, owner, this.heldFingerprint);
			row.status = "completed";
			row.decision = holding.decision;
			row.decisionColumn = result.decisionId();
			row.body = json(holding.decision);
			row.expiresIn = COMPLETED_TTL_MINUTES;
			this.decisions.put(holding.decision, new Decision(holding.slot, holding.epoch, "one-transaction", owner));
		}

		void crashHeld() {
			endHeld();
		}

		void sweep() {
			List<Row> due = this.rows.values()
				.stream()
				.filter((row) -> "pending".equals(row.status) && row.expiresIn <= 0)
				.toList();
			assertThat(sweeper.sweep()).as("reservations released by the sweeper").isEqualTo(due.size());
			for (Row row : due) {
				if (row.owner != null) {
					this.sweptOwners.add(row.owner);
				}
				release(row);
			}
		}

		void purge() {
			List<Integer> due = this.rows.entrySet()
				.stream()
				.filter((entry) -> !"pending".equals(entry.getValue().status)
						&& entry.getValue().updatedAgo > RETENTION_MINUTES && entry.getValue().expiresIn <= 0)
				.map(Map.Entry::getKey)
				.toList();
			assertThat(purger.purge(100)).as("records purged").isEqualTo(due.size());
			due.forEach(this.rows::remove);
		}

		/** Time passes: every row's timestamps move back. */
		void advance() {
			String interval = ADVANCE_MINUTES + " minutes";
			this.jdbc.sql("""
					UPDATE eec_routing_idempotency SET created_at = created_at - ?::interval,
					    updated_at = updated_at - ?::interval, expires_at = expires_at - ?::interval""")
				.params(interval, interval, interval)
				.update();
			for (Row row : this.rows.values()) {
				row.expiresIn -= ADVANCE_MINUTES;
				row.updatedAgo += ADVANCE_MINUTES;
			}
		}

		static String json(String decision) {
			return "\"" + decision + "\"";
		}

		void release(Row row) {
			row.status = "failed_before_commit";
			row.expiresIn = 0;
			row.updatedAgo = 0;
		}

		List<Map<String, Object>> decisionsInDatabase() {
			return this.jdbc.sql("SELECT id, tenant, pool, key, epoch, path FROM decision ORDER BY id")
				.query()
				.listOfRows();
		}

		/**
		 * Keys decided twice in one epoch, every decision but one made under a swept
		 * two-phase reservation.
		 */
		long windows() {
			Map<String, Integer> perEpoch = new HashMap<>();
			for (Decision decision : this.decisions.values()) {
				perEpoch.merge(decision.slot() + "/" + decision.epoch(), 1, Integer::sum);
			}
			return perEpoch.values().stream().filter((n) -> n > 1).count();
		}

		/** The invariants, checked after every step. */
		void check() {
			// every row is what the model says: a key is free exactly when the model says
			// so
			Map<Integer, Map<String, Object>> actual = new HashMap<>();
			for (Map<String, Object> row : this.jdbc.sql("""
					SELECT tenant_scope, pool_id, idempotency_key, status, owner_token, request_fingerprint,
					       decision_id, convert_from(response_body, 'UTF8') AS body, expires_at <= now() AS expired
					FROM eec_routing_idempotency""").query().listOfRows()) {
				int slot = TENANTS.indexOf(row.get("tenant_scope")) * POOLS.size() * KEYS.size()
						+ POOLS.indexOf(row.get("pool_id")) * KEYS.size() + KEYS.indexOf(row.get("idempotency_key"));
				actual.put(slot, row);
			}
			assertThat(actual.keySet()).as("keys with a row").isEqualTo(this.rows.keySet());
			this.rows.forEach((slot, model) -> {
				Map<String, Object> row = actual.get(slot);
				String what = describe(slot);
				assertThat(row.get("status")).as("status of " + what).isEqualTo(model.status);
				assertThat(row.get("request_fingerprint")).as("fingerprint of " + what).isEqualTo(model.fingerprint);
				assertThat(row.get("expired")).as("expired " + what).isEqualTo(model.expiresIn <= 0);
				if (model.owner != null) {
					assertThat(row.get("owner_token")).as("owner of " + what).isEqualTo(model.owner);
				}
				if ("completed".equals(model.status)) {
					assertThat(row.get("decision_id")).as("decision id of " + what).isEqualTo(model.decisionColumn);
					assertThat(row.get("body")).as("stored body of " + what).isEqualTo(model.body);
				}
			});
			// every decision in the database is one the model knows, and none is left out
			Map<String, Map<String, Object>> stored = new HashMap<>();
			for (Map<String, Object> row : decisionsInDatabase()) {
				stored.put((String) row.get("id"), row);
			}
			assertThat(stored.keySet()).as("decisions committed").isEqualTo(this.decisions.keySet());
			// no key has two decisions, except through the two-phase window: a released
			// reservation whose work committed
			Map<String, List<String>> strict = new HashMap<>();
			this.decisions.forEach((id, decision) -> {
				if (!this.sweptOwners.contains(decision.owner())) {
					strict.computeIfAbsent(decision.slot() + "/" + decision.epoch(), (k) -> new ArrayList<>()).add(id);
				}
			});
			strict
				.forEach((epoch, ids) -> assertThat(ids)
					.as("decisions of " + describe(Integer.parseInt(epoch.split("/")[0]))
							+ " in one epoch, none of them" + " under a reservation the sweeper released")
					.hasSizeLessThanOrEqualTo(1));
			// a completed row names a decision of its own key
			this.rows.forEach((slot, model) -> {
				if ("completed".equals(model.status)) {
					assertThat(this.decisions.get(model.decision).slot()).isEqualTo(slot);
				}
			});
		}

	}

	/** The crash of a one-transaction caller before its commit. */
	static final class Crash extends RuntimeException {

		Crash() {
			super("crashed before the commit");
		}

	}

}
