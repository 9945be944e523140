package io.ductor.reliability.booking;

import java.util.Optional;
import java.util.UUID;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The bookings: a row in {@code booking} and a hold at the hotel, recorded in one
 * transaction.
 */
@Service
class Bookings {

	private final JdbcClient jdbc;

	private final Hotel hotel;

	private final String instance;

	Bookings(JdbcClient jdbc, Hotel hotel, @Value("${booking.instance:booking}") String instance) {
		this.jdbc = jdbc;
		this.hotel = hotel;
		this.instance = instance;
	}

	/** Books the room: the row and the hold's intent commit together. */
	@Transactional
	public String book(String requestKey, String guest, String room, int nights) {
		String id = "b-" + UUID.randomUUID();
		this.jdbc.sql("""
				INSERT INTO booking (id, request_key, guest, room, nights, made_by)
				VALUES (:id, :key, :guest, :room, :nights, :madeBy)""")
			.param("id", id)
			.param("key", requestKey)
			.param("guest", guest)
			.param("room", room)
			.param("nights", nights)
			.param("madeBy", this.instance)
			.update();
		this.hotel.hold(id, room, nights);
		return id;
	}

	public Optional<Booking> find(String id) {
		return this.jdbc.sql("SELECT id, guest, room, nights, made_by FROM booking WHERE id = ?")
			.param(id)
			.query((rs, row) -> new Booking(rs.getString("id"), rs.getString("guest"), rs.getString("room"),
					rs.getInt("nights"), rs.getString("made_by")))
			.optional();
	}

}
