package io.ductor.testing;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.internal.CallingThreadDrainer;
import io.ductor.effect.internal.EffectTestSupport;
import io.ductor.run.Run;
import io.ductor.run.TickService;
import io.ductor.worker.internal.WorkerTask;

/**
 * Drives Ductor in a test, on the test's thread: runs due effects, moves Ductor's clock,
 * makes attempts fail, and asserts effects, runs and idempotency keys. Given by
 * {@link AutoConfigureDuctorTester}, which keeps Ductor's background workers off.
 * <p>
 * Intents are recorded as in production: one due at commit (no delay, no ordering key,
 * not an alarm, not a run's) is recorded already claimed by the tester, attempt 1, and
 * its transaction hands it over at commit, by the same transaction synchronization as the
 * drainer's ({@code REQUIRES_NEW}, savepoints and rollbacks included). {@link #drain()}
 * runs what was handed over first, in commit order, as the drainer would at once; then
 * the drainer's claim path (claim under a lease, dispatch, completion fenced by lease
 * owner and attempt) and the reconciler's (redrive of expired leases, reconciliation
 * rounds), one intent at a time, in the order the drainer would claim them: by due time,
 * then by the order they were recorded. Ductor's clock stands still during a test, so the
 * same test drains the same intents in the same order with the same outcomes on every
 * run; a retry whose backoff has not elapsed, a delayed effect or an alarm runs once
 * {@link #advance(Duration)} has moved the clock past its due time.
 */
public final class DuctorTester implements AutoCloseable {

	/**
	 * The most attempts one {@link #drain()} runs before it gives up on effects that
	 * never stop recording effects.
	 */
	static final int MAX_DRAIN_STEPS = 10_000;

	private final EffectTestSupport effects;

	private final CallingThreadDrainer drainer;

	private final WorkerTask alarmScheduler;

	private final JdbcTemplate jdbc;

	private final JsonMapper mapper;

	private final TickService ticks;

	private final DuctorClock clock;

	private final InjectedFaults faults = new InjectedFaults();

	private volatile long recordedAfter;

	/**
	 * Created by the tester's auto-configuration; tests inject the bean.
	 * @param effects the feature's facilities for tests
	 * @param alarmScheduler the recurring-alarm scheduler's round
	 * @param dataSource Ductor's data source
	 * @param mapper the JSON mapper
	 * @param ticks the tick service, if any
	 */
	DuctorTester(EffectTestSupport effects, WorkerTask alarmScheduler, DataSource dataSource, JsonMapper mapper,
			@Nullable TickService ticks) {
		this.effects = effects;
		this.drainer = effects.callingThreadDrainer();
		this.alarmScheduler = alarmScheduler;
		this.jdbc = new JdbcTemplate(dataSource);
		this.mapper = mapper;
		this.ticks = ticks;
		this.clock = new DuctorClock(dataSource);
		effects.injectFaults(this.faults);
		effects.dispatchAtCommitTo(this.drainer);
		reset();
	}

	/**
	 * Runs every intent handed over at commit, every due intent and every due
	 * reconciliation round, on this thread until nothing is due, including the effects
	 * they record, the retries that are due at once and the occurrences of recurring
	 * alarms that are due by Ductor's clock (recorded first, as the alarm scheduler
	 * would).
	 * @return the intents that ran, each as it is after its attempt, in the order they
	 * ran
	 * @throws IllegalStateException when effects are still due after 10,000 attempts
	 * (effects that record effects without end)
	 */
	public List<EffectIntent> drain() {
		requireNoTransaction("drain()");
		List<EffectIntent> ran = new ArrayList<>();
		while (true) {
			recordDueAlarmOccurrences();
			// what commits handed over runs first, as it would at once in production
			Optional<EffectIntent> next = this.drainer.runHandedOver(null);
			if (next.isEmpty()) {
				int reconciled = this.drainer.reconcile();
				next = this.drainer.runNext(null);
				if (next.isEmpty() && reconciled == 0) {
					return ran;
				}
			}
			if (next.isPresent()) {
				ran.add(next.get());
				if (ran.size() >= MAX_DRAIN_STEPS) {
					throw new IllegalStateException("drain() ran " + MAX_DRAIN_STEPS + " attempts and effects are "
							+ "still due: do effects record effects without end? The last one was " + next.get());
				}
			}
		}
	}

