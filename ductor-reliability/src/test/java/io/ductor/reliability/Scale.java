package io.ductor.reliability;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The size of a scenario: {@code short} (the default, run by {@code ./mvnw verify} and
 * CI) or {@code chaos} (the long run behind RELIABILITY.md, {@code -Pchaos}), from the
 * system property {@code ductor.reliability.profile}.
 */
record Scale(String name, int kills, int connectionFaults, Duration faultInterval, int databaseRestarts,
		Duration databaseDown, int maxInstances, Duration instanceWindow, int pauses, Duration pause) {

	static final Scale SHORT = new Scale("short", 3, 3, Duration.ofSeconds(2), 1, Duration.ofSeconds(4), 2,
			Duration.ofSeconds(5), 1, Duration.ofSeconds(5));

	static final Scale CHAOS = new Scale("chaos", 24, 15, Duration.ofSeconds(4), 3, Duration.ofSeconds(8), 3,
			Duration.ofSeconds(30), 3, Duration.ofSeconds(6));

	static Scale current() {
		return "chaos".equals(System.getProperty("ductor.reliability.profile")) ? CHAOS : SHORT;
	}

	static Path reports() {
		return Path.of(System.getProperty("ductor.reliability.reports", "target/reliability"));
	}

}
