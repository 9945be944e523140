package io.ductor.reliability.alarms;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * A small application with recurring alarms declared in its configuration
 * ({@code alarms.yml}): {@code beat-each} and {@code beat-skip} fire every second, the
 * first running each occurrence it missed and the second skipping them. Each occurrence
 * calls {@link Beats#beat}, which records the call with its idempotency key in the
 * application's own table, one row per call (no deduplication: duplicates show). The
 * reliability suite's recurring-alarm crash test runs three of it, kills them with
 * SIGKILL and restarts them, and judges the tables afterwards.
 */
@SpringBootApplication
public class AlarmApplication {

	public static void main(String[] args) {
		new SpringApplicationBuilder(AlarmApplication.class).web(WebApplicationType.NONE)
			.properties("spring.config.name=alarms")
			.run(args);
	}

}
