package io.ductor.reliability.workload;

import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;

/**
 * The workload's effects. Each call is logged by the raw receiver (every call, duplicates
 * included) and applied by the deduplicating receiver, whose primary key is the effect's
 * idempotency key: the receiver's mutation and its idempotency record are one row,
 * committed at once, as the delivery contract asks.
 */
@Component
public class Receivers {

	/**
	 * Marks an attempt that {@link #probe} failed on purpose after its lease was taken
	 * away.
	 */
	public static final String LATE_ATTEMPT = "late attempt";

	private final JdbcClient jdbc;

	private final WorkloadProperties properties;

	public Receivers(DataSource dataSource, WorkloadProperties properties) {
		this.jdbc = JdbcClient.create(dataSource);
		this.properties = properties;
	}

	/** The effect of a tick: one per applied stamp. */
	@DurableEffect(key = "'fx:' + #runId + ':' + #stamp", maxAttempts = 50)
	public void deliver(String runId, String stamp) {
		receive("deliver");
	}

	/** The effect of an order accepted by the idempotent endpoint. */
	@DurableEffect(key = "'order:' + #orderId", maxAttempts = 50)
	public void confirm(String orderId) {
		receive("confirm");
	}

	/**
	 * A slow effect for the lease scenarios: its first attempt takes {@code millis}
	 * before it applies the call. An attempt that finds a newer attempt of its key
	 * already applied (its lease was taken away while it ran) fails on purpose: if
	 * fencing let that failure through, the intent would leave {@code completed} and
	 * carry {@value #LATE_ATTEMPT} as its error.
	 */
	@DurableEffect(key = "'probe:' + #name", maxAttempts = 50)
	public void probe(String name, int millis) {
		EffectContext context = EffectContext.current();
		log(context, "probe", "started");
		// only the first attempt is slow: the one whose lease the scenario takes away
		sleep((context.attempt() == 1) ? millis : 0);
		boolean newerApplied = this.jdbc
			.sql("""
					SELECT EXISTS (SELECT 1 FROM wl_raw_calls WHERE idempotency_key = ? AND attempt > ? AND outcome = 'ok')""")
			.params(context.idempotencyKey(), context.attempt())
			.query(Boolean.class)
			.single();
		if (newerApplied) {
			log(context, "probe", "late");
			throw new IllegalStateException(LATE_ATTEMPT + " " + context.attempt() + " of " + context.idempotencyKey());
		}
		apply(context);
		log(context, "probe", "ok");
	}

	private void receive(String effect) {
		EffectContext context = EffectContext.current();
		log(context, effect, "ok");
		apply(context);
		// the acknowledgement is still on its way: a crash now makes the call run again
		sleep(this.properties.effectMillis());
	}

	private void apply(EffectContext context) {
		this.jdbc.sql("""
				INSERT INTO wl_dedup_receiver (idempotency_key, instance, attempt) VALUES (?, ?, ?)
				ON CONFLICT (idempotency_key) DO UPDATE
				SET duplicates_collapsed = wl_dedup_receiver.duplicates_collapsed + 1""")
			.params(context.idempotencyKey(), this.properties.instance(), context.attempt())
			.update();
	}

	private void log(EffectContext context, String effect, String outcome) {
		this.jdbc.sql(
				"INSERT INTO wl_raw_calls (idempotency_key, effect, instance, attempt, outcome) VALUES (?, ?, ?, ?, ?)")
			.params(context.idempotencyKey(), effect, this.properties.instance(), context.attempt(), outcome)
			.update();
	}

	private static void sleep(int millis) {
		if (millis <= 0) {
			return;
		}
		try {
			TimeUnit.MILLISECONDS.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
