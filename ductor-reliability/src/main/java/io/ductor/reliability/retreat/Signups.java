package io.ductor.reliability.retreat;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Signs guests up: a {@code signup} row each, and for a new one a room hold and a welcome
 * mail, recorded in the same transaction. Signing the same guest up again changes
 * nothing.
 */
@Service
public class Signups {

	private final JdbcClient jdbc;

	private final Hotel hotel;

	private final Mailer mailer;

	Signups(JdbcClient jdbc, Hotel hotel, Mailer mailer) {
		this.jdbc = jdbc;
		this.hotel = hotel;
		this.mailer = mailer;
	}

	/**
	 * @return how many of the guests {@code first} to {@code first + count - 1} were new
	 */
	@Transactional
	public int signUp(int first, int count) {
		int created = 0;
		for (int n = first; n < first + count; n++) {
			String guest = "g-" + n;
			if (this.jdbc.sql("INSERT INTO signup (guest) VALUES (?) ON CONFLICT DO NOTHING")
				.param(guest)
				.update() == 1) {
				this.hotel.hold(guest, "room-" + (n % 40));
				this.mailer.welcome(guest, guest + "@example.org");
				created++;
			}
		}
		return created;
	}

}
