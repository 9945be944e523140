package io.ductor.effect;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.LifecycleEffects.Behavior;
import io.ductor.effect.LifecycleEffects.Call;
import io.ductor.effect.internal.DrainerLeases.LeaseBeat;
import io.ductor.effect.internal.DrainerLeases;
import io.ductor.effect.internal.EffectDispatcher;
import io.ductor.effect.internal.EffectPayloads;
import io.ductor.effect.internal.EffectReconciliation;
import io.ductor.effect.internal.EffectRegistry;
import io.ductor.effect.internal.EffectRetentionPurger;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.effect.internal.IntentClaims;
import io.ductor.effect.internal.IntentOutcomes.Completion;
import io.ductor.effect.internal.IntentOutcomes;
import io.ductor.effect.internal.IntentReads;
import io.ductor.effect.internal.IntentRedrive;
import io.ductor.effect.internal.IntentRetention;
import io.ductor.effect.internal.ExpiredLeaseRedriver;
import io.ductor.effect.internal.ReconcileRounds;
import io.ductor.effect.internal.Settled;
import io.ductor.internal.DbValues;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;
import io.ductor.worker.internal.Backoff;
import io.ductor.worker.internal.RetentionPurger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The life of an effect intent against a model, on real PostgreSQL: random sequences of
 * scheduling (plain, delayed, alarm occurrences, rescheduling and cancelling alarms),
 * drainers claiming, starting (the real {@link EffectDispatcher} with the durable start
 * mark), recording outcomes in batches (success, retryable failure, unknown outcome at
 * the mailer, "not applied", refusal), stopping (hand-back), starting again under a new
 * lease owner, crashing (everything held is forgotten), the heartbeat, leases expiring,
 * clock advances, the reconciler, operator retry / resolve / cancel / retryAll, and
 * retention.
 * <p>
 * Two drainers share one database; each step is one call of the real statements
 * ({@link IntentClaims}, {@link IntentOutcomes}, …), {@link EffectOutbox},
 * {@link ExpiredLeaseRedriver} or retention purger. Some intents are poisoned: a trigger
 * stands for an application constraint that refuses to let them leave {@code in_flight}
 * for {@code pending}, {@code completed} or {@code needs_decision}, or to be deleted, so
 * every batch statement meets rows that break it.
 * <p>
 * After every step every row is what the model says, and: at most one pending occurrence
 * per alarm; at most one running attempt per intent; no {@code NOT_IDEMPOTENT} attempt
 * runs again without a decision (an operator's, or the receiver's own "not applied"); a
 * parked mail started; after a reconciler round no intent is in flight beyond its lease;
 * each recorded outcome is the one of the attempt holding the lease (fencing); and a
 * batch with a bad row settles all the others.
 * <p>
 * Time is the database's: a clock advance moves every timestamp back by 65 minutes, with
 * a lease of 5 minutes, a retry backoff of 30 to 60 minutes, a delay of one hour and a
 * retention of one hour.
 */
class IntentLifecycleStateMachineTest {

	static final Duration LEASE = Duration.ofMinutes(5);

	static final int MAX_ATTEMPTS = 3;

	static final List<String> ALARMS = List.of("digest", "reminder");

	static final List<String> PARKED = List.of("failed", "needs_decision");

	static final List<String> TERMINAL = List.of("completed", "failed", "cancelled");

	static TestDatabase database;

	static ConfigurableApplicationContext context;

	static EffectOutbox outbox;

	static EffectOperations operations;

	static IntentClaims claims;

	static IntentOutcomes outcomes;

	static DrainerLeases leases;

	static IntentReads reads;

	static IntentRedrive redrive;

	static ReconcileRounds rounds;

	static EffectDispatcher dispatcher;

	/**
	 * The lifecycle's effects have no reconcilers: the reconcile settings only complete
	 * the wiring.
	 */
	static final Backoff RECONCILE_BACKOFF = new Backoff(Duration.ofHours(1), Duration.ofHours(1), 1.0);

	static EffectRegistry registry;

	static EffectPayloads payloads;

	static RetentionPurger purger;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	static final AtomicLong sequences = new AtomicLong();

	static final AtomicLong steps = new AtomicLong();

	static final AtomicLong receiverCalls = new AtomicLong();

	static final AtomicLong claimed = new AtomicLong();

	static final AtomicLong faultyBatches = new AtomicLong();

	static final Map<String, AtomicLong> actions = new ConcurrentSkipListMap<>();

	static final long began = System.nanoTime();

