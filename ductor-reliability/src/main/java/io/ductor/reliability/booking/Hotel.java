package io.ductor.reliability.booking;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;

/**
 * The hotel's side: holding a room for a booking. The hotel deduplicates by the effect's
 * idempotency key in its own table ({@code hotel_hold}), counting every call it
 * collapsed.
 */
@Component
public class Hotel {

	private final JdbcClient jdbc;

	Hotel(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	@DurableEffect(name = "hotel.hold", key = "'hold:' + #bookingId")
	public void hold(String bookingId, String room, int nights) {
		this.jdbc.sql("""
				INSERT INTO hotel_hold (hold_key, booking_id, room, nights) VALUES (?, ?, ?, ?)
				ON CONFLICT (hold_key) DO UPDATE SET calls = hotel_hold.calls + 1""")
			.params(EffectContext.current().idempotencyKey(), bookingId, room, nights)
			.update();
	}

}
