package io.ductor.effect;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;
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
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;
import org.awaitility.core.ConditionTimeoutException;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.DrainerModelEffects.Call;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static io.ductor.effect.DrainerModelEffects.KEEPER;
import static io.ductor.effect.DrainerModelEffects.MAIL;
import static io.ductor.effect.DrainerModelEffects.NARROW;
import static io.ductor.effect.DrainerModelEffects.PLAIN;
import static io.ductor.effect.DrainerModelEffects.WIDE;
import static java.util.Collections.nCopies;
import static org.awaitility.Awaitility.await;

/**
 * The real threaded drainer against a model, on real PostgreSQL: one Spring context with
 * Ductor's auto-configuration (drain sessions with their claim thread, workers,
 * completion batches and heartbeat; dispatch at commit; concurrency slots; the
 * reconciler), with a lease of 1.5 seconds, driven through random sequences of:
 * <ul>
 * <li>transactions ({@code REQUIRED}, with an inner {@code REQUIRED},
 * {@code REQUIRES_NEW} or {@code NESTED} transaction, each committing or rolling back)
 * recording intents of an idempotent receiver, a {@code NOT_IDEMPOTENT} one, an effect
 * limited to one call at a time and one limited to 20, some slow, some failing, some
 * delayed, some with an ordering key;</li>
 * <li>a backlog of the effect limited to 20 (more than one drainer holds), sometimes with
 * a delayed intent of an unlimited effect behind it;</li>
 * <li>alarm occurrences scheduled, cancelled, and rescheduled while one runs, in a
 * transaction held open past the lease (the row lock the heartbeat must skip);</li>
 * <li>a transaction that records a {@code NOT_IDEMPOTENT} intent and stays open past its
 * lease;</li>
 * <li>the lease of a running attempt expiring (a heartbeat that could not reach the
 * database for a whole lease);</li>
 * <li>the drainer stopped and started again (a new lease owner).</li>
 * </ul>
 * A long-running call keeps one worker busy throughout, as steady load does, so the
 * drainer always holds a claim. Every receiver call is logged (intent, attempt, thread,
 * start, end). After every step, and at quiescence:
 * <ul>
 * <li>no receiver call for an intent that never committed;</li>
 * <li>every committed intent ends completed, failed or parked with a reason within a
 * bounded number of leases (at quiescence, while the drainer keeps running);</li>
 * <li>no {@code NOT_IDEMPOTENT} receiver called twice for one intent;</li>
 * <li>never more than N attempts of an effect limited to N in flight under live leases:
 * in the table (sampled every 20 ms) and in the call log (calls whose lease was lost,
 * which the documentation allows to outlive it, aside);</li>
 * <li>no due intent of an unlimited effect waits behind a backlog of limited ones: from
 * two poll intervals after it is due until its first call, at most what the drainer
 * already held plus a few batches of limited calls start;</li>
 * <li>intents that share an ordering key are first called in commit order.</li>
 * </ul>
 * A {@code kill -9} is out of reach of a model in one JVM; the crash tests cover it.
 */
class DrainerStateMachineTest {

	static final Duration LEASE = Duration.ofMillis(1500);

	static final int CONCURRENCY = 3;

	static final int BATCH = 3;

	/** What one drainer holds at most: its running effects and two batches. */
	static final int CAPACITY = CONCURRENCY + 2 * BATCH;

	/** How long a transaction is held open: past the lease of what it recorded. */
	static final Duration HOLD = LEASE.plus(LEASE.dividedBy(2)).plusMillis(300);

	static final Duration RECONCILER_INTERVAL = Duration.ofSeconds(2);

	static final Duration POLL_INTERVAL = Duration.ofMillis(100);

	/**
	 * How long a due unlimited intent may wait beside a limited backlog before it counts
	 * as waiting behind it: two poll intervals.
	 */
	static final Duration GRACE = POLL_INTERVAL.multipliedBy(2);

	/**
	 * Claims of limited intents allowed beyond one per unlimited call, while one waits.
	 */
	static final int SPARE_CLAIMS = 5;

	static final Duration BACKOFF_MAX = Duration.ofMillis(400);

	/** How long the drainer has to finish everything once the steps end, beyond work. */
	static final int QUIESCENCE_LEASES = 6;

	static final List<String> ALARMS = List.of("a", "b");

	static final long T0 = System.nanoTime();

	static TestDatabase database;

	static ConfigurableApplicationContext context;

	static EffectOutbox outbox;

	static EffectDrainer drainer;

	static PlatformTransactionManager transactions;

	static JdbcClient jdbc;

	static World world;

	static final AtomicLong sequences = new AtomicLong();

	static final AtomicLong worlds = new AtomicLong();

	static final AtomicLong steps = new AtomicLong();

	static final AtomicLong calls = new AtomicLong();

	static final AtomicLong samples = new AtomicLong();

	static final AtomicLong probes = new AtomicLong();

	static final AtomicLong mostLimitedCallsBeforeAProbe = new AtomicLong();

	static final AtomicLong closestToStarving = new AtomicLong(Long.MIN_VALUE);

	static final Map<String, AtomicLong> actions = new ConcurrentSkipListMap<>();

	@BeforeContainer
	static void start() {
		database = TestDatabases.create();
		context = EffectInstances.start(database, DrainerModelEffects.Config.class,
				"spring.datasource.hikari.maximum-pool-size=20",
				"ductor.effects.drainer.lease=" + LEASE.toMillis() + "ms",
				"ductor.effects.drainer.concurrency=" + CONCURRENCY, "ductor.effects.drainer.batch-size=" + BATCH,
				"ductor.effects.drainer.poll-interval=" + POLL_INTERVAL.toMillis() + "ms",
				"ductor.shutdown-timeout=10s",
				"ductor.effects.reconciler.interval=" + RECONCILER_INTERVAL.toMillis() + "ms",
				"ductor.effects.alarm-scheduler.enabled=false", "ductor.retention.enabled=false",
				"ductor.effects.backoff.initial=100ms", "ductor.effects.backoff.max=" + BACKOFF_MAX.toMillis() + "ms",
				"logging.level.io.ductor=error");
		outbox = context.getBean(EffectOutbox.class);
		drainer = context.getBean(EffectDrainer.class);
		transactions = context.getBean(PlatformTransactionManager.class);
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
	}

