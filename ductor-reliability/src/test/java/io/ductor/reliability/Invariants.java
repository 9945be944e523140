package io.ductor.reliability;

import org.awaitility.Awaitility;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The promises every scenario ends by checking, in SQL, on what the workload left in the
 * database.
 */
final class Invariants {

	private final JdbcClient jdbc;

	Invariants(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	long count(String sql, Object... params) {
		return this.jdbc.sql(sql).params(params).query(Long.class).single();
	}

	/**
	 * Waits until no intent is pending or in flight; fails with the backlog after
	 * {@code timeout}.
	 */
	Duration awaitDrained(Duration timeout) throws InterruptedException {
		long start = System.nanoTime();
		String live = "SELECT count(*) FROM eec_effect_intent WHERE status IN ('pending', 'in_flight')";
		try {
			Awaitility.await()
				.atMost(timeout)
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(200))
				.until(() -> count(live) == 0);
			return Duration.ofNanos(System.nanoTime() - start);
		}
		catch (org.awaitility.core.ConditionTimeoutException ex) {
			// below: the backlog by status
		}
		throw new AssertionError(count(live) + " intent(s) still pending or in flight after " + timeout + ": "
				+ this.jdbc
					.sql("SELECT status, count(*) AS n, max(last_error) AS error FROM eec_effect_intent "
							+ "GROUP BY status")
					.query()
					.listOfRows());
	}

