package io.ductor.reliability.retreat;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;

/**
 * The hotel: holds a room per sign-up, deduplicating by the effect's idempotency key in
 * its own table ({@code retreat_hold}) and counting the duplicates it collapsed.
 */
@Component
public class Hotel {

	private final JdbcClient jdbc;

	Hotel(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	@DurableEffect(name = "retreat.hold", key = "'hold:' + #guest")
	public void hold(String guest, String room) {
		this.jdbc.sql("""
				INSERT INTO retreat_hold (hold_key, guest, room) VALUES (?, ?, ?)
				ON CONFLICT (hold_key) DO UPDATE SET calls = retreat_hold.calls + 1""")
			.params(EffectContext.current().idempotencyKey(), guest, room)
			.update();
	}

}