	@BeforeContainer
	static void start() {
		database = TestDatabases.create();
		context = EffectInstances.start(database, LifecycleEffects.Config.class, "ductor.effects.drainer.enabled=false",
				"ductor.effects.reconciler.enabled=false", "ductor.retention.enabled=false",
				"ductor.effects.retention=1h", "ductor.effects.backoff.initial=1h", "ductor.effects.backoff.max=1h",
				"ductor.effects.drainer.notify-on-commit=false", "logging.level.io.ductor=error");
		DataSource dataSource = context.getBean(DataSource.class);
		outbox = context.getBean(EffectOutbox.class);
		operations = context.getBean(EffectOperations.class);
		claims = new IntentClaims(dataSource);
		outcomes = new IntentOutcomes(dataSource);
		leases = new DrainerLeases(dataSource);
		reads = new IntentReads(dataSource);
		redrive = new IntentRedrive(dataSource);
		rounds = new ReconcileRounds(dataSource);
		registry = context.getBean(EffectRegistry.class);
		payloads = new EffectPayloads(context.getBean(JsonCodec.class).mapper(), 256 * 1024);
		dispatcher = new EffectDispatcher(registry, payloads, io.ductor.observation.internal.DuctorInstrumentation.NOOP,
				Duration.ofHours(1), RECONCILE_BACKOFF);
		purger = new EffectRetentionPurger(new IntentRetention(dataSource), Duration.ofHours(1));
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		jdbc = JdbcClient.create(dataSource);
		// an application constraint that poisoned intents break in every batch statement
		jdbc.sql("""
				CREATE FUNCTION lc_poison() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
				    IF TG_OP = 'DELETE' THEN
				        RAISE EXCEPTION 'a receipt still refers to %', OLD.idempotency_key
				            USING ERRCODE = 'foreign_key_violation';
				    END IF;
				    IF OLD.status = 'in_flight' AND NEW.status IN ('pending', 'completed', 'needs_decision') THEN
				        RAISE EXCEPTION 'poisoned intent % may not become %', OLD.idempotency_key, NEW.status
				            USING ERRCODE = 'check_violation';
				    END IF;
				    RETURN NEW;
				END $$""").update();
		jdbc.sql("""
				CREATE TRIGGER lc_poison BEFORE UPDATE OR DELETE ON eec_effect_intent FOR EACH ROW
				WHEN (OLD.idempotency_key LIKE 'poison:%') EXECUTE FUNCTION lc_poison()""").update();
	}

	@AfterContainer
	static void stop() throws IOException {
		Map<String, Long> byAction = new LinkedHashMap<>();
		actions.forEach((name, count) -> byAction.put(name, count.get()));
		String report = "Intent lifecycle state machine\n" + "sequences run (shrinking included): " + sequences.get()
				+ "\nsteps run, each followed by the invariants: " + steps.get() + "\nsteps per sequence: up to "
				+ maxSteps() + "\nattempts claimed: " + claimed.get() + "\nreceiver calls: " + receiverCalls.get()
				+ "\nbatches with a row that broke a constraint: " + faultyBatches.get() + "\nseconds: "
				+ (System.nanoTime() - began) / 1_000_000_000 + "\nsteps by action: " + byAction + "\n";
		System.out.print(report);
		String path = System.getProperty("ductor.lifecycle.report");
		if (path != null) {
			Files.createDirectories(Path.of(path).getParent());
			Files.writeString(Path.of(path), report, StandardCharsets.UTF_8);
		}
		if (context != null) {
			context.close();
		}
		if (database != null) {
			TestDatabases.drop(database);
		}
	}

	static int maxSteps() {
		return Integer.getInteger("ductor.lifecycle.steps", 40);
	}

	@Property(afterFailure = AfterFailureMode.SAMPLE_FIRST)
	void everyStepKeepsTheLifecycleRules(@ForAll("sequences") ActionChain<World> chain) {
		chain.withInvariant("rows and lifecycle rules", World::check).run();
		sequences.incrementAndGet();
	}

	@Provide
	Arbitrary<ActionChain<World>> sequences() {
		return ActionChain.<World>startWith(World::new)
			.withAction(5,
					action("schedule", Combinators
						.combine(Arbitraries.of(true, false), Arbitraries.integers().between(0, 5),
								Arbitraries.integers().between(0, 4))
						.as((mail, poison, delayed) -> (world) -> world.schedule(mail, poison == 0, delayed == 0))))
			.withAction(2, action("schedule alarm", Combinators
				.combine(Arbitraries.integers().between(0, 1), Arbitraries.of(true, false),
						Arbitraries.integers().between(0, 3))
				.as((alarm, mail, delayed) -> (world) -> world.scheduleAlarm(ALARMS.get(alarm), mail, delayed == 0))))
			.withAction(1,
					action("cancel alarm",
							Arbitraries.integers()
								.between(0, 1)
								.map((alarm) -> (world) -> world.cancelAlarm(ALARMS.get(alarm)))))
			.withAction(5,
					action("claim",
							Combinators.combine(drainer(), Arbitraries.integers().between(1, 3))
								.as((drainer, limit) -> (world) -> world.claim(drainer, limit))))
			.withAction(6,
					action("start",
							Combinators
								.combine(drainer(), index(), Arbitraries.of(Behavior.class),
										Arbitraries.integers().between(1, 3))
								.as((drainer, claim, behavior, count) -> (world) -> {
									for (int i = 0; i < count; i++) {
										world.start(drainer, claim, behavior);
									}
								})))
			.withAction(5,
					action("record outcomes",
							Combinators.combine(drainer(), Arbitraries.integers().between(1, 3))
								.as((drainer, count) -> (world) -> world.recordOutcomes(drainer, count))))
			.withAction(1, action("stop drainer", drainer().map((drainer) -> (world) -> world.stopDrainer(drainer))))
			.withAction(3, action("start drainer", drainer().map((drainer) -> (world) -> world.startDrainer(drainer))))
			.withAction(1, action("crash drainer", drainer().map((drainer) -> (world) -> world.crash(drainer))))
			.withAction(1, action("heartbeat", drainer().map((drainer) -> (world) -> world.heartbeat(drainer))))
			.withAction(2, action("lease expires", index().map((intent) -> (world) -> world.expireLease(intent))))
			.withAction(1, action("advance the clock", Arbitraries.just(World::advance)))
			.withAction(2, action("reconcile", Arbitraries.just(World::reconcile)))
			.withAction(1, action("operator retry", index().map((intent) -> (world) -> world.retry(intent))))
			.withAction(1,
					action("operator resolve",
							Combinators.combine(index(), Arbitraries.of(EffectResolution.class))
								.as((intent, resolution) -> (world) -> world.resolve(intent, resolution))))
			.withAction(1, action("operator cancel", index().map((intent) -> (world) -> world.cancel(intent))))
			.withAction(1,
					action("operator retryAll",
							Combinators.combine(Arbitraries.of(true, false), Arbitraries.of(PARKED))
								.as((mail, status) -> (world) -> world.retryAll(mail, status))))
			.withAction(1, action("retention purge", Arbitraries.just(World::purge)))
			.withMaxTransformations(maxSteps());
	}

