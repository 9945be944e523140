package io.ductor.reliability.booking;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * A small hotel-booking application written from Ductor's README alone: an
 * {@link io.ductor.idempotency.web.Idempotent @Idempotent} {@code POST /bookings} whose
 * handler inserts a {@code booking} row and records a {@code @DurableEffect} hold at the
 * hotel, which deduplicates by key in its own table. The reliability suite's booking
 * storm launches it in JVMs of its own, kills and disconnects it while clients retry, and
 * judges the tables afterwards.
 * <p>
 * Its configuration is {@code booking.yml} (not {@code application.properties}, which
 * belongs to the suite's other workload on the same classpath).
 */
@SpringBootApplication
public class BookingApplication {

	public static void main(String[] args) {
		new SpringApplicationBuilder(BookingApplication.class).properties("spring.config.name=booking").run(args);
	}

}