	private void recordDueAlarmOccurrences() {
		try {
			while (this.alarmScheduler.runOnce()) {
				// a full batch: more alarms may be due
			}
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Exception ex) {
			throw new IllegalStateException("recording the due occurrences of recurring alarms failed", ex);
		}
	}

	/**
	 * Runs the next intent of one effect handed over at commit or, when there is none,
	 * its next due intent, and only that (after recording the due occurrences of
	 * recurring alarms).
	 * @param effectName the effect's name
	 * @return the intent as it is after its attempt, or empty when none of that effect
	 * was due
	 */
	public Optional<EffectIntent> drainOne(String effectName) {
		requireNoTransaction("drainOne()");
		recordDueAlarmOccurrences();
		Optional<EffectIntent> handedOver = this.drainer.runHandedOver(effectName);
		return handedOver.isPresent() ? handedOver : this.drainer.runNext(effectName);
	}

	/**
	 * Moves Ductor's clock forward: delays, alarms, retry backoffs, leases,
	 * reconciliation rounds and idempotency TTLs see the new time on every connection the
	 * application takes from its pool from now on. The server's clock, the application's
	 * own SQL and other applications on the database are not affected.
	 * @param duration how far; not negative
	 */
	public void advance(Duration duration) {
		if (duration == null || duration.isNegative()) {
			throw new IllegalArgumentException("advance takes a duration of zero or more, not " + duration);
		}
		requireNoTransaction("advance()");
		this.clock.advance(duration);
	}

	/**
	 * @return Ductor's time now, as its statements read it
	 */
	public OffsetDateTime now() {
		return this.clock.now();
	}

	/**
	 * Makes the next attempt of an effect throw {@code failure} instead of calling the
	 * effect's bean; Ductor classifies it as it would the bean's own exception.
	 * @param effectName the effect's name
	 * @param failure what the attempt throws
	 */
	public void failNext(String effectName, Throwable failure) {
		failNext(effectName, 1, failure);
	}

	/**
	 * Makes the next {@code attempts} attempts of an effect throw {@code failure}.
	 * @param effectName the effect's name
	 * @param attempts how many attempts, one or more
	 * @param failure what each of them throws
	 */
	public void failNext(String effectName, int attempts, Throwable failure) {
		if (attempts < 1) {
			throw new IllegalArgumentException("attempts must be one or more, not " + attempts);
		}
		if (failure == null) {
			throw new IllegalArgumentException("failure must not be null");
		}
		this.faults.add(effectName, attempts, failure);
	}

	/**
	 * Makes the next attempt of an effect end with an unknown outcome (as after a
	 * timeout), without calling its bean: a receiver that cannot deduplicate then waits
	 * for a decision, unless its reconciler is asked; one that deduplicates is retried
	 * with the same key.
	 * @param effectName the effect's name
	 */
	public void outcomeUnknownNext(String effectName) {
		failNext(effectName,
				new InjectedFaultException("injected by DuctorTester: the outcome of this attempt is unknown"));
	}

	/**
	 * @return the intents recorded since the test began, in the order they were recorded
	 */
	public List<EffectIntent> recordedEffects() {
		return this.jdbc
			.queryForList("SELECT id FROM eec_effect_intent WHERE id > ? ORDER BY id", Long.class, this.recordedAfter)
			.stream()
			.map(this.effects::find)
			.flatMap(Optional::stream)
			.toList();
	}

	/**
	 * @return assertions on the intents recorded since the test began
	 */
	public RecordedEffectsAssert assertEffects() {
		return new RecordedEffectsAssert(recordedEffects(), this.mapper);
	}

