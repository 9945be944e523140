package io.ductor.reliability.meet;

import java.util.concurrent.ThreadLocalRandom;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.effect.Receiver;

/**
 * The three effects of an order.
 */
@Component
public class Receivers {

	private final CallLog log;

	private final JdbcClient jdbc;

	Receivers(CallLog log, JdbcClient jdbc) {
		this.log = log;
		this.jdbc = jdbc;
	}

	/**
	 * A partner that takes two calls at once: the start and the end of each call are
	 * logged, 40 to 120 ms apart.
	 */
	@DurableEffect(name = "meet.limited", key = "'lim:' + #key", maxConcurrency = 2)
	public void limited(String key) {
		this.log.write("S");
		sleep(40 + ThreadLocalRandom.current().nextInt(80));
		this.log.write("E");
	}

	/** A receiver that deduplicates by the effect's key in its own table. */
	@DurableEffect(name = "meet.unlimited", key = "'unl:' + #key")
	public void unlimited(String key) {
		this.log.write("U");
		this.jdbc.sql("""
				INSERT INTO meet_applied (effect_key) VALUES (?)
				ON CONFLICT (effect_key) DO UPDATE SET calls = meet_applied.calls + 1""")
			.param(EffectContext.current().idempotencyKey())
			.update();
	}

	/** A receiver that cannot deduplicate: every call counts (a mail sent). */
	@DurableEffect(name = "meet.once", key = "'once:' + #key", receiver = Receiver.NOT_IDEMPOTENT)
	public void once(String key) {
		this.log.write("N");
		sleep(20);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted", ex);
		}
	}

}
