package io.ductor.reliability.alarms;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;

/**
 * The receiver of the alarms' occurrences: one row per call, in the application's own
 * table.
 */
@Component
public class Beats {

	private final JdbcClient jdbc;

	Beats(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	@DurableEffect(name = "alarms.beat")
	public void beat(String alarm) {
		EffectContext context = EffectContext.current();
		this.jdbc.sql("INSERT INTO beat_call (alarm, idempotency_key, attempt, pid) VALUES (?, ?, ?, ?)")
			.params(alarm, context.idempotencyKey(), context.attempt(), ProcessHandle.current().pid())
			.update();
	}

}