	static Arbitrary<Integer> drainer() {
		return Arbitraries.integers().between(0, 1);
	}

	static Arbitrary<Integer> index() {
		return Arbitraries.integers().between(0, 15);
	}

	/** An action whose step the arbitrary describes; named for the report. */
	static Action.Independent<World> action(String name, Arbitrary<Step> step) {
		return () -> step.map((body) -> Transformer.mutate(name, (world) -> {
			steps.incrementAndGet();
			actions.computeIfAbsent(name, (k) -> new AtomicLong()).incrementAndGet();
			world.log.add(name);
			body.accept(world);
		}));
	}

	@FunctionalInterface
	interface Step extends java.util.function.Consumer<World> {

	}

	/**
	 * A crashed drainer's mail that had been claimed but not started: the reconciler
	 * returns it to pending uncounted, and it is sent once.
	 */
	@Example
	void aMailClaimedByACrashedDrainerIsSentOnceAfterTheReconcilerReturnsIt() {
		World world = new World();
		world.schedule(true, false, false);
		world.claim(0, 3);
		world.crash(0);
		world.advance();
		world.reconcile();
		world.check();
		assertThat(world.intents.get(0).status).isEqualTo("pending");
		assertThat(world.intents.get(0).attempts).isZero();
		world.claim(1, 3);
		world.start(1, 0, Behavior.SUCCESS);
		world.recordOutcomes(1, 1);
		world.check();
		assertThat(world.intents.get(0).status).isEqualTo("completed");
		assertThat(world.callsOf(world.intents.get(0))).isEqualTo(1);
	}

	/**
	 * An alarm rescheduled while its occurrence runs: the retryable failure of that
	 * attempt cancels it, and the poisoned intent in the same batch is failed while the
	 * others settle.
	 */
	@Example
	void aSupersededOccurrenceAndAPoisonedIntentInOneBatchLeaveTheOthersSettled() {
		World world = new World();
		world.scheduleAlarm("digest", false, false);
		world.schedule(false, true, false);
		world.schedule(true, false, false);
		world.claim(0, 3);
		world.scheduleAlarm("digest", false, false);
		world.start(0, 0, Behavior.FAILS);
		world.start(0, 0, Behavior.SUCCESS);
		world.start(0, 0, Behavior.SUCCESS);
		world.recordOutcomes(0, 3);
		world.check();
		assertThat(world.intents).extracting((intent) -> intent.status)
			.containsExactly("cancelled", "failed", "completed", "pending");
	}

	/**
	 * Found by the property with the attempt fence of completions removed: a drainer's
	 * attempt whose lease expired is redriven and claimed again by the same drainer; the
	 * old attempt's outcome, recorded at stop, must not settle the new attempt.
	 */
	@Example
	void theOutcomeOfARedrivenAttemptDoesNotSettleTheAttemptThatReplacedIt() {
		World world = new World();
		world.schedule(false, false, false);
		world.claim(0, 1);
		world.expireLease(0);
		world.start(0, 0, Behavior.SUCCESS);
		world.reconcile();
		world.claim(0, 1);
		world.stopDrainer(0);
		world.check();
		assertThat(world.intents.get(0).status).isEqualTo("pending");
		assertThat(world.intents.get(0).attempts).isEqualTo(1);
	}