	@AfterContainer
	static void stop() throws IOException {
		if (world != null) {
			world.close();
		}
		DrainerModelEffects.keeperRelease.countDown();
		Map<String, Long> byAction = new LinkedHashMap<>();
		actions.forEach((name, count) -> byAction.put(name, count.get()));
		String report = "Threaded drainer state machine\nsequences run (minimizing included): " + worlds.get()
				+ "\nsequences passed: " + sequences.get() + "\nsteps run, each followed by the invariants: "
				+ steps.get() + "\nsteps per sequence: up to " + maxSteps() + "\nreceiver calls: " + calls.get()
				+ "\ntable samples of attempts in flight under live leases: " + samples.get()
				+ "\nunlimited intents due behind claims, measured: " + probes.get()
				+ "\nmost limited calls started while one waited: " + mostLimitedCallsBeforeAProbe.get()
				+ "\nclosest to the bound (calls started minus calls allowed): "
				+ ((probes.get() > 0) ? closestToStarving.get() : "none measured") + "\nseconds: "
				+ (System.nanoTime() - T0) / 1_000_000_000 + "\nsteps by action: " + byAction + "\n";
		System.out.print(report);
		String path = System.getProperty("ductor.drainer-model.report");
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

	@AfterTry
	void endSequence() {
		if (world != null) {
			world.close();
		}
	}

	static int maxSteps() {
		return Integer.getInteger("ductor.drainer-model.steps", 12);
	}

	static long millis(long nanos) {
		return (nanos - T0) / 1_000_000;
	}

	/**
	 * jqwik's shrinking is off: a sequence takes seconds, so jqwik's bounded shrinking
	 * would give up after a few candidates and leave the one it was running going on in
	 * the background. A failing sequence is minimized here instead, on the test's thread,
	 * for at most {@code ductor.drainer-model.shrinking-seconds} (120 by default): steps
	 * are removed one at a time as long as the rest still breaks the same invariant.
	 */
	@Property(afterFailure = AfterFailureMode.SAMPLE_FIRST, shrinking = ShrinkingMode.OFF)
	@AddLifecycleHook(Tries.class)
	void theRealDrainerKeepsItsPromises(@ForAll("sequences") ActionChain<World> chain) {
		try {
			World end = chain.withInvariant("the drainer's promises", World::check).run();
			end.quiesce();
			sequences.incrementAndGet();
		}
		catch (AssertionError failure) {
			throw minimized(world.ran, failure);
		}
	}

	/** The sequence minimized: the failure, with the fewest steps that still cause it. */
	static AssertionError minimized(List<Step> sequence, AssertionError failure) {
		String invariant = invariant(failure);
		long deadline = System.nanoTime()
				+ TimeUnit.SECONDS.toNanos(Long.getLong("ductor.drainer-model.shrinking-seconds", 120));
		List<Step> smallest = new ArrayList<>(sequence);
		AssertionError smallestFailure = failure;
		boolean removed = true;
		while (removed && System.nanoTime() < deadline) {
			removed = false;
			for (int i = smallest.size() - 1; i >= 0 && System.nanoTime() < deadline; i--) {
				List<Step> candidate = new ArrayList<>(smallest);
				candidate.remove(i);
				AssertionError again = replayQuietly(candidate);
				if (again != null && invariant.equals(invariant(again))) {
					smallest = candidate;
					smallestFailure = again;
					removed = true;
				}
			}
		}
		AssertionError minimized = new AssertionError(invariant + " broken by " + smallest.size() + " step(s) "
				+ smallest + ((smallest.size() < sequence.size()) ? ", minimized from " + sequence.size() : "")
				+ (System.nanoTime() >= deadline ? " (minimizing stopped: time spent)" : "") + ":\n"
				+ message(smallestFailure), failure);
		return minimized;
	}

	/**
	 * @return the failure {@code sequence} causes again, or {@code null}
	 */
	static AssertionError replayQuietly(List<Step> sequence) {
		World state = new World();
		try {
			for (Step step : sequence) {
				if (!step.when().test(state)) {
					return null;
				}
				state.ran.add(step);
				state.steps.add(step.description());
				step.body().accept(state);
				state.check();
			}
			state.quiesce();
			return null;
		}
		catch (AssertionError failure) {
			return failure;
		}
		catch (RuntimeException ex) {
			return null;
		}
		finally {
			state.close();
		}
	}

	/** The invariant a failure names: its first word (PHANTOM, UNFINISHED, ...). */
	static String invariant(AssertionError failure) {
		String message = message(failure);
		int end = message.indexOf(':');
		return (end > 0) ? message.substring(0, end) : message;
	}

	/** The message of the model's own assertion, inside jqwik's. */
	static String message(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null && cause.getCause() instanceof AssertionError) {
			cause = cause.getCause();
		}
		return String.valueOf(cause.getMessage()).trim();
	}

	/**
	 * The number of sequences, from {@code ductor.drainer-model.tries}: a few in every
	 * build, many under {@code -Pchaos}.
	 */
	static class Tries implements AroundPropertyHook {

