package io.ductor.reliability.retreat;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * A small retreat sign-up application written from Ductor's README alone:
 * {@code POST /signups} records sign-ups in one transaction, and for each new one a room
 * hold at the hotel (an {@code IDEMPOTENT} effect, deduplicated by key in the hotel's own
 * table) and a welcome mail (a {@code NOT_IDEMPOTENT} effect: the mail server counts
 * every call, in a log file written one line per call, which survives {@code kill -9}).
 * The reliability suite's retreat crash test launches it in JVMs of its own, kills it
 * while a backlog drains, and judges the tables and the mail log afterwards.
 * <p>
 * Its configuration is {@code retreat.yml}.
 */
@SpringBootApplication
public class RetreatApplication {

	public static void main(String[] args) {
		new SpringApplicationBuilder(RetreatApplication.class).properties("spring.config.name=retreat").run(args);
	}

}