	/**
	 * Found by the property's model: an operator retries an alarm's old, failed
	 * occurrence while the newer one runs (no pending occurrence refuses it). The retried
	 * one is the alarm's live occurrence, so the running one is superseded: its retryable
	 * failure cancels it, where it was failed with a unique violation of the
	 * one-pending-occurrence index.
	 */
	@Example
	void retryingAnOldOccurrenceWhileTheNewerRunsSupersedesTheNewer() {
		World world = new World();
		world.scheduleAlarm("digest", false, false);
		world.claim(0, 1);
		world.start(0, 0, Behavior.REFUSED);
		world.recordOutcomes(0, 1);
		world.scheduleAlarm("digest", false, false);
		world.claim(0, 1);
		world.retry(0);
		world.start(0, 0, Behavior.FAILS);
		world.recordOutcomes(0, 1);
		world.check();
		assertThat(world.intents).extracting((intent) -> intent.status).containsExactly("pending", "cancelled");
		assertThat(reads.find(world.intents.get(1).id).orElseThrow().lastError())
			.contains("superseded by a rescheduled occurrence")
			.contains("receiver timed out");
	}

	/** What the model knows of one row of {@code eec_effect_intent}. */
	static final class Intent {

		long id;

		String key;

		boolean mail;

		boolean poison;

		String alarm;

		String status = "pending";

		int attempts;

		int maxAttempts = MAX_ATTEMPTS;

		boolean due;

		boolean started;

		boolean superseded;

		String owner;

		boolean leaseExpired;

		/** Clock advances since it finished. */
		int finishedAge;

		/**
		 * Whether the mailer may be called again: a decision (or "not applied") since its
		 * last call.
		 */
		boolean mayCall = true;

		boolean isLive() {
			return List.of("pending", "in_flight", "failed", "needs_decision").contains(this.status);
		}

		@Override
		public String toString() {
			return this.id + "(" + this.key + " " + this.status + " #" + this.attempts + ")";
		}

	}

	/**
	 * One attempt a drainer claimed; dispatched once started, with the outcome to record.
	 */
	static final class Claim {

		final Intent intent;

		final ClaimedIntent claimed;

		boolean dispatched;

		Completion completion;

		Claim(Intent intent, ClaimedIntent claimed) {
			this.intent = intent;
			this.claimed = claimed;
		}

	}

	/**
	 * One drainer instance: a process that claims under the lease owner of its current
	 * start.
	 */
	static final class Drainer {

		String instance = UUID.randomUUID().toString().substring(0, 8);

		int generation;

		/** The lease owner of the running start; {@code null} while stopped. */
		String owner;

		final List<Claim> claims = new ArrayList<>();

		void begin() {
			this.owner = "lc-" + this.instance + "/" + (++this.generation);
		}

	}

	/** The system (one database emptied per sequence) and the model side by side. */
	static final class World {

		final List<Intent> intents = new ArrayList<>();

		final Drainer[] drainers = { new Drainer(), new Drainer() };

		final Set<String> owners = new HashSet<>();

		final List<String> log = new ArrayList<>();

		int seen;

		boolean reconciled;

		World() {
			jdbc.sql("TRUNCATE eec_effect_intent").update();
			LifecycleEffects.calls.clear();
			for (Drainer drainer : this.drainers) {
				drainer.begin();
				this.owners.add(drainer.owner);
			}
		}

		// scheduling

		void schedule(boolean mail, boolean poison, boolean delayed) {
			String key = (poison ? "poison:" : "k:") + UUID.randomUUID();
			EffectRequest request = EffectRequest.of(mail ? "lc.mail" : "lc.hotel", "x").withKey(key);
			tx.executeWithoutResult((status) -> outbox
				.schedule(delayed ? request.withDelay(Duration.ofHours(1)) : request.withDelay(Duration.ZERO)));
			Intent intent = add(key, mail, null);
			intent.poison = poison;
			intent.due = !delayed;
		}

		void scheduleAlarm(String alarm, boolean mail, boolean delayed) {
			String key = tx
				.execute((status) -> outbox.scheduleAlarm(alarm, delayed ? Duration.ofHours(1) : Duration.ZERO,
						EffectRequest.of(mail ? "lc.mail" : "lc.hotel", alarm)));
			supersede(alarm);
			Intent intent = add(key, mail, alarm);
			intent.due = !delayed;
		}

		void cancelAlarm(String alarm) {
			Boolean cancelled = tx.execute((status) -> outbox.cancelAlarm(alarm));
			assertThat(cancelled).as("a pending occurrence was cancelled").isEqualTo(supersede(alarm));
		}

		/**
		 * @return whether a pending occurrence was cancelled
		 */
		private boolean supersede(String alarm) {
			boolean cancelled = false;
			for (Intent intent : this.intents) {
				if (alarm.equals(intent.alarm) && intent.isLive()) {
					intent.superseded = true;
					if (intent.status.equals("pending")) {
						finish(intent, "cancelled");
						cancelled = true;
					}
				}
			}
			return cancelled;
		}

		private Intent add(String key, boolean mail, String alarm) {
			Intent intent = new Intent();
			intent.key = key;
			intent.mail = mail;
			intent.alarm = alarm;
			intent.id = reads.findByKey(key).orElseThrow().id();
			this.intents.add(intent);
			return intent;
		}

		// drainers

