package io.ductor.effect;

import java.time.Duration;
import java.util.Arrays;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.internal.EffectDrainer;

import static org.awaitility.Awaitility.await;

/**
 * What a test waits for instead of sleeping: signals that something happened, so that
 * "nothing else happened" can be asserted right after.
 */
final class DrainerSignals {

	private DrainerSignals() {
	}

	/**
	 * Waits until the drainer finished a claim that began after this call: an intent due
	 * now and allowed to run has been claimed by then (its attempts counted).
	 */
	static void awaitFreshClaim(EffectDrainer drainer) {
		long from = drainer.status().rounds();
		// the round under way now may have begun before the call; the one after it did
		// not
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(10)).until(() -> {
			drainer.wakeUp();
			return drainer.status().rounds() >= from + 2;
		});
	}

	/**
	 * Waits until the drainer's first claim (the one it makes when it starts) is over.
	 */
	static void awaitFirstClaim(EffectDrainer drainer) {
		await().atMost(Duration.ofSeconds(20))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> drainer.status().rounds() >= 1);
	}

	/**
	 * Stops the drainer and starts it again: every effect it was running, or that a
	 * commit handed to it, before the call has returned and its outcome is recorded
	 * (applied or fenced off).
	 */
	static void settleAndRestart(EffectDrainer drainer) {
		drainer.stop();
		drainer.start();
	}

	/**
	 * Waits until the thread running {@link EffectDrainer#stop()} waits for the effects
	 * still running: the drainer claims nothing more and starts nothing it queued.
	 */
	static void awaitStopWaitingForEffects(Thread stopper) {
		await().atMost(Duration.ofSeconds(20))
			.pollInterval(Duration.ofMillis(5))
			.until(() -> Arrays.stream(stopper.getStackTrace())
				.anyMatch((frame) -> frame.getMethodName().equals("awaitEffects")));
	}

	/**
	 * Waits until some statement on {@code eec_effect_intent} waits for a row lock that
	 * another transaction holds.
	 */
	static void awaitStatementWaitingForARowLock(DataSource dataSource) {
		JdbcClient jdbc = JdbcClient.create(dataSource);
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(10)).until(() -> jdbc.sql("""
				SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'
				  AND query ILIKE '%eec_effect_intent%'""").query(Long.class).single() > 0);
	}

}
