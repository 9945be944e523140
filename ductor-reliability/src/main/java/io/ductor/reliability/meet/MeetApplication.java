package io.ductor.reliability.meet;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * An application where Ductor's effect features meet, written from the README:
 * {@code POST /orders?key=} records an order row and, for a new order, three effects in
 * one transaction: one limited to two calls at once across all instances
 * ({@code maxConcurrency = 2}), one without a limit whose receiver deduplicates by key in
 * its own table, and one whose receiver cannot deduplicate ({@code NOT_IDEMPOTENT}). A
 * request may hold its transaction open after recording (past the drainer's lease) and
 * may roll it back. Every receiver call is one line in {@code meet.call-log}, written in
 * one append before (and, for the limited effect, after) the call's work, so that it
 * survives {@code kill -9}. The reliability suite's {@code EffectsWhereFeaturesMeetTest}
 * runs two instances of it, kills one and terminates their connections, and judges the
 * tables and the call log afterwards.
 * <p>
 * Its configuration is {@code meet.yml}.
 */
@SpringBootApplication
public class MeetApplication {

	public static void main(String[] args) {
		new SpringApplicationBuilder(MeetApplication.class).properties("spring.config.name=meet").run(args);
	}

}