		void claim(int d, int limit) {
			Drainer drainer = this.drainers[d];
			if (drainer.owner == null) {
				return;
			}
			List<Intent> due = this.intents.stream().filter((i) -> i.status.equals("pending") && i.due).toList();
			List<ClaimedIntent> claimed = claims.claim(drainer.owner, LEASE, limit);
			IntentLifecycleStateMachineTest.claimed.addAndGet(claimed.size());
			assertThat(claimed).as("claimed of " + due).hasSize(Math.min(limit, due.size()));
			for (ClaimedIntent c : claimed) {
				Intent intent = byId(c.id());
				assertThat(due).as("claimed intent " + c.id() + " is due and pending").contains(intent);
				assertThat(c.attempt()).isEqualTo(intent.attempts + 1);
				assertThat(c.maxAttempts()).isEqualTo(intent.maxAttempts);
				intent.status = "in_flight";
				intent.attempts = c.attempt();
				intent.owner = drainer.owner;
				intent.leaseExpired = false;
				intent.started = false;
				// as DrainSession does: an earlier unstarted claim of the same intent is
				// dropped
				drainer.claims.removeIf((held) -> held.intent == intent && !held.dispatched);
				drainer.claims.add(new Claim(intent, c));
			}
		}

		/**
		 * Runs one claimed attempt with the real dispatcher: the start mark, the
		 * receiver, the outcome.
		 */
		void start(int d, int index, Behavior behavior) {
			Drainer drainer = busy(d, (c) -> !c.dispatched);
			List<Claim> unstarted = drainer.claims.stream().filter((c) -> !c.dispatched).toList();
			if (drainer.owner == null || unstarted.isEmpty()) {
				return;
			}
			Claim claim = unstarted.get(index % unstarted.size());
			Intent intent = claim.intent;
			boolean mayStart = !intent.mail || (intent.status.equals("in_flight") && drainer.owner.equals(intent.owner)
					&& intent.attempts == claim.claimed.attempt() && !intent.leaseExpired && !intent.started);
			LifecycleEffects.next = behavior;
			int callsBefore = LifecycleEffects.calls.size();
			Completion completion = dispatcher.dispatch(claim.claimed,
					(ClaimedIntent c) -> outcomes.markStarted(drainer.owner, c.id(), c.attempt()));
			int called = LifecycleEffects.calls.size() - callsBefore;
			receiverCalls.addAndGet(called);
			assertThat(called).as("receiver calls of " + intent).isEqualTo(mayStart ? 1 : 0);
			if (!mayStart) {
				// the lease was lost before the start: nothing to record, the claim is
				// forgotten
				assertThat(completion).isNull();
				drainer.claims.remove(claim);
				return;
			}
			if (intent.mail) {
				intent.started = true;
			}
			assertThat(completion).isNotNull();
			claim.dispatched = true;
			claim.completion = completion;
		}

		void recordOutcomes(int d, int count) {
			Drainer drainer = busy(d, (c) -> c.dispatched);
			List<Claim> done = drainer.claims.stream().filter((c) -> c.dispatched).limit(count).toList();
			if (drainer.owner == null || done.isEmpty()) {
				return;
			}
			record(drainer, done);
		}

		/**
		 * Drainer {@code d}, or the other one when only the other has a claim
		 * {@code wanted} accepts.
		 */
		private Drainer busy(int d, java.util.function.Predicate<Claim> wanted) {
			Drainer chosen = this.drainers[d];
			Drainer other = this.drainers[1 - d];
			boolean chosenHas = chosen.owner != null && chosen.claims.stream().anyMatch(wanted);
			boolean otherHas = other.owner != null && other.claims.stream().anyMatch(wanted);
			return (!chosenHas && otherHas) ? other : chosen;
		}

		private void record(Drainer drainer, List<Claim> done) {
			Map<Long, String> expected = new HashMap<>();
			boolean faulty = false;
			// predicted in order: a row's outcome may free or take an alarm's pending
			// place for the next one
			for (Claim claim : done) {
				Intent intent = claim.intent;
				if (!intent.status.equals("in_flight") || !drainer.owner.equals(intent.owner)
						|| intent.attempts != claim.completion.attempt()) {
					continue;
				}
				String to = DbValues.of(claim.completion.status());
				if (to.equals("pending") && intent.superseded) {
					to = "cancelled";
				}
				if (breaks(intent, to)) {
					to = "failed";
					faulty = true;
				}
				expected.put(intent.id, to);
				settle(intent, to);
				if (to.equals("pending")) {
					intent.due = false;
				}
				if (intent.mail && claim.completion.error() != null
						&& claim.completion.error().contains(EffectNotAppliedException.class.getName())) {
					intent.mayCall = true;
				}
			}
			List<Settled> settled = outcomes.complete(drainer.owner, done.stream().map((c) -> c.completion).toList());
			if (faulty) {
				faultyBatches.incrementAndGet();
			}
			assertThat(settled.stream().collect(Collectors.toMap(Settled::id, (s) -> DbValues.of(s.status()))))
				.as("outcomes recorded (fenced by lease owner and attempt), the others of a faulty batch included")
				.isEqualTo(expected);
			drainer.claims.removeAll(done);
		}