	/**
	 * @param runId the run
	 * @return assertions on the run and its transitions
	 */
	public RunAssert assertRun(String runId) {
		if (this.ticks == null) {
			throw new IllegalStateException("There is no TickService in this application, so no runs");
		}
		Run<Object> run = this.ticks.find(runId, Object.class).orElse(null);
		return new RunAssert(runId, run, (run != null) ? this.ticks.transitions(runId) : List.of(), this.mapper);
	}

	/**
	 * @param key the idempotency key, in whatever scope and pool it was reserved (exactly
	 * one)
	 * @return assertions on the key's stored decision
	 */
	public IdempotencyKeyAssert assertIdempotencyKey(String key) {
		return assertIdempotencyKey(null, null, key);
	}

	/**
	 * @param tenantScope the key's tenant scope
	 * @param pool the key's pool
	 * @param key the idempotency key
	 * @return assertions on the key's stored decision
	 */
	public IdempotencyKeyAssert assertIdempotencyKey(String tenantScope, String pool, String key) {
		List<StoredKey> rows = this.jdbc.query("""
				SELECT tenant_scope, pool_id, idempotency_key, status, decision_id, response_status, expires_at,
				    expires_at <= ductor_now() AS expired
				FROM eec_routing_idempotency
				WHERE idempotency_key = ? AND (?::text IS NULL OR tenant_scope = ?) AND (?::text IS NULL OR pool_id = ?)
				ORDER BY tenant_scope, pool_id""",
				(rs, row) -> new StoredKey(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
						rs.getString(5), (Integer) rs.getObject(6), rs.getObject(7, OffsetDateTime.class),
						rs.getBoolean(8)),
				key, tenantScope, tenantScope, pool, pool);
		if (rows.size() > 1) {
			throw new AssertionError("Idempotency key '" + key + "' is stored in " + rows.size()
					+ " scopes and pools; name the scope and pool: " + rows);
		}
		return new IdempotencyKeyAssert(key, rows.isEmpty() ? null : rows.get(0));
	}

	/**
	 * Effects recorded in a transaction that has not committed (a {@code @Transactional}
	 * test's, which is rolled back) are invisible to the drain's own connections, and the
	 * connection that transaction holds keeps the clock it had: refuse rather than
	 * silently run nothing.
	 */
	private static void requireNoTransaction(String method) {
		if (TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new IllegalStateException(method + " was called inside a transaction (a @Transactional test?): the "
					+ "effects it recorded are not committed, so no drainer can see them, and the transaction's "
					+ "connection would keep the clock it had. Let the code under test commit (remove @Transactional "
					+ "from the test, or use @Commit) and call " + method + " outside the transaction.");
		}
	}

	/**
	 * Back to the start of a test: Ductor's clock set to the server's time and stopped,
	 * every recurring alarm started again from it (its next occurrence the first after
	 * now, and the finished occurrences that an earlier test's clock recorded after now
	 * forgotten), no injected faults, and the assertions on effects see only what is
	 * recorded from now on. Called before each test method of a test annotated with
	 * {@link AutoConfigureDuctorTester}.
	 */
	public void reset() {
		this.faults.clear();
		this.clock.freezeAtServerTime();
		this.effects.restartRecurringAlarms();
		Long max = this.jdbc.queryForObject("SELECT COALESCE(max(id), 0) FROM eec_effect_intent", Long.class);
		this.recordedAfter = (max != null) ? max : 0;
	}

	/**
	 * Gives Ductor the server's clock back and removes the injected faults. Called after
	 * each test method of a test annotated with {@link AutoConfigureDuctorTester}.
	 */
	public void release() {
		this.faults.clear();
		this.clock.release();
	}

	/**
	 * Stops injecting faults and taking intents handed over at commit when the context
	 * closes (the clock was given back after the last test).
	 */
	@Override
	public void close() {
		this.effects.injectFaults(null);
		this.effects.dispatchAtCommitTo(null);
	}

}
