package io.ductor.effect;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The receivers of {@link DrainerStateMachineTest}, and the log of every call they get:
 * which intent and attempt, on which thread, when it started and ended, whether it threw,
 * and (for the limited effects) whether its attempt still held a live lease when it
 * ended. Each receiver takes the number of milliseconds it works and the number of
 * attempts that fail before one succeeds.
 */
public class DrainerModelEffects {

	static final String PLAIN = "model.plain";

	static final String MAIL = "model.mail";

	static final String NARROW = "model.narrow";

	static final String WIDE = "model.wide";

	static final String KEEPER = "model.keeper";

	static final int NARROW_LIMIT = 1;

	static final int WIDE_LIMIT = 20;

	static final int MAX_ATTEMPTS = 3;

	/** The calls of the current sequence. */
	static volatile Queue<Call> calls = new ConcurrentLinkedQueue<>();

	/** Ends the call of the long-running effect that keeps the drainer busy. */
	static volatile CountDownLatch keeperRelease = new CountDownLatch(0);

	private final JdbcClient jdbc;

	public DrainerModelEffects(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	static boolean limited(String effect) {
		return NARROW.equals(effect) || WIDE.equals(effect);
	}

	static int limit(String effect) {
		return NARROW.equals(effect) ? NARROW_LIMIT : WIDE_LIMIT;
	}

	/** Starts a new log, for a new sequence. */
	static void newLog() {
		calls = new ConcurrentLinkedQueue<>();
	}

	static List<Call> log() {
		return new ArrayList<>(calls);
	}

	/** An idempotent receiver without a limit. */
	@DurableEffect(name = PLAIN, maxAttempts = MAX_ATTEMPTS)
	public void plain(String label, int millis, int failures) {
		receive(millis, failures, false);
	}

	/**
	 * A receiver that cannot deduplicate: it must never be called twice for one intent.
	 */
	@DurableEffect(name = MAIL, receiver = Receiver.NOT_IDEMPOTENT, maxAttempts = MAX_ATTEMPTS)
	public void mail(String label, int millis, int failures) {
		receive(millis, failures, false);
	}

	/** A receiver that allows one call at a time. */
	@DurableEffect(name = NARROW, maxAttempts = MAX_ATTEMPTS, maxConcurrency = NARROW_LIMIT)
	public void narrow(String label, int millis, int failures) {
		receive(millis, failures, true);
	}

	/**
	 * A receiver that allows more calls at once than one drainer holds intents, so that
	 * its backlog alone could fill every claim.
	 */
	@DurableEffect(name = WIDE, maxAttempts = MAX_ATTEMPTS, maxConcurrency = WIDE_LIMIT)
	public void wide(String label, int millis, int failures) {
		receive(millis, failures, true);
	}

	/**
	 * A long-running call (a report, an export) that keeps one of the drainer's workers
	 * busy for the whole sequence, as steady load does: the drainer always holds a claim.
	 */
	@DurableEffect(name = KEEPER)
	public void keeper(String label) throws InterruptedException {
		EffectContext context = EffectContext.current();
		Call call = new Call(context);
		calls.add(call);
		try {
			keeperRelease.await(2, TimeUnit.MINUTES);
		}
		finally {
			call.end = System.nanoTime();
		}
	}

	private void receive(int millis, int failures, boolean limited) {
		EffectContext context = EffectContext.current();
		Call call = new Call(context);
		calls.add(call);
		try {
			if (millis > 0) {
				Thread.sleep(millis);
			}
			if (context.attempt() <= failures) {
				call.failed = true;
				throw new IllegalStateException("the model's receiver fails attempt " + context.attempt());
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			call.failed = true;
			throw new IllegalStateException("interrupted", ex);
		}
		finally {
			if (limited) {
				call.leaseHeldAtEnd = leaseHeld(context);
			}
			call.end = System.nanoTime();
		}
	}

	/**
	 * Whether the attempt still holds a live lease: a call whose lease was lost may
	 * outlive it (the documented way a receiver sees more calls than the limit).
	 */
	private boolean leaseHeld(EffectContext context) {
		return this.jdbc.sql("""
				SELECT count(*) FROM eec_effect_intent
				WHERE id = ? AND status = 'in_flight' AND attempts = ? AND lease_expires_at > ductor_now()""")
			.params(context.intentId(), context.attempt())
			.query(Long.class)
			.single() == 1;
	}

	/** One call of a receiver. */
	static final class Call {

		final String effect;

		final String key;

		final long intentId;

		final int attempt;

		final String thread = Thread.currentThread().getName();

		final long start = System.nanoTime();

		volatile long end = -1;

		volatile boolean failed;

		/** For limited effects, once ended: whether the attempt held a live lease. */
		volatile Boolean leaseHeldAtEnd;

		Call(EffectContext context) {
			this.effect = context.effectName();
			this.key = context.idempotencyKey();
			this.intentId = context.intentId();
			this.attempt = context.attempt();
		}

		boolean ended() {
			return this.end >= 0;
		}

		boolean runningAt(long nanos) {
			return this.start <= nanos && (this.end < 0 || this.end > nanos);
		}

		@Override
		public String toString() {
			return this.effect + " " + this.key + " attempt " + this.attempt + " on " + this.thread + " ["
					+ DrainerStateMachineTest.millis(this.start) + " ms, "
					+ (ended() ? DrainerStateMachineTest.millis(this.end) + " ms" : "running") + "]"
					+ (this.failed ? " threw" : "") + ((this.leaseHeldAtEnd == Boolean.FALSE) ? " (lease lost)" : "");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		DrainerModelEffects drainerModelEffects(DataSource dataSource) {
			return new DrainerModelEffects(dataSource);
		}

	}

}