		void stopDrainer(int d) {
			Drainer drainer = this.drainers[d];
			if (drainer.owner == null) {
				return;
			}
			// running effects finish and their outcomes are recorded; the unstarted are
			// handed back
			List<Claim> done = drainer.claims.stream().filter((c) -> c.dispatched).toList();
			if (!done.isEmpty()) {
				record(drainer, done);
			}
			List<Claim> unstarted = List.copyOf(drainer.claims);
			int expected = 0;
			for (Claim claim : unstarted) {
				Intent intent = claim.intent;
				if (!intent.status.equals("in_flight") || !drainer.owner.equals(intent.owner)
						|| intent.attempts != claim.claimed.attempt() || intent.started) {
					continue;
				}
				String to = intent.superseded ? "cancelled" : "pending";
				if (breaks(intent, to)) {
					settle(intent, "failed");
					continue;
				}
				expected++;
				intent.attempts--;
				settle(intent, to);
			}
			int handedBack = outcomes.handBack(drainer.owner, unstarted.stream().map((c) -> c.claimed).toList());
			assertThat(handedBack).as("handed back").isEqualTo(expected);
			drainer.claims.clear();
			drainer.owner = null;
		}

		void startDrainer(int d) {
			Drainer drainer = this.drainers[d];
			if (drainer.owner == null) {
				drainer.begin();
				this.owners.add(drainer.owner);
			}
		}

		/**
		 * The process dies: every claim, running or not, is forgotten; it comes back as a
		 * new instance.
		 */
		void crash(int d) {
			Drainer crashed = this.drainers[d];
			this.drainers[d] = new Drainer();
			this.drainers[d].begin();
			this.owners.add(this.drainers[d].owner);
			crashed.claims.clear();
		}

		void heartbeat(int d) {
			Drainer drainer = this.drainers[d];
			if (drainer.owner == null) {
				return;
			}
			// the attempts the drainer holds, the latest claim of each intent
			Map<Long, Integer> held = new LinkedHashMap<>();
			for (Claim claim : drainer.claims) {
				held.put(claim.intent.id, claim.claimed.attempt());
			}
			if (held.isEmpty()) {
				return;
			}
			// only those still in flight as that attempt under this owner, with a live
			// lease: an expired lease is never revived, an intent not held never extended
			Set<Long> expected = new HashSet<>();
			for (Intent intent : this.intents) {
				if (intent.status.equals("in_flight") && drainer.owner.equals(intent.owner)
						&& Objects.equals(held.get(intent.id), intent.attempts) && !intent.leaseExpired) {
					expected.add(intent.id);
				}
			}
			Map<Long, LeaseBeat> beats = leases.extendLeases(drainer.owner, LEASE, held);
			assertThat(beats.keySet()).isEqualTo(held.keySet());
			assertThat(beats.entrySet()
				.stream()
				.filter((beat) -> beat.getValue() == LeaseBeat.EXTENDED)
				.map(Map.Entry::getKey)
				.collect(Collectors.toSet())).isEqualTo(expected);
			// nothing holds a row locked here: what was not extended is lost
			assertThat(beats.values()).doesNotContain(LeaseBeat.SKIPPED);
		}

		// time

		void expireLease(int index) {
			List<Intent> inFlight = this.intents.stream().filter((i) -> i.status.equals("in_flight")).toList();
			if (inFlight.isEmpty()) {
				return;
			}
			Intent intent = inFlight.get(index % inFlight.size());
			jdbc.sql("UPDATE eec_effect_intent SET lease_expires_at = now() - interval '1 second' WHERE id = ?")
				.param(intent.id)
				.update();
			intent.leaseExpired = true;
		}

		void advance() {
			jdbc.sql("""
					UPDATE eec_effect_intent SET created_at = created_at - interval '65 minutes',
					    updated_at = updated_at - interval '65 minutes',
					    next_attempt_at = next_attempt_at - interval '65 minutes',
					    lease_expires_at = lease_expires_at - interval '65 minutes',
					    finished_at = finished_at - interval '65 minutes',
					    attempt_started_at = attempt_started_at - interval '65 minutes',
					    superseded_at = superseded_at - interval '65 minutes'""").update();
			for (Intent intent : this.intents) {
				switch (intent.status) {
					case "pending" -> intent.due = true;
					case "in_flight" -> intent.leaseExpired = true;
					default -> intent.finishedAge++;
				}
			}
		}

		void reconcile() {
			List<Settled> redriven = new ArrayList<>();
			ExpiredLeaseRedriver reconciler = new ExpiredLeaseRedriver(redrive, 1000, redriven::addAll, registry,
					new EffectReconciliation(rounds, registry, payloads,
							io.ductor.observation.internal.DuctorInstrumentation.NOOP,
							new EffectReconciliation.Settings(5, RECONCILE_BACKOFF, Duration.ofHours(1), 50)));
			Map<Long, String> expected = new HashMap<>();
			for (Intent intent : this.intents) {
				if (!intent.status.equals("in_flight") || !intent.leaseExpired) {
					continue;
				}
				String to;
				boolean uncounted = false;
				if (intent.mail && !intent.started) {
					to = intent.superseded ? "cancelled" : "pending";
					uncounted = true;
				}
				else if (intent.mail) {
					to = "needs_decision";
				}
				else if (intent.attempts >= intent.maxAttempts) {
					to = "failed";
				}
				else {
					to = intent.superseded ? "cancelled" : "pending";
				}
				if (breaks(intent, to)) {
					to = "failed";
					uncounted = false;
				}
				if (uncounted) {
					intent.attempts--;
				}
				expected.put(intent.id, to);
				settle(intent, to);
				intent.due = true;
			}
			while (reconciler.runOnce()) {
				// a full batch: run another round
			}
			assertThat(redriven.stream().collect(Collectors.toMap(Settled::id, (s) -> DbValues.of(s.status()))))
				.as("redriven")
				.isEqualTo(expected);
			this.reconciled = true;
		}