	/**
	 * Checks runs, effects, receivers and orders, and returns the figures.
	 * @param ackDirectory where the workloads wrote their acknowledged ticks
	 * @param orders the driver's order client, or {@code null}
	 */
	Map<String, Object> check(Path ackDirectory, OrderClient orders) throws IOException {
		Map<String, Object> f = new LinkedHashMap<>();
		// runs: exactly-once progress
		f.put("runs", count("SELECT count(*) FROM eec_run WHERE type = 'workload'"));
		f.put("transitions applied",
				count("SELECT count(*) FROM eec_run_transition t JOIN eec_run r ON r.id = t.run_id "
						+ "WHERE r.type = 'workload'"));
		long gaps = count(
				"""
						SELECT count(*) FROM eec_run r
						WHERE r.type = 'workload' AND (
						    r.last_transition_seq <> (SELECT count(*) FROM eec_run_transition t WHERE t.run_id = r.id)
						    OR r.last_transition_seq <> coalesce((SELECT max(seq) FROM eec_run_transition t WHERE t.run_id = r.id), 0)
						    OR coalesce((SELECT min(seq) FROM eec_run_transition t WHERE t.run_id = r.id), 1) <> 1
						    OR r.record_version <> r.last_transition_seq + 1)""");
		long counterMismatch = count("SELECT count(*) FROM eec_run WHERE type = 'workload' "
				+ "AND (state->>'count')::bigint <> last_transition_seq");
		long duplicateStamps = count("SELECT count(*) - count(DISTINCT (run_id, stamp)) FROM eec_run_transition");
		// acknowledged ticks are in the history
		List<String[]> acked = new ArrayList<>();
		long violations = 0;
		long duplicatesAnswered = 0;
		List<String> violationLines = new ArrayList<>();
		try (Stream<Path> files = Files.list(ackDirectory)) {
			for (Path file : files.filter((p) -> p.getFileName().toString().startsWith("acks-")).toList()) {
				for (String line : Files.readAllLines(file)) {
					String[] parts = line.split(" ");
					if (line.startsWith("ACK ") && parts.length == 4) {
						acked.add(parts);
					}
					else if (line.startsWith("DUP ")) {
						duplicatesAnswered++;
					}
					else if (line.startsWith("VIOLATION")) {
						violations++;
						violationLines.add(line);
					}
				}
			}
		}
		long ackedMissing = 0;
		for (String[] ack : acked) {
			Long seq = this.jdbc.sql("SELECT seq FROM eec_run_transition WHERE run_id = ? AND stamp = ?")
				.params(ack[1], ack[2])
				.query(Long.class)
				.optional()
				.orElse(null);
			if (seq == null || seq != Long.parseLong(ack[3])) {
				ackedMissing++;
			}
		}
		f.put("ticks acknowledged to the caller", (long) acked.size());
		f.put("redelivered stamps answered DUPLICATE", duplicatesAnswered);
		f.put("runs with a gap or a version mismatch (must be 0)", gaps);
		f.put("runs whose counter differs from their seq (must be 0)", counterMismatch);
		f.put("duplicate stamps (must be 0)", duplicateStamps);
		f.put("acknowledged ticks lost (must be 0)", ackedMissing);
		f.put("stamp violations seen by the workload (must be 0)", violations);
		// effects: registered exactly once, dispatched at least once, applied once at the
		// deduplicating receiver
		f.put("intents", count("SELECT count(*) FROM eec_effect_intent"));
		long notCompleted = count("SELECT count(*) FROM eec_effect_intent WHERE status <> 'completed'");
		long tickEffectsMissing = count(
				"""
						SELECT count(*) FROM eec_run_transition t JOIN eec_run r ON r.id = t.run_id AND r.type = 'workload'
						WHERE NOT EXISTS (SELECT 1 FROM eec_effect_intent i WHERE i.idempotency_key = 'fx:' || t.run_id || ':' || t.stamp)
						  AND NOT EXISTS (SELECT 1 FROM wl_dedup_receiver d WHERE d.idempotency_key = 'fx:' || t.run_id || ':' || t.stamp)""");
		long effectsNotApplied = count(
				"""
						SELECT count(*) FROM eec_run_transition t JOIN eec_run r ON r.id = t.run_id AND r.type = 'workload'
						WHERE NOT EXISTS (SELECT 1 FROM wl_dedup_receiver d WHERE d.idempotency_key = 'fx:' || t.run_id || ':' || t.stamp)""");
		long strayEffects = count(
				"""
						SELECT count(*) FROM wl_dedup_receiver d WHERE d.idempotency_key LIKE 'fx:%' AND NOT EXISTS (
						    SELECT 1 FROM eec_run_transition t WHERE 'fx:' || t.run_id || ':' || t.stamp = d.idempotency_key)""");
		long rawOk = count("SELECT count(*) FROM wl_raw_calls WHERE outcome = 'ok'");
		long rawDistinct = count("SELECT count(DISTINCT idempotency_key) FROM wl_raw_calls WHERE outcome = 'ok'");
		long dedupRows = count("SELECT count(*) FROM wl_dedup_receiver");
		f.put("intents not completed (must be 0)", notCompleted);
		f.put("tick effects never recorded (must be 0)", tickEffectsMissing);
		f.put("tick effects never applied (must be 0)", effectsNotApplied);
		f.put("effects applied for a rolled-back tick (must be 0)", strayEffects);
		f.put("effects applied at the deduplicating receiver", dedupRows);
		f.put("duplicates at the deduplicating receiver (must be 0)",
				count("SELECT count(*) - count(DISTINCT idempotency_key) FROM wl_dedup_receiver"));
		f.put("keys called but not applied by the deduplicating receiver (must be 0)", rawDistinct - dedupRows);
		f.put("duplicate calls collapsed by the deduplicating receiver",
				count("SELECT coalesce(sum(duplicates_collapsed), 0) FROM wl_dedup_receiver"));
		f.put("calls at the raw receiver", rawOk);
		f.put("duplicates at the raw receiver (reported)", rawOk - rawDistinct);
		// ingress: one order per key, the same answer every time
		if (orders != null) {
			long missing = 0;
			for (Map.Entry<String, String> answer : orders.answered.entrySet()) {
				String[] tenantKey = answer.getKey().split(" ", 2);
				long rows = count("SELECT count(*) FROM wl_orders WHERE id = ? AND tenant = ? AND idempotency_key = ?",
						answer.getValue(), tenantKey[0], tenantKey[1]);
				if (rows != 1) {
					missing++;
				}
			}
			f.put("idempotent requests answered", (long) orders.answered.size());
			f.put("HTTP attempts, retries included", orders.attempts.get());
			f.put("answered orders lost (must be 0)", missing);
			f.put("keys with more than one order (must be 0)",
					count("""
							SELECT count(*) FROM (SELECT 1 FROM wl_orders GROUP BY tenant, idempotency_key HAVING count(*) > 1) d"""));
			f.put("replays checked", orders.replays.get());
			f.put("replays with another answer (must be 0)", orders.replayMismatches.get());
			f.put("order effects never applied (must be 0)", count("""
					SELECT count(*) FROM wl_orders o WHERE NOT EXISTS (
					    SELECT 1 FROM wl_dedup_receiver d WHERE d.idempotency_key = 'order:' || o.id)"""));
		}
		f.put("idempotency records pending (must be 0)",
				count("SELECT count(*) FROM eec_routing_idempotency WHERE status = 'pending' AND pool_id = 'orders'"));

		System.out.println("Intents not completed: " + this.jdbc.sql("""
				SELECT id, effect_name, idempotency_key, status, attempts, lease_owner, lease_expires_at, last_error,
				    next_attempt_at, now() AS now FROM eec_effect_intent WHERE status <> 'completed' LIMIT 20""")
			.query()
			.listOfRows());
		System.out.println("Applied without an intent: " + this.jdbc.sql("""
				SELECT d.*, (SELECT count(*) FROM wl_raw_calls r WHERE r.idempotency_key = d.idempotency_key) AS calls
				FROM wl_dedup_receiver d WHERE NOT EXISTS (
				    SELECT 1 FROM eec_effect_intent i WHERE i.idempotency_key = d.idempotency_key) LIMIT 20""")
			.query()
			.listOfRows());
		assertThat(violationLines).as("stamp violations reported by the workload").isEmpty();
		f.forEach((name, value) -> {
			if (name.contains("(must be 0)")) {
				assertThat((Long) value).as(name + "; all figures: " + f).isZero();
			}
		});
		return f;
	}

}
