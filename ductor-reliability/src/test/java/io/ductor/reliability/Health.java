package io.ductor.reliability;

import org.awaitility.Awaitility;

import java.time.Duration;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The health step of the fault scenarios: {@code /actuator/health/ductor} must report
 * DOWN while the database is out of reach and UP again afterwards. The {@code ductor}
 * health contributor is issue 5; on a build without it (the endpoint answers 404) the
 * step is skipped with a message.
 */
final class Health {

	private Health() {
	}

	static void assumeContributor(Workload workload) {
		int status = workload.get("/actuator/health/ductor");
		assumeTrue(status != 404, "HEALTH STEP SKIPPED: the workload has no 'ductor' health contributor "
				+ "(/actuator/health/ductor answers 404; it arrives with issue 5). Runs by itself once it exists.");
	}

	/**
	 * @return UP, DOWN, ... or "unreachable"
	 */
	static String status(Workload workload) {
		String body = workload.getBody("/actuator/health/ductor");
		if (body == null) {
			return "unreachable";
		}
		int at = body.indexOf("\"status\"");
		if (at < 0) {
			return "unknown";
		}
		int start = body.indexOf('"', body.indexOf(':', at) + 1) + 1;
		return body.substring(start, body.indexOf('"', start));
	}

	/**
	 * @return how long until the contributor reported UP
	 */
	static Duration awaitUp(Workload workload, Duration timeout) throws InterruptedException {
		long start = System.nanoTime();
		Awaitility.await("ductor health UP")
			.atMost(timeout)
			.pollDelay(Duration.ZERO)
			.pollInterval(Duration.ofMillis(100))
			.until(() -> "UP".equals(status(workload)));
		return Duration.ofNanos(System.nanoTime() - start);
	}

}