		void purge() {
			int expected = 0;
			for (Intent intent : List.copyOf(this.intents)) {
				if (List.of("completed", "cancelled").contains(intent.status) && intent.finishedAge >= 1) {
					if (intent.poison) {
						// kept for another retention period, with the reason
						intent.finishedAge = 0;
					}
					else {
						expected++;
						this.intents.remove(intent);
					}
				}
			}
			int purged = 0;
			for (int batch = purger.purge(1000); batch > 0; batch = purger.purge(1000)) {
				purged += batch;
			}
			assertThat(purged).as("purged").isEqualTo(expected);
		}

		// operators

		void retry(int index) {
			Intent intent = pick(index);
			if (intent == null) {
				return;
			}
			if (!PARKED.contains(intent.status) || takenAlarm(intent)) {
				assertThatThrownBy(() -> operations.retry(intent.id)).isInstanceOf(EffectIntentStateException.class);
				return;
			}
			operations.retry(intent.id);
			runAgain(intent, intent.attempts + MAX_ATTEMPTS);
			supersedeOthers(intent);
		}

		void resolve(int index, EffectResolution resolution) {
			Intent intent = pick(index);
			if (intent == null) {
				return;
			}
			// no intent of this model is recorded by a run's tick, so there is never a
			// run to compensate
			if (!intent.status.equals("needs_decision") || resolution == EffectResolution.COMPENSATE
					|| (resolution == EffectResolution.RETRY && takenAlarm(intent))) {
				assertThatThrownBy(() -> operations.resolve(intent.id, resolution))
					.isInstanceOf(EffectIntentStateException.class);
				return;
			}
			operations.resolve(intent.id, resolution);
			switch (resolution) {
				case RETRY -> {
					runAgain(intent, intent.attempts + 1);
					supersedeOthers(intent);
				}
				case MARK_DONE -> finish(intent, "completed");
				case MARK_FAILED -> finish(intent, "failed");
				case COMPENSATE -> throw new IllegalStateException("refused above");
			}
		}

		void cancel(int index) {
			Intent intent = pick(index);
			if (intent == null) {
				return;
			}
			if (!List.of("pending", "failed", "needs_decision").contains(intent.status)) {
				assertThatThrownBy(() -> operations.cancel(intent.id)).isInstanceOf(EffectIntentStateException.class);
				return;
			}
			operations.cancel(intent.id);
			finish(intent, "cancelled");
		}

		void retryAll(boolean mail, String status) {
			List<Intent> candidates = this.intents.stream()
				.filter((i) -> i.mail == mail && i.status.equals(status))
				.toList();
			Set<String> taken = new HashSet<>();
			for (Intent intent : this.intents) {
				if (intent.alarm != null && intent.status.equals("pending")) {
					taken.add(intent.alarm);
				}
			}
			int retried = operations.retryAll(mail ? "lc.mail" : "lc.hotel",
					DbValues.parse(EffectStatus.class, status));
			// which of several parked occurrences of one alarm takes its pending place is
			// the database's choice
			int expected = 0;
			List<Intent> left = new ArrayList<>();
			for (Intent intent : candidates) {
				String now = DbValues.of(reads.find(intent.id).orElseThrow().status());
				if (now.equals("pending")) {
					assertThat(intent.alarm == null || taken.add(intent.alarm))
						.as(intent + " retried beside a pending occurrence")
						.isTrue();
					runAgain(intent, intent.attempts + MAX_ATTEMPTS);
					expected++;
				}
				else {
					assertThat(now).isEqualTo(status);
					left.add(intent);
				}
			}
			candidates.stream().filter((i) -> i.status.equals("pending")).forEach(this::supersedeOthers);
			for (Intent intent : left) {
				assertThat(intent.alarm != null && taken.contains(intent.alarm)).as(intent + " left parked by retryAll")
					.isTrue();
			}
			assertThat(retried).isEqualTo(expected);
		}

		/**
		 * An occurrence run again by an operator supersedes the other live occurrences of
		 * its alarm.
		 */
		private void supersedeOthers(Intent retried) {
			for (Intent intent : this.intents) {
				if (intent != retried && retried.alarm != null && retried.alarm.equals(intent.alarm)
						&& List.of("in_flight", "failed", "needs_decision").contains(intent.status)) {
					intent.superseded = true;
				}
			}
		}

		private void runAgain(Intent intent, int maxAttempts) {
			intent.status = "pending";
			intent.maxAttempts = maxAttempts;
			intent.superseded = false;
			intent.due = true;
			intent.mayCall = true;
			intent.finishedAge = 0;
		}

		// model rules