		@Override
		public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
			context.attributes().setTries(Integer.getInteger("ductor.drainer-model.tries", 3));
			return property.execute();
		}

	}

	@Provide
	Arbitrary<ActionChain<World>> sequences() {
		return ActionChain.<World>startWith(World::new)
			.withAction(8, action(transaction(), (w) -> true))
			.withAction(2, action(backlog(), (w) -> true))
			.withAction(2, action(alarm(), (w) -> true))
			.withAction(2, action(rescheduleHeld(), World::scheduledAlarms))
			.withAction(1, action(cancelAlarm(), World::scheduledAlarms))
			.withAction(2, action(heldMail(), (w) -> true))
			.withAction(1, action(expireLease(), (w) -> w.running))
			.withAction(1, action(Arbitraries.just(STOP), (w) -> w.running))
			.withAction(3, action(Arbitraries.just(START), (w) -> !w.running))
			.withMaxTransformations(maxSteps());
	}

	/**
	 * One step: its kind, what the failure report shows, what it does and when it can.
	 */
	record Step(String name, String description, Consumer<World> body, Predicate<World> when) {

		Step(String name, String description, Consumer<World> body) {
			this(name, description, body, (w) -> true);
		}

		@Override
		public String toString() {
			return this.description;
		}

	}

	static Action.Independent<World> action(Arbitrary<Step> step, Predicate<World> when) {
		return new Action.Independent<>() {

			@Override
			public boolean precondition(World state) {
				return when.test(state);
			}

			@Override
			public Arbitrary<Transformer<World>> transformer() {
				return step.map((chosen) -> Transformer.mutate(chosen.description(), (state) -> {
					steps.incrementAndGet();
					actions.computeIfAbsent(chosen.name(), (name) -> new AtomicLong()).incrementAndGet();
					state.ran.add(chosen);
					state.steps.add(chosen.description());
					chosen.body().accept(state);
				}));
			}

		};
	}

	// ---- what the steps are made of

	/** One intent to record. */
	record Spec(String effect, int millis, int failures, String ordering, int delayMillis) {

		boolean limited() {
			return DrainerModelEffects.limited(this.effect);
		}

		@Override
		public String toString() {
			return this.effect.substring("model.".length()) + " " + this.millis + "ms"
					+ ((this.failures > 0) ? " failing "
							+ ((this.failures >= DrainerModelEffects.MAX_ATTEMPTS) ? "always" : this.failures + "x")
							: "")
					+ (this.ordering.isEmpty() ? "" : " ordered " + this.ordering)
					+ ((this.delayMillis > 0) ? " delayed " + this.delayMillis + "ms" : "");
		}

	}

	enum Inner {

		NONE(-1), REQUIRED(TransactionDefinition.PROPAGATION_REQUIRED),
		REQUIRES_NEW(TransactionDefinition.PROPAGATION_REQUIRES_NEW), NESTED(TransactionDefinition.PROPAGATION_NESTED);

		final int propagation;

		Inner(int propagation) {
			this.propagation = propagation;
		}

	}

	/**
	 * A transaction: intents recorded before an inner transaction, in it, and after it;
	 * each transaction commits or rolls back.
	 */
	record Tx(List<Spec> before, Inner inner, List<Spec> innerSpecs, boolean innerCommits, List<Spec> after,
			boolean commits) {

		@Override
		public String toString() {
			String inside = (this.inner == Inner.NONE) ? "" : " | " + this.inner + " " + this.innerSpecs
					+ ((this.innerCommits) ? " commits" : " rolls back") + " |";
			return "transaction: " + this.before + inside + ((this.inner != Inner.NONE) ? " " + this.after : "")
					+ (this.commits ? " commits" : " rolls back");
		}

	}

	static Arbitrary<Spec> spec(boolean ordered) {
		Arbitrary<String> effect = Arbitraries.frequency(Tuple.of(4, PLAIN), Tuple.of(3, MAIL), Tuple.of(3, NARROW),
				Tuple.of(2, WIDE));
		Arbitrary<Integer> millis = Arbitraries.frequency(Tuple.of(4, 0), Tuple.of(3, 30), Tuple.of(2, 300),
				Tuple.of(1, 900));
		Arbitrary<Integer> failures = Arbitraries.frequency(Tuple.of(8, 0), Tuple.of(2, 1),
				Tuple.of(1, DrainerModelEffects.MAX_ATTEMPTS));
		Arbitrary<String> ordering = ordered
				? Arbitraries.frequency(Tuple.of(6, ""), Tuple.of(1, "g1"), Tuple.of(1, "g2")) : Arbitraries.just("");
		Arbitrary<Integer> delay = Arbitraries.frequency(Tuple.of(5, 0), Tuple.of(1, 300));
		return Combinators.combine(effect, millis, failures, ordering, delay).as(Spec::new);
	}

	static Arbitrary<Step> transaction() {
		// no ordering key inside an inner transaction: a REQUIRES_NEW writer of a key the
		// outer transaction holds would wait for it for ever, in any application
		return Combinators
			.combine(spec(true).list().ofMinSize(0).ofMaxSize(3),
					Arbitraries.frequency(Tuple.of(3, Inner.NONE), Tuple.of(1, Inner.REQUIRED),
							Tuple.of(3, Inner.REQUIRES_NEW), Tuple.of(2, Inner.NESTED)),
					spec(false).list().ofMinSize(1).ofMaxSize(3), Arbitraries.of(true, false),
					spec(true).list().ofMinSize(0).ofMaxSize(2),
					Arbitraries.frequency(Tuple.of(3, true), Tuple.of(1, false)))
			.as((before, inner, innerSpecs, innerCommits, after, commits) -> (inner == Inner.NONE)
					? new Tx(before.isEmpty() ? innerSpecs : before, inner, List.of(), true, List.of(), commits)
					: new Tx(before, inner, innerSpecs, innerCommits, after, commits))
			.map(DrainerStateMachineTest::transaction);
	}

	static Arbitrary<Step> backlog() {
		return Combinators
			.combine(Arbitraries.integers().between(40, 100), Arbitraries.of(5, 15), Arbitraries.of(true, false))
			.as(DrainerStateMachineTest::backlog);
	}

	static Arbitrary<Step> alarm() {
		return Combinators
			.combine(Arbitraries.of(ALARMS), Arbitraries.of(NARROW, PLAIN),
					Arbitraries.frequency(Tuple.of(2, 300), Tuple.of(2, 4000)), Arbitraries.of(0, 200))
			.as((alarm, effect, millis, delay) -> alarm(alarm, new Spec(effect, millis, 0, "", delay)));
	}

	static Arbitrary<Step> rescheduleHeld() {
		return Combinators.combine(Arbitraries.of(ALARMS), Arbitraries.frequency(Tuple.of(3, true), Tuple.of(1, false)))
			.as(DrainerStateMachineTest::rescheduleHeld);
	}

	static Arbitrary<Step> cancelAlarm() {
		return Arbitraries.of(ALARMS).map(DrainerStateMachineTest::cancelAlarm);
	}

	static Arbitrary<Step> heldMail() {
		return Combinators
			.combine(Arbitraries.of(true, false), Arbitraries.frequency(Tuple.of(4, true), Tuple.of(1, false)))
			.as(DrainerStateMachineTest::heldMail);
	}

	static Arbitrary<Step> expireLease() {
		return Arbitraries.integers().between(0, 3).map(DrainerStateMachineTest::expireLease);
	}

	static Step transaction(Tx tx) {
		return new Step("transaction" + ((tx.inner() != Inner.NONE) ? " with " + tx.inner() : ""), tx.toString(),
				(w) -> w.transaction(tx));
	}

	static Step backlog(int size, int millis, boolean probe) {
		return new Step("limited backlog",
				"limited backlog: " + size + " x wide " + millis + "ms"
						+ (probe ? ", then plain 0ms delayed 100ms" : "") + ", commits",
				(w) -> w.backlog(size, millis, probe));
	}

	static Step alarm(String alarm, Spec spec) {
		return new Step("schedule alarm", "schedule alarm " + alarm + ": " + spec, (w) -> w.scheduleAlarm(alarm, spec));
	}

	static Step rescheduleHeld(String alarm, boolean commits) {
		return new Step("reschedule a running occurrence, held",
				"reschedule alarm " + alarm + " while its occurrence runs, held open " + HOLD.toMillis() + "ms, "
						+ (commits ? "commits" : "rolls back"),
				(w) -> w.rescheduleHeld(alarm, commits), World::scheduledAlarms);
	}

	static Step cancelAlarm(String alarm) {
		return new Step("cancel alarm", "cancel alarm " + alarm, (w) -> w.cancelAlarm(alarm), World::scheduledAlarms);
	}

	static Step heldMail(boolean withPlain, boolean commits) {
		return new Step(
				"transaction held open past the lease", "transaction held open " + HOLD.toMillis() + "ms: [mail 0ms"
						+ (withPlain ? ", plain 0ms" : "") + "] " + (commits ? "commits" : "rolls back"),
				(w) -> w.heldMail(withPlain, commits));
	}

	static Step expireLease(int pick) {
		return new Step("lease expires",
				"the lease of running attempt #" + pick + " expires (limited ones first; waits up to 1 s for one)",
				(w) -> w.expireLease(pick), (w) -> w.running);
	}

	static final Step STOP = new Step("drainer stops", "drainer stops", World::stopDrainer, (w) -> w.running);

	static final Step START = new Step("drainer starts", "drainer starts", World::startDrainer, (w) -> !w.running);

	static Spec call(String effect, int millis) {
		return new Spec(effect, millis, 0, "", 0);
	}

	// ---- sequences the property found, kept: each fails when the rule it names is
	// removed

	/**
	 * Runs {@code sequence} as the property does: the invariants after every step, then
	 * quiescence.
	 */
	static void replay(Step... sequence) {
		World state = new World();
		for (Step step : sequence) {
			steps.incrementAndGet();
			actions.computeIfAbsent(step.name(), (name) -> new AtomicLong()).incrementAndGet();
			state.ran.add(step);
			state.steps.add(step.description());
			step.body().accept(state);
			state.check();
		}
		state.quiesce();
		sequences.incrementAndGet();
	}

	/**
	 * The hand-over at commit belongs to the physical transaction: an inner
	 * {@code REQUIRES_NEW} transaction rolls back inside one that had recorded an intent
	 * and commits. The inner intent never existed; its receiver is never called (else:
	 * PHANTOM).
	 */
	@Example
	void aRolledBackRequiresNewTransactionCallsNothingThoughItsOuterOneCommits() {
		replay(transaction(
				new Tx(List.of(call(PLAIN, 0)), Inner.REQUIRES_NEW, List.of(call(PLAIN, 0)), false, List.of(), true)));
	}

	/**
	 * The hand-over at commit belongs to the physical transaction, and a claim nobody
	 * runs is never kept alive: an inner {@code REQUIRES_NEW} transaction commits inside
	 * one that had recorded an intent and rolls back. The inner intent runs while the
	 * drainer stays busy (else: UNFINISHED, in flight under a live lease with no call).
	 */
	@Example
	void anIntentOfACommittedRequiresNewTransactionRunsThoughItsOuterOneRollsBack() {
		replay(transaction(
				new Tx(List.of(call(PLAIN, 0)), Inner.REQUIRES_NEW, List.of(call(PLAIN, 0)), true, List.of(), false)));
	}

	/**
	 * The heartbeat extends only the attempts its drain session runs, under a live lease:
	 * a mail recorded in a transaction held open past its lease has its start mark
	 * refused at the hand-over, and is still sent, once, within a few leases while the
	 * drainer stays busy (else: UNFINISHED, in flight, not started, lease alive).
	 */
	@Example
	void aMailWhoseTransactionOutlivedItsLeaseIsSentOnceWhileTheDrainerStaysBusy() {
		replay(heldMail(false, true));
	}

	/**
	 * A slot freed by an expired lease never comes back: an occurrence of an effect
	 * limited to one call runs while its alarm is rescheduled in a transaction held open
	 * past the lease (the heartbeat skips the locked row), with other calls of the effect
	 * waiting. The slot goes to the next call when the lease expires, and the old
	 * attempt's lease is not revived beside it (else: LIMIT EXCEEDED).
	 */
	@Example
	void aLimitHoldsWhileARunningOccurrenceIsRescheduledPastItsLease() {
		replay(alarm("a", call(NARROW, 4000)),
				transaction(new Tx(nCopies(3, call(NARROW, 300)), Inner.NONE, List.of(), true, List.of(), true)),
				transaction(new Tx(nCopies(3, call(NARROW, 300)), Inner.NONE, List.of(), true, List.of(), true)),
				rescheduleHeld("a", true));
	}

	/**
	 * A slot freed by an expired lease never comes back: the lease of a running call of
	 * an effect limited to one call expires (its heartbeat could not reach the database
	 * for a whole lease) while other calls wait; the expired lease is not revived beside
	 * the slot's new holder (else: LIMIT EXCEEDED).
	 */
	@Example
	void anExpiredLeaseNeverComesBackBesideTheSlotsNewHolder() {
		replay(transaction(new Tx(nCopies(3, call(NARROW, 1500)), Inner.NONE, List.of(), true, List.of(), true)),
				expireLease(0));
	}

	/**
	 * The claim is fair: an unlimited intent recorded while the drainer was stopped,
	 * beside a backlog of an effect limited to more than one drainer holds, is called
	 * within a few claims after the start, not after the backlog (else: STARVED).
	 */
	@Example
	void anUnlimitedIntentDoesNotWaitForALimitedBacklogAfterARestart() {
		replay(STOP, transaction(new Tx(List.of(call(PLAIN, 0)), Inner.NONE, List.of(), true, List.of(), true)),
				backlog(100, 5, false), START);
	}

	// ---- the model

	/** What the model knows of one intent. */
	static final class Intent {

		final String key;

		final Spec spec;

		final String alarm;

		final int step;

		boolean committed;

		/**
		 * Whether it was recorded pending, for a claim: an unlimited one is then probed
		 * for starvation from the moment it is due.
		 */
		boolean probe;

		long dueAt;

		Intent(String key, Spec spec, String alarm, int step) {
			this.key = key;
			this.spec = spec;
			this.alarm = alarm;
			this.step = step;
		}

		boolean keeper() {
			return KEEPER.equals(this.spec.effect());
		}

	}

	/** One run of the drainer, from a start to the stop that follows it. */
	static final class Run {

		final long start;

		long stop = -1;

		Run(long start) {
			this.start = start;
		}

		boolean covers(long nanos) {
			return this.start <= nanos && (this.stop < 0 || this.stop > nanos);
		}

	}

	/**
	 * One sequence: the intents it recorded and whether they committed, the drainer's
	 * runs, and a sampler of the table.
	 */
	static final class World {

		final long number = worlds.incrementAndGet();

		final List<String> steps = new ArrayList<>();

		/** The steps run, to minimize a failing sequence. */
		final List<Step> ran = new ArrayList<>();

		final Map<String, Intent> intents = new LinkedHashMap<>();

		final List<Run> runs = new ArrayList<>();

		final Sampler sampler = new Sampler();

		boolean running;

		/** Ends this sequence's long-running call. */
		CountDownLatch keeper = new CountDownLatch(0);

		final Map<String, Intent> alarms = new HashMap<>();

		int keys;

		World() {
			if (world != null) {
				world.close();
			}
			world = this;
			// a fresh start: the last sequence's calls have all returned, nothing is left
			drainer.stop();
			Queue<Call> previous = DrainerModelEffects.calls;
			within(Duration.ofSeconds(30), () -> previous.stream().allMatch(Call::ended));
			jdbc.sql("DELETE FROM eec_effect_intent").update();
			DrainerModelEffects.newLog();
			startDrainer();
			this.sampler.start();
		}

		void close() {
			this.sampler.stop();
			this.keeper.countDown();
		}

		boolean scheduledAlarms() {
			return !this.alarms.isEmpty();
		}

		String alarmName(String alarm) {
			return "w" + this.number + "-" + alarm;
		}

		// ---- steps

		void transaction(Tx tx) {
			List<Intent> outer = new ArrayList<>();
			List<Intent> inner = new ArrayList<>();
			boolean unexpectedRollback = false;
			try {
				template(TransactionDefinition.PROPAGATION_REQUIRED).executeWithoutResult((status) -> {
					tx.before().forEach((spec) -> outer.add(record(spec)));
					if (tx.inner() != Inner.NONE) {
						try {
							template(tx.inner().propagation).executeWithoutResult((innerStatus) -> {
								tx.innerSpecs().forEach((spec) -> inner.add(record(spec)));
								if (!tx.innerCommits()) {
									throw new RolledBack();
								}
							});
						}
						catch (RolledBack ex) {
							// the inner transaction rolled back
						}
					}
					tx.after().forEach((spec) -> outer.add(record(spec)));
					if (!tx.commits()) {
						status.setRollbackOnly();
					}
				});
			}
			catch (UnexpectedRollbackException ex) {
				unexpectedRollback = true;
			}
			long committedAt = System.nanoTime();
			boolean innerRolledBackAll = tx.inner() == Inner.REQUIRED && !tx.innerCommits();
			if (unexpectedRollback != (innerRolledBackAll && tx.commits())) {
				throw new AssertionError("the outer transaction's commit "
						+ (unexpectedRollback ? "failed" : "succeeded") + " after " + tx);
			}
			boolean outerCommitted = tx.commits() && !innerRolledBackAll;
			boolean innerCommitted = switch (tx.inner()) {
				case NONE, REQUIRED -> outerCommitted;
				case REQUIRES_NEW -> tx.innerCommits();
				case NESTED -> tx.innerCommits() && outerCommitted;
			};
			// a savepoint rolled back hands the intents leased at commit back: not probed
			boolean probes = !(tx.inner() == Inner.NESTED && !tx.innerCommits());
			outer.forEach((intent) -> settle(intent, outerCommitted, committedAt, probes));
			inner.forEach((intent) -> settle(intent, innerCommitted, committedAt, false));
			checkRecorded(outer, inner);
		}

		void backlog(int size, int millis, boolean probe) {
			List<Intent> recorded = new ArrayList<>();
			template(TransactionDefinition.PROPAGATION_REQUIRED).executeWithoutResult((status) -> {
				for (int i = 0; i < size; i++) {
					recorded.add(record(new Spec(WIDE, millis, 0, "", 0)));
				}
				if (probe) {
					recorded.add(record(new Spec(PLAIN, 0, 0, "", 100)));
				}
			});
			long committedAt = System.nanoTime();
			recorded.forEach((intent) -> settle(intent, true, committedAt, true));
			checkRecorded(recorded, List.of());
		}

		void scheduleAlarm(String alarm, Spec spec) {
			Intent occurrence = template(TransactionDefinition.PROPAGATION_REQUIRED)
				.execute((status) -> occurrence(alarm, spec));
			settle(occurrence, true, System.nanoTime(), false);
			this.alarms.put(alarm, occurrence);
			checkRecorded(List.of(occurrence), List.of());
		}

		void rescheduleHeld(String alarm, boolean commits) {
			Intent current = this.alarms.get(alarm);
			if (current != null) {
				// the occurrence runs once it is claimed (its effect may wait for a slot)
				within(Duration.ofSeconds(3),
						() -> DrainerModelEffects.log()
							.stream()
							.anyMatch((call) -> call.key.equals(current.key) && !call.ended()));
			}
			Intent next = template(TransactionDefinition.PROPAGATION_REQUIRED).execute((status) -> {
				Intent occurrence = occurrence(alarm, new Spec(NARROW, 30, 0, "", 0));
				hold();
				if (!commits) {
					status.setRollbackOnly();
				}
				return occurrence;
			});
			settle(next, commits, System.nanoTime(), false);
			if (commits) {
				this.alarms.put(alarm, next);
			}
			checkRecorded(List.of(next), List.of());
		}

		void cancelAlarm(String alarm) {
			template(TransactionDefinition.PROPAGATION_REQUIRED)
				.executeWithoutResult((status) -> outbox.cancelAlarm(alarmName(alarm)));
		}

		void heldMail(boolean withPlain, boolean commits) {
			List<Intent> recorded = new ArrayList<>();
			template(TransactionDefinition.PROPAGATION_REQUIRED).executeWithoutResult((status) -> {
				recorded.add(record(new Spec(MAIL, 0, 0, "", 0)));
				if (withPlain) {
					recorded.add(record(new Spec(PLAIN, 0, 0, "", 0)));
				}
				hold();
				if (!commits) {
					status.setRollbackOnly();
				}
			});
			long committedAt = System.nanoTime();
			recorded.forEach((intent) -> settle(intent, commits, committedAt, false));
			checkRecorded(recorded, List.of());
		}

		void expireLease(int pick) {
			Predicate<Call> runs = (call) -> !call.ended() && !KEEPER.equals(call.effect);
			within(Duration.ofSeconds(1), () -> DrainerModelEffects.log().stream().anyMatch(runs));
			List<Call> running = DrainerModelEffects.log()
				.stream()
				.filter(runs)
				.sorted(Comparator.comparing((Call call) -> !DrainerModelEffects.limited(call.effect))
					.thenComparingLong((call) -> call.start))
				.toList();
			if (running.isEmpty()) {
				return;
			}
			Call call = running.get(Math.min(pick, running.size() - 1));
			jdbc.sql("""
					UPDATE eec_effect_intent SET lease_expires_at = ductor_now() - interval '1 millisecond'
					WHERE id = ? AND status = 'in_flight' AND attempts = ?""")
				.params(call.intentId, call.attempt)
				.update();
		}

		void stopDrainer() {
			this.keeper.countDown();
			drainer.stop();
			this.runs.get(this.runs.size() - 1).stop = System.nanoTime();
			this.running = false;
		}

		void startDrainer() {
			this.runs.add(new Run(System.nanoTime()));
			drainer.start();
			this.running = true;
			this.keeper = new CountDownLatch(1);
			DrainerModelEffects.keeperRelease = this.keeper;
			Intent keeper = template(TransactionDefinition.PROPAGATION_REQUIRED).execute((status) -> {
				String key = "w" + this.number + "-keeper-" + (++this.keys);
				outbox.schedule(EffectRequest.of(KEEPER, key).withKey(key));
				return new Intent(key, new Spec(KEEPER, 0, 0, "", 0), null, this.steps.size());
			});
			settle(keeper, true, System.nanoTime(), false);
		}

		// ---- recording

		static TransactionTemplate template(int propagation) {
			TransactionTemplate template = new TransactionTemplate(transactions);
			template.setPropagationBehavior(propagation);
			return template;
		}

		/** Records one intent in the current transaction. */
		Intent record(Spec spec) {
			String key = "w" + this.number + "-" + (++this.keys) + "-" + spec.effect().substring("model.".length());
			EffectRequest request = EffectRequest.of(spec.effect(), key, spec.millis(), spec.failures()).withKey(key);
			if (!spec.ordering().isEmpty()) {
				request = request.withOrderingKey("w" + this.number + "-" + spec.ordering());
			}
			if (spec.delayMillis() > 0) {
				request = request.withDelay(Duration.ofMillis(spec.delayMillis()));
			}
			outbox.schedule(request);
			Intent intent = new Intent(key, spec, null, this.steps.size());
			// recorded pending (not leased to this instance at commit): its first attempt
			// waits for a claim
			intent.probe = !spec.limited() && spec.ordering().isEmpty()
					&& "pending".equals(jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
						.param(key)
						.query(String.class)
						.single());
			this.intents.put(key, intent);
			return intent;
		}

		Intent occurrence(String alarm, Spec spec) {
			String key = outbox.scheduleAlarm(alarmName(alarm), Duration.ofMillis(spec.delayMillis()),
					EffectRequest.of(spec.effect(), alarmName(alarm), spec.millis(), spec.failures()));
			Intent intent = new Intent(key, spec, alarm, this.steps.size());
			this.intents.put(key, intent);
			return intent;
		}

		void settle(Intent intent, boolean committed, long committedAt, boolean probe) {
			intent.committed = committed;
			intent.probe = intent.probe && probe && committed;
			intent.dueAt = committedAt + TimeUnit.MILLISECONDS.toNanos(intent.spec.delayMillis());
			if (intent.probe) {
				probes.incrementAndGet();
			}
			this.intents.putIfAbsent(intent.key, intent);
		}

		/** Registration: an intent exists exactly when its transaction committed. */
		void checkRecorded(List<Intent> outer, List<Intent> inner) {
			List<Intent> all = new ArrayList<>(outer);
			all.addAll(inner);
			List<String> keys = all.stream().map((intent) -> intent.key).toList();
			List<String> stored = jdbc
				.sql("SELECT idempotency_key FROM eec_effect_intent WHERE idempotency_key = ANY (?)")
				.param(keys.toArray(String[]::new))
				.query(String.class)
				.list();
			for (Intent intent : all) {
				if (intent.committed != stored.contains(intent.key)) {
					throw new AssertionError("REGISTRATION: intent " + intent.key + " of a transaction that "
							+ (intent.committed ? "committed is missing" : "rolled back exists"));
				}
			}
		}

		void hold() {
			// the transaction stays open past the lease: what the scenario is about
			LockSupport.parkNanos(HOLD.toNanos());
		}

		// ---- the invariants

		void check() {
			List<String> broken = new ArrayList<>();
			List<Call> log = DrainerModelEffects.log();
			long now = System.nanoTime();
			phantoms(log, broken);
			mailsOnce(log, broken);
			limitsInCalls(log, broken);
			limitsInTable(broken);
			fairness(log, now, broken);
			ordering(log, broken);
			if (!broken.isEmpty()) {
				throw new AssertionError(String.join("\n", broken) + "\nafter steps " + this.steps);
			}
		}

		/** No receiver call for an intent that never committed. */
		void phantoms(List<Call> log, List<String> broken) {
			for (Call call : log) {
				Intent intent = this.intents.get(call.key);
				if (intent == null || !intent.committed) {
					broken.add("PHANTOM: " + call + ", of an intent that never committed"
							+ ((intent != null) ? " (recorded in step " + intent.step + ")" : ""));
				}
			}
		}

		/** A receiver that cannot deduplicate is called at most once per intent. */
		void mailsOnce(List<Call> log, List<String> broken) {
			log.stream()
				.filter((call) -> MAIL.equals(call.effect))
				.collect(Collectors.groupingBy((call) -> call.key))
				.forEach((key, mails) -> {
					if (mails.size() > 1) {
						broken.add("NOT_IDEMPOTENT CALLED TWICE: " + mails);
					}
				});
		}

		/**
		 * At most N calls of an effect limited to N at once, calls whose lease was lost
		 * (documented to outlive it) aside.
		 */
		void limitsInCalls(List<Call> log, List<String> broken) {
			for (String effect : List.of(NARROW, WIDE)) {
				List<Call> held = log.stream()
					.filter((call) -> effect.equals(call.effect) && call.ended()
							&& Boolean.TRUE.equals(call.leaseHeldAtEnd))
					.toList();
				for (Call call : held) {
					List<Call> together = held.stream()
						.filter((other) -> other.start <= call.start && other.end > call.start)
						.toList();
					if (together.size() > DrainerModelEffects.limit(effect)) {
						broken.add("LIMIT EXCEEDED (calls): " + together.size() + " calls of " + effect + " (limit "
								+ DrainerModelEffects.limit(effect)
								+ ") at once, each under a lease it held to the end: " + together);
						return;
					}
				}
			}
		}

		/** At most N attempts of an effect limited to N in flight under live leases. */
		void limitsInTable(List<String> broken) {
			String now = sampleTable();
			if (now != null) {
				this.sampler.violations.add(now);
			}
			if (!this.sampler.violations.isEmpty()) {
				broken.add("LIMIT EXCEEDED (table): " + this.sampler.violations);
			}
		}

		/**
		 * An unlimited intent recorded pending waits, from when it is due to its first
		 * call, for at most what the drainer held and a few batches of limited calls,
		 * once {@link #GRACE} has passed: beside a limited backlog a drainer may look for
		 * the other effects' due intents only once per poll interval.
		 */
		void fairness(List<Call> log, long now, List<String> broken) {
			Map<String, Call> first = new HashMap<>();
			for (Call call : log) {
				first.merge(call.key, call, (a, b) -> (a.start <= b.start) ? a : b);
			}
			for (Intent intent : this.intents.values()) {
				if (!intent.probe) {
					continue;
				}
				Call call = first.get(intent.key);
				long until = (call != null) ? call.start : now;
				Run run = this.runs.stream().filter((r) -> r.covers(until)).findFirst().orElse(null);
				if (run == null || (call == null && !this.running)) {
					continue;
				}
				long from = Math.max(intent.dueAt, run.start) + GRACE.toNanos();
				if (until <= from) {
					continue;
				}
				long limited = log.stream()
					.filter((c) -> DrainerModelEffects.limited(c.effect) && c.start >= from && c.start < until)
					.count();
				long unlimited = log.stream()
					.filter((c) -> !DrainerModelEffects.limited(c.effect) && c.start >= from && c.start < until
							&& !c.key.equals(intent.key))
					.count();
				long allowed = CAPACITY + BATCH * (unlimited + SPARE_CLAIMS);
				closestToStarving.accumulateAndGet(limited - allowed, Math::max);
				mostLimitedCallsBeforeAProbe.accumulateAndGet(limited, Math::max);
				if (limited > allowed) {
					broken.add("STARVED: " + intent.key + " (" + intent.spec + ", due " + millis(intent.dueAt) + " ms) "
							+ ((call != null) ? "was first called at " + millis(call.start) + " ms"
									: "is still not called")
							+ " after " + limited + " calls of limited effects started from " + millis(from)
							+ " ms, two poll intervals after it was due (at most " + allowed
							+ ": what the drainer held, " + CAPACITY + ", and " + BATCH + " per claim beside the "
							+ unlimited + " unlimited calls meanwhile, plus " + SPARE_CLAIMS + " claims)");
				}
			}
		}

		/** Intents sharing an ordering key are first called in commit (id) order. */
		void ordering(List<Call> log, List<String> broken) {
			Map<String, Call> first = new HashMap<>();
			for (Call call : log) {
				first.merge(call.key, call, (a, b) -> (a.start <= b.start) ? a : b);
			}
			List<Map<String, Object>> ordered = jdbc.sql("""
					SELECT ordering_key, idempotency_key FROM eec_effect_intent
					WHERE ordering_key IS NOT NULL ORDER BY ordering_key, id""").query().listOfRows();
			Map<Object, List<String>> byKey = new LinkedHashMap<>();
			ordered.forEach((row) -> byKey.computeIfAbsent(row.get("ordering_key"), (k) -> new ArrayList<>())
				.add((String) row.get("idempotency_key")));
			byKey.forEach((orderingKey, keys) -> {
				long previous = Long.MIN_VALUE;
				for (String key : keys) {
					Call call = first.get(key);
					if (call == null) {
						previous = Long.MAX_VALUE;
						continue;
					}
					if (call.start < previous) {
						broken
							.add("ORDER: " + key + " was called before an intent recorded before it under ordering key "
									+ orderingKey + " " + keys);
					}
					previous = call.start;
				}
			});
		}

		// ---- quiescence

		/**
		 * No more steps; the drainer runs, the long-running call still holds a worker:
		 * every committed intent ends completed, failed or parked with a reason within
		 * {@value #QUIESCENCE_LEASES} leases and the work it has left (an intent behind a
		 * failed or parked head of its ordering key waits for an operator, by design).
		 */
		void quiesce() {
			this.steps.add("(quiescence)");
			if (!this.running) {
				startDrainer();
			}
			Duration bound = LEASE.multipliedBy(QUIESCENCE_LEASES).plus(workLeft());
			try {
				await().atMost(bound).pollInterval(Duration.ofMillis(100)).until(() -> unfinished().isEmpty());
			}
			catch (ConditionTimeoutException ex) {
				throw new AssertionError("UNFINISHED: committed intents not completed, failed or parked "
						+ bound.toMillis() + " ms (" + QUIESCENCE_LEASES + " leases and the work left) after the steps"
						+ " ended, with the drainer (" + drainer.owner() + ") running: " + unfinished()
						+ "\ntheir calls: " + callsOf(unfinished()) + "\nafter steps " + this.steps);
			}
			check();
			// the long-running call ends; every call returns
			this.keeper.countDown();
			if (!within(Duration.ofSeconds(20),
					() -> unfinished(true).isEmpty() && DrainerModelEffects.log().stream().allMatch(Call::ended))) {
				throw new AssertionError(
						"UNFINISHED: the long-running call's intent or a receiver call did not end: " + unfinished(true)
								+ ", " + DrainerModelEffects.log().stream().filter((call) -> !call.ended()).toList());
			}
			check();
			finishedWithReasons();
			List<Call> log = DrainerModelEffects.log();
			calls.addAndGet(log.size());
			for (Intent intent : this.intents.values()) {
				if (intent.probe && log.stream().noneMatch((call) -> call.key.equals(intent.key))) {
					throw new AssertionError("UNFINISHED: " + intent.key + " was never called");
				}
			}
		}

		Duration workLeft() {
			long narrow = 0;
			long others = 0;
			for (Intent intent : this.intents.values()) {
				if (!intent.committed || intent.keeper()) {
					continue;
				}
				int attempts = Math.min(intent.spec.failures() + 1, DrainerModelEffects.MAX_ATTEMPTS);
				long work = (long) intent.spec.millis() * attempts + BACKOFF_MAX.toMillis() * (attempts - 1);
				if (NARROW.equals(intent.spec.effect())) {
					narrow += work;
				}
				else {
					others += work;
				}
			}
			return Duration.ofMillis(narrow + others / (CONCURRENCY - 1));
		}

		List<Map<String, Object>> unfinished() {
			return unfinished(false);
		}

		List<Map<String, Object>> unfinished(boolean keepers) {
			String[] keys = this.intents.values()
				.stream()
				.filter((intent) -> intent.committed && intent.keeper() == keepers)
				.map((intent) -> intent.key)
				.toArray(String[]::new);
			return jdbc.sql("""
					SELECT idempotency_key, status, attempts, lease_owner,
					       lease_expires_at > ductor_now() AS lease_alive, attempt_started_at IS NOT NULL AS started,
					       last_error
					FROM eec_effect_intent i
					WHERE idempotency_key = ANY (?) AND status IN ('pending', 'in_flight', 'reconciling')
					  AND NOT (status = 'pending' AND EXISTS (
					      SELECT 1 FROM eec_effect_intent o WHERE o.ordering_key = i.ordering_key AND o.id < i.id
					        AND o.status IN ('failed', 'needs_decision')))
					ORDER BY id""").param(keys).query().listOfRows();
		}

		List<Call> callsOf(List<Map<String, Object>> rows) {
			List<Object> keys = rows.stream().map((row) -> row.get("idempotency_key")).toList();
			return DrainerModelEffects.log().stream().filter((call) -> keys.contains(call.key)).toList();
		}

		/**
		 * Failed and parked intents carry a reason; only alarm occurrences are cancelled
		 * (superseded); a completed intent's receiver returned normally.
		 */
		void finishedWithReasons() {
			List<Call> log = DrainerModelEffects.log();
			List<String> broken = new ArrayList<>();
			for (Map<String, Object> row : jdbc
				.sql("SELECT idempotency_key, status, last_error FROM eec_effect_intent ORDER BY id")
				.query()
				.listOfRows()) {
				String key = (String) row.get("idempotency_key");
				String status = (String) row.get("status");
				Intent intent = this.intents.get(key);
				if (intent == null || !intent.committed) {
					broken.add("REGISTRATION: " + key + " exists but never committed");
					continue;
				}
				if (List.of("failed", "needs_decision", "cancelled").contains(status)
						&& row.get("last_error") == null) {
					broken.add("NO REASON: " + key + " is " + status + " without a reason");
				}
				if ("cancelled".equals(status) && intent.alarm == null) {
					broken.add("CANCELLED: " + key + " is cancelled, but nothing cancelled it");
				}
				if ("completed".equals(status)
						&& log.stream().noneMatch((call) -> call.key.equals(key) && !call.failed)) {
					broken.add("COMPLETED UNCALLED: " + key + " is completed, but its receiver never returned");
				}
			}
			if (!broken.isEmpty()) {
				throw new AssertionError(String.join("\n", broken) + "\nafter steps " + this.steps);
			}
		}

	}

	/** A rolled-back inner transaction. */
	static final class RolledBack extends RuntimeException {

		RolledBack() {
			super("rolled back", null, false, false);
		}

	}

	/**
	 * Samples {@code eec_effect_intent} every 20 ms: attempts of each limited effect in
	 * flight under a live lease, in one snapshot.
	 */
	static final class Sampler {

		final Queue<String> violations = new ConcurrentLinkedQueue<>();

		private volatile boolean stopped;

		private Thread thread;

		void start() {
			this.thread = new Thread(() -> {
				while (!this.stopped) {
					try {
						String violation = sampleTable();
						if (violation != null && this.violations.size() < 5) {
							this.violations.add(violation);
						}
					}
					catch (RuntimeException ex) {
						// the context is closing
					}
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
				}
			}, "drainer-model-sampler");
			this.thread.setDaemon(true);
			this.thread.start();
		}

		void stop() {
			this.stopped = true;
			if (this.thread != null) {
				try {
					this.thread.join(5000);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}

	}

	/**
	 * @return a description of a limit exceeded in the table now, or {@code null}
	 */
	static String sampleTable() {
		samples.incrementAndGet();
		List<Map<String, Object>> rows = jdbc.sql("""
				SELECT effect_name, count(*) AS live,
				       string_agg('intent ' || id || ' attempt ' || attempts || ' of ' || lease_owner, ', ') AS holders
				FROM eec_effect_intent
				WHERE status = 'in_flight' AND lease_expires_at > ductor_now() AND effect_name IN (?, ?)
				GROUP BY effect_name""").params(NARROW, WIDE).query().listOfRows();
		for (Map<String, Object> row : rows) {
			String effect = (String) row.get("effect_name");
			long live = ((Number) row.get("live")).longValue();
			if (live > DrainerModelEffects.limit(effect)) {
				return live + " attempts of " + effect + " (limit " + DrainerModelEffects.limit(effect)
						+ ") in flight under live leases at " + millis(System.nanoTime()) + " ms: "
						+ row.get("holders");
			}
		}
		return null;
	}

	/** Waits for a condition, at most {@code atMost}; @return whether it held. */
	static boolean within(Duration atMost, BooleanSupplier condition) {
		try {
			await().atMost(atMost).pollInterval(Duration.ofMillis(20)).until(condition::getAsBoolean);
			return true;
		}
		catch (ConditionTimeoutException ex) {
			return false;
		}
	}

}