		/**
		 * Whether another occurrence of the intent's alarm holds the alarm's pending
		 * place.
		 */
		private boolean takenAlarm(Intent intent) {
			return intent.alarm != null && this.intents.stream()
				.anyMatch((i) -> i != intent && intent.alarm.equals(i.alarm) && i.status.equals("pending"));
		}

		/**
		 * Whether moving an in-flight intent to {@code to} breaks a constraint (a
		 * poisoned intent, an alarm's place).
		 */
		private boolean breaks(Intent intent, String to) {
			return (intent.poison && List.of("pending", "completed", "needs_decision").contains(to))
					|| (to.equals("pending") && takenAlarm(intent));
		}

		private void settle(Intent intent, String to) {
			intent.owner = null;
			intent.leaseExpired = false;
			if (TERMINAL.contains(to)) {
				finish(intent, to);
			}
			else {
				intent.status = to;
			}
		}

		private void finish(Intent intent, String to) {
			intent.status = to;
			intent.finishedAge = 0;
		}

		private Intent pick(int index) {
			return this.intents.isEmpty() ? null : this.intents.get(index % this.intents.size());
		}

		private Intent byId(long id) {
			return this.intents.stream().filter((i) -> i.id == id).findFirst().orElseThrow();
		}

		long callsOf(Intent intent) {
			return LifecycleEffects.calls.stream().filter((c) -> c.intentId() == intent.id).count();
		}

		// the check after every step

		void check() {
			List<Map<String, Object>> rows = jdbc.sql("""
					SELECT id, idempotency_key, status, attempts, max_attempts, lease_owner, alarm_name,
					       lease_expires_at < now() AS expired, next_attempt_at <= now() AS due,
					       attempt_started_at IS NOT NULL AS started, superseded_at IS NOT NULL AS superseded,
					       finished_at IS NOT NULL AS finished
					FROM eec_effect_intent ORDER BY id""").query().listOfRows();
			String where = " after " + this.log;
			assertThat(rows).extracting((row) -> (Long) row.get("id"))
				.as("intents" + where)
				.containsExactlyElementsOf(this.intents.stream().map((i) -> i.id).sorted().toList());
			Map<String, Integer> pendingPerAlarm = new HashMap<>();
			for (Map<String, Object> row : rows) {
				Intent intent = byId((Long) row.get("id"));
				String status = (String) row.get("status");
				String what = intent + where;
				assertThat(status).as("status of " + what).isEqualTo(intent.status);
				assertThat(row.get("attempts")).as("attempts of " + what).isEqualTo(intent.attempts);
				assertThat(row.get("max_attempts")).as("max_attempts of " + what).isEqualTo(intent.maxAttempts);
				assertThat(row.get("superseded")).as("superseded mark of " + what).isEqualTo(intent.superseded);
				assertThat(row.get("finished")).as("finished_at of " + what).isEqualTo(TERMINAL.contains(status));
				assertThat(row.get("lease_owner")).as("lease owner of " + what).isEqualTo(intent.owner);
				if (intent.mail && (status.equals("in_flight") || status.equals("needs_decision"))) {
					assertThat(row.get("started")).as("start mark of " + what).isEqualTo(intent.started);
				}
				if (status.equals("needs_decision")) {
					assertThat(row.get("started")).as("a parked mail started: " + what).isEqualTo(true);
				}
				if (status.equals("pending")) {
					assertThat(row.get("due")).as("due " + what).isEqualTo(intent.due);
					if (intent.alarm != null) {
						pendingPerAlarm.merge(intent.alarm, 1, Integer::sum);
					}
				}
				if (status.equals("in_flight")) {
					assertThat(this.owners).as("lease owner of " + what + " is a drainer's").contains(intent.owner);
					assertThat(row.get("expired")).as("lease expiry of " + what).isEqualTo(intent.leaseExpired);
					if (this.reconciled) {
						assertThat(row.get("expired")).as("in flight beyond its lease after a redrive: " + what)
							.isEqualTo(false);
					}
					long holders = runningHolders(intent);
					assertThat(holders).as("drainers holding the running attempt of " + what).isLessThanOrEqualTo(1);
				}
			}
			assertThat(pendingPerAlarm.values()).as("pending occurrences per alarm" + where).allMatch((n) -> n == 1);
			// every call of the mailer since the last check came after a decision
			List<Call> calls = LifecycleEffects.calls;
			for (; this.seen < calls.size(); this.seen++) {
				Call call = calls.get(this.seen);
				Intent intent = this.intents.stream().filter((i) -> i.id == call.intentId()).findFirst().orElse(null);
				if (intent != null && intent.mail) {
					assertThat(intent.mayCall)
						.as("mail " + intent + " attempt " + call.attempt() + " ran again without a decision" + where)
						.isTrue();
					intent.mayCall = false;
				}
			}
			this.reconciled = false;
		}

		private long runningHolders(Intent intent) {
			long holders = 0;
			for (Drainer drainer : this.drainers) {
				holders += drainer.claims.stream()
					.filter((c) -> c.intent == intent && Objects.equals(drainer.owner, intent.owner)
							&& c.claimed.attempt() == intent.attempts)
					.count();
			}
			return holders;
		}

	}

}
