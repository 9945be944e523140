package io.ductor.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import io.ductor.effect.DurableEffect;

/**
 * Scenario 10: the operator console on a large outbox. 1,000,000 finished and 100,000
 * live intents (and 2,000 runs, 100,000 idempotency keys, 1,000 recurring alarms, 11,000
 * named alarms with about ten occurrences each among the intents, a limited effect's
 * slots), each loaded with one {@code generate_series} statement; then every console
 * request, its page and each {@code ductor} endpoint call behind it, is timed over HTTP
 * (warm, sequential), and the plan of each query is checked for sequential scans of the
 * intent table.
 */
final class ConsoleScenario {

	private static final String SCENARIO = "10 console";

	private static final int REPEATS = 40;

	/**
	 * The probes by which DuctorInspector turns a creation time into an id (a copy, for
	 * EXPLAIN).
	 */
	private static final String FIRST_ID_CREATED_AT_OR_AFTER = """
			WITH RECURSIVE s(lo, hi) AS (
			    SELECT coalesce(min(id), 1), coalesce(max(id), 0) + 1 FROM eec_effect_intent
			    UNION ALL
			    SELECT CASE WHEN p.created_at < :at THEN p.id + 1 ELSE s.lo END,
			           CASE WHEN p.created_at < :at THEN s.hi ELSE (s.lo + s.hi) / 2 END
			    FROM s CROSS JOIN LATERAL (
			        SELECT id, created_at FROM eec_effect_intent WHERE id >= (s.lo + s.hi) / 2 ORDER BY id LIMIT 1) AS p
			    WHERE s.lo < s.hi)
			SELECT max(lo) FROM s""";

	private final Bench bench;

	ConsoleScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		this.bench.withDatabase((db) -> {
			// the schema is migrated at start-up
			try (ConfigurableApplicationContext app = start(db)) {
				Bench.progress(SCENARIO + ": loading 1,000,000 finished and 100,000 live intents");
				load(db);
				String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
				Map<String, Object> sample = sample(db);
				measure(base, sample);
				explain(db, sample);
			}
			return null;
		});
	}

	private static ConfigurableApplicationContext start(Db db) {
		List<String> properties = new ArrayList<>(List.of(db.datasourceProperties(4)));
		properties.addAll(List.of("server.port=0", "spring.main.banner-mode=off", "spring.main.log-startup-info=false",
				"management.endpoints.web.exposure.include=ductor", "ductor.console.enabled=true",
				"ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false",
				"ductor.retention.enabled=false", "ductor.idempotency.sweeper.enabled=false",
				DuctorSystem.excludeModulith()));
		properties.addAll(DuctorSystem.extraProperties);
		return new SpringApplicationBuilder(ConsoleApplication.class).properties(properties.toArray(String[]::new))
			.run();
	}

	private static void load(Db db) {
		Bench.execute(db, """
				INSERT INTO eec_run (id, type, status, state, record_version, last_transition_seq)
				SELECT 'run-' || r, (ARRAY['order', 'trip', 'refund'])[1 + r % 3],
				       CASE WHEN r % 5 = 0 THEN 'completed' ELSE 'active' END, jsonb_build_object('step', r % 7), 4, 3
				FROM generate_series(1, 2000) AS r""", """
				INSERT INTO eec_run_transition (run_id, seq, stamp, input, record_version, run_status)
				SELECT 'run-' || r, s, 'tick-' || s, jsonb_build_object('s', s), s + 1, 'active'
				FROM generate_series(1, 2000) AS r, generate_series(1, 3) AS s""",
				// ids 1..1,100,000 in creation order, a week of history; every 11th
				// intent is live:
				// 60% pending, 10% in flight, 20% failed, 10% needs_decision; one in 50
				// belongs to a run
				"""
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
						       receiver, attempts, max_attempts, next_attempt_at, lease_owner, lease_expires_at, run_id,
						       last_error, created_at, updated_at, finished_at)
						SELECT (ARRAY['mail.send', 'stock.reserve', 'payment.charge', 'receipt.send', 'hotel.book',
						              'sms.send', 'ledger.post', 'search.index'])[1 + n % 8],
						       'key-' || n, jsonb_build_array(jsonb_build_object('order', 'order-' || n, 'amount', n % 997)), 'f',
						       s.status, 'IDEMPOTENT', 1, 3,
						       CASE WHEN s.status = 'pending' THEN now() - (n % 600) * interval '1 second' ELSE t.at END,
						       CASE WHEN s.status = 'in_flight' THEN 'drainer-' || (n % 4) END,
						       CASE WHEN s.status = 'in_flight' THEN now() + interval '30 seconds' END,
						       CASE WHEN n % 50 = 0 THEN 'run-' || (1 + n / 50 % 2000) END,
						       CASE WHEN s.status IN ('failed', 'needs_decision') THEN 'connection refused' END,
						       t.at, t.at, CASE WHEN s.status IN ('completed', 'cancelled') THEN t.at + interval '200 ms' END
						FROM generate_series(1, 1100000) AS n,
						     LATERAL (SELECT now() - (1100000 - n) * interval '550 ms' AS at) AS t,
						     LATERAL (SELECT CASE
						         WHEN n % 11 <> 0 THEN CASE WHEN n % 20 = 0 THEN 'cancelled' ELSE 'completed' END
						         WHEN n / 11 % 10 < 6 THEN 'pending'
						         WHEN n / 11 % 10 = 6 THEN 'in_flight'
						         WHEN n / 11 % 10 < 9 THEN 'failed'
						         ELSE 'needs_decision' END AS status) AS s""",
				"""
						INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status, request_fingerprint,
						       owner_token, decision_id, response_status, response_headers, response_body, expires_at)
						SELECT 'tenant-' || (k % 10), 'orders', 'order-key-' || k, 'completed', 'fp', gen_random_uuid(),
						       'order-' || k, 201, '{"Content-Type":["application/json"]}',
						       convert_to('{"id":"order-' || k || '"}', 'UTF8'), now() + interval '1 day'
						FROM generate_series(1, 100000) AS k""",
				// one intent in ten, finished or not pending, is an occurrence of one of
				// 11,000
				// named alarms (ten each), and each of those alarms has one pending
				// occurrence
				"""
						UPDATE eec_effect_intent SET alarm_name = 'reminder:order-' || (id / 100)
						WHERE id % 10 = 3 AND status <> 'pending'""",
				"""
						UPDATE eec_effect_intent SET alarm_name = 'reminder:order-' || (id / 100)
						WHERE id IN (SELECT min(id) FROM eec_effect_intent WHERE status = 'pending' GROUP BY id / 100)""",
				// 1,000 recurring alarms, each with a last occurrence among the intents
				"""
						INSERT INTO eec_recurring_alarm (name, effect_name, every_ms, zone, payload, payload_fingerprint,
						       missed, grace_ms, declared_in, next_at, last_occurrence_at, last_key, created_at, updated_at)
						SELECT 'report:tenant-' || a, 'mail.send', 3600000, 'UTC', '[]', 'f', 'run_once', 60000, 'api',
						       now() + interval '1 day', now() - interval '1 hour', 'key-' || (a * 1000), now(), now()
						FROM generate_series(1, 1000) AS a""",
				// the limited effect's eight slots, each held by an attempt in flight
				"""
						INSERT INTO eec_effect_slot (effect_name, slot, intent_id, attempt, updated_at)
						SELECT 'legacy.submit', row_number() OVER (ORDER BY id), id, attempts, now()
						FROM (SELECT id, attempts FROM eec_effect_intent WHERE status = 'in_flight' ORDER BY id LIMIT 8) AS h
						ON CONFLICT (effect_name, slot) DO UPDATE SET intent_id = excluded.intent_id, attempt = excluded.attempt""",
				"VACUUM ANALYZE");
	}

	/** Ids and keys the requests look up, from the middle and the end of the table. */
	private static Map<String, Object> sample(Db db) {
		Map<String, Object> sample = new LinkedHashMap<>();
		try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
			sample.put("failedAfter", single(statement,
					"SELECT id FROM eec_effect_intent WHERE status = 'failed' ORDER BY id OFFSET 15000 LIMIT 1"));
			sample.put("completedAfter", single(statement,
					"SELECT id FROM eec_effect_intent WHERE id > 900000 AND status = 'completed' ORDER BY id LIMIT 1"));
			sample.put("intent", single(statement,
					"SELECT id FROM eec_effect_intent WHERE status = 'needs_decision' ORDER BY id DESC LIMIT 1"));
			sample.put("key", "key-" + single(statement, "SELECT 777777"));
			sample.put("run", "run-1500");
			sample.put("from", single(statement, "SELECT to_char((now() - interval '2 hours') AT TIME ZONE 'UTC', "
					+ "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"));
			sample.put("to", single(statement, "SELECT to_char((now() - interval '1 hour') AT TIME ZONE 'UTC', "
					+ "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"));
			// the id range DuctorInspector reads for the window, a minute wider on each
			// side
			sample.put("windowAfter", (Long) single(statement, FIRST_ID_CREATED_AT_OR_AFTER.replace(":at",
					"timestamptz '" + sample.get("from") + "' - interval '1 minute'")) - 1);
			sample.put("windowBefore", single(statement, FIRST_ID_CREATED_AT_OR_AFTER.replace(":at",
					"timestamptz '" + sample.get("to") + "' + interval '1 minute'")));
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
		return sample;
	}

	private static Object single(Statement statement, String sql) throws SQLException {
		try (ResultSet rs = statement.executeQuery(sql)) {
			rs.next();
			return rs.getObject(1);
		}
	}

	private void measure(String base, Map<String, Object> s) {
		Map<String, String> requests = new LinkedHashMap<>();
		requests.put("console page", "/ductor/");
		requests.put("console script", "/ductor/assets/console.js");
		requests.put("overview (backlog, parked by effect, leases, throughput)", "/actuator/ductor");
		requests.put("intents: all, first page", "/actuator/ductor/all?limit=50");
		requests.put("intents: pending, first page", "/actuator/ductor/pending?limit=50");
		requests.put("intents: in_flight, first page", "/actuator/ductor/in_flight?limit=50");
		requests.put("intents: failed, page 300", "/actuator/ductor/failed?limit=50&afterId=" + s.get("failedAfter"));
		requests.put("intents: failed + effect, page 300",
				"/actuator/ductor/failed?limit=50&effect=payment.charge&afterId=" + s.get("failedAfter"));
		requests.put("intents: needs_decision + effect", "/actuator/ductor/needs_decision?limit=50&effect=mail.send");
		requests.put("intents: completed, deep page",
				"/actuator/ductor/completed?limit=50&afterId=" + s.get("completedAfter"));
		requests.put("intents: all + effect", "/actuator/ductor/all?limit=50&effect=search.index");
		requests.put("intents: by key", "/actuator/ductor/all?limit=50&key=" + s.get("key"));
		requests.put("intents: by run", "/actuator/ductor/all?limit=50&run=" + s.get("run"));
		requests.put("intents: failed + created in a past hour",
				"/actuator/ductor/failed?limit=50&from=" + encode(s.get("from")) + "&to=" + encode(s.get("to")));
		requests.put("intents: all + created in a past hour",
				"/actuator/ductor/all?limit=50&from=" + encode(s.get("from")) + "&to=" + encode(s.get("to")));
		requests.put("one intent", "/actuator/ductor/intents/" + s.get("intent"));
		requests.put("one run (state, transitions, effects, compensations)", "/actuator/ductor/runs/" + s.get("run"));
		requests.put("runs of a type", "/actuator/ductor/run-types/order?limit=50");
		requests.put("idempotency key", "/actuator/ductor/keys/order-key-77777?tenant=tenant-7&pool=orders");
		requests.put("alarms: recurring, first page", "/actuator/ductor/alarms/recurring?limit=50");
		requests.put("alarms: recurring, by prefix",
				"/actuator/ductor/alarms/recurring?limit=50&prefix=" + encode("report:tenant-9"));
		requests.put("alarms: one-shot, first page", "/actuator/ductor/alarms/one-shot?limit=50");
		requests.put("alarms: one-shot, deep page",
				"/actuator/ductor/alarms/one-shot?limit=50&after=" + encode("reminder:order-8000"));
		requests.put("alarms: one-shot, by prefix",
				"/actuator/ductor/alarms/one-shot?limit=50&prefix=" + encode("reminder:order-99"));
		requests.put("concurrency slots", "/actuator/ductor/slots");
		HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		for (Map.Entry<String, String> request : requests.entrySet()) {
			List<Double> millis = new ArrayList<>();
			for (int i = 0; i < REPEATS + 5; i++) {
				long start = System.nanoTime();
				int status = get(http, base + request.getValue());
				double elapsed = (System.nanoTime() - start) / 1e6;
				if (status != 200) {
					throw new IllegalStateException(request.getValue() + " answered " + status);
				}
				if (i >= 5) {
					millis.add(elapsed);
				}
			}
			List<Double> sorted = millis.stream().sorted().toList();
			double p95 = sorted.get((int) Math.ceil(sorted.size() * 0.95) - 1);
			Report.Row row = this.bench.report.add(SCENARIO, "Ductor", request.getKey() + " (p95 " + Report.format(p95)
					+ " ms, max " + Report.format(sorted.get(sorted.size() - 1)) + " ms)", "ms",
					List.of(median(sorted)));
			this.bench.report.judge(row, "", "p95 ≤ 200 ms", p95 <= 200);
			Bench.progress(SCENARIO + ": " + request.getKey() + " median " + Report.format(median(sorted)) + " ms, p95 "
					+ Report.format(p95) + " ms");
		}
	}

	/**
	 * Every console query's plan, with the indexes it reads and whether it scans the
	 * intent table.
	 */
	private void explain(Db db, Map<String, Object> s) {
		Map<String, String> queries = new LinkedHashMap<>();
		String live = " AND queue_status = status AND queue_status IN ('pending', 'reconciling', 'failed', 'needs_decision')";
		String inFlight = " AND status = 'in_flight' AND (queue_lease_expires_at IS NOT NULL OR lease_xid >= "
				+ "(SELECT w.lease_xid FROM eec_effect_lease_sweep w WHERE w.name = 'intents'))";
		queries.put("failed, page 300", "SELECT * FROM eec_effect_intent WHERE id > " + s.get("failedAfter")
				+ " AND status = 'failed'" + live + " ORDER BY id LIMIT 50");
		queries.put("failed + effect", "SELECT * FROM eec_effect_intent WHERE id > 0 AND status = 'failed'" + live
				+ " AND effect_name = 'payment.charge' ORDER BY id LIMIT 50");
		queries.put("in_flight, first page",
				"SELECT * FROM eec_effect_intent WHERE id > 0" + inFlight + " ORDER BY id LIMIT 50");
		queries.put("completed, deep page", "SELECT * FROM eec_effect_intent WHERE id > " + s.get("completedAfter")
				+ " AND status = 'completed' ORDER BY id LIMIT 50");
		queries.put("by key", "SELECT * FROM eec_effect_intent WHERE id > 0 AND idempotency_key = '" + s.get("key")
				+ "' ORDER BY id LIMIT 50");
		queries.put("by run", "SELECT * FROM eec_effect_intent WHERE id > 0 AND run_id = '" + s.get("run")
				+ "' ORDER BY id LIMIT 50");
		queries.put("parked by effect", "SELECT effect_name, queue_status, count(*) FROM eec_effect_intent "
				+ "WHERE queue_status IN ('failed', 'needs_decision') GROUP BY effect_name, queue_status");
		queries.put("first id of a creation time",
				FIRST_ID_CREATED_AT_OR_AFTER.replace(":at", "'" + s.get("from") + "'"));
		queries.put("all + created in a past hour",
				"SELECT * FROM eec_effect_intent WHERE id > " + s.get("windowAfter") + " AND created_at >= '"
						+ s.get("from") + "' AND id < " + s.get("windowBefore") + " AND created_at < '" + s.get("to")
						+ "' ORDER BY id LIMIT 50");
		queries.put("failed + created in a past hour",
				"SELECT * FROM eec_effect_intent WHERE id > " + s.get("windowAfter") + " AND status = 'failed'" + live
						+ " AND created_at >= '" + s.get("from") + "' AND id < " + s.get("windowBefore")
						+ " AND created_at < '" + s.get("to") + "' ORDER BY id LIMIT 50");
		queries.put("throughput", "SELECT minute, completed FROM eec_effect_throughput "
				+ "WHERE minute >= date_trunc('minute', now()) - interval '900 seconds' ORDER BY minute");
		queries.put("lease owners",
				"SELECT lease_owner, count(*) FROM eec_effect_intent WHERE true" + inFlight + " GROUP BY lease_owner");
		queries.put("bulk snapshot page", "SELECT id FROM eec_effect_intent WHERE effect_name = 'mail.send' "
				+ "AND status = 'failed'" + live + " AND updated_at <= now() AND id > 0 ORDER BY id LIMIT 200");
		queries.put("one-shot alarms: next name",
				"SELECT alarm_name FROM eec_effect_intent WHERE alarm_name IS NOT NULL "
						+ "AND alarm_name > 'reminder:order-8000' ORDER BY alarm_name LIMIT 1");
		queries.put("one-shot alarms: newest other occurrence",
				"SELECT id, status FROM eec_effect_intent WHERE alarm_name = 'reminder:order-8000' "
						+ "AND alarm_name IS NOT NULL AND status <> 'pending' ORDER BY id DESC LIMIT 1");
		queries.put("one-shot alarms: pending occurrence", "SELECT id FROM eec_effect_intent "
				+ "WHERE alarm_name = 'reminder:order-8000' AND queue_status = 'pending'");
		queries.put("recurring alarms: last occurrence", "SELECT a.name, i.status FROM eec_recurring_alarm a "
				+ "LEFT JOIN eec_effect_intent i ON i.idempotency_key = a.last_key WHERE a.name > '' ORDER BY a.name "
				+ "LIMIT 50");
		queries.put("slot holders",
				"SELECT s.slot, h.id FROM eec_effect_slot s CROSS JOIN LATERAL ("
						+ "SELECT h.id FROM eec_effect_intent h WHERE h.id = s.intent_id AND h.status = 'in_flight' "
						+ "AND h.attempts = s.attempt AND h.lease_expires_at > now() LIMIT 1) h "
						+ "WHERE s.effect_name = ANY (ARRAY['legacy.submit'])");
		StringJoiner section = new StringJoiner("\n", "Console query plans (EXPLAIN, 1,100,000 intents):\n\n", "\n");
		section.add("| Query | Indexes read | Sequential scan of eec_effect_intent |");
		section.add("|---|---|---|");
		Pattern index = Pattern.compile("Index(?: Only)? Scan(?: Backward)? using (\\S+)|Bitmap Index Scan on (\\S+)");
		try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
			for (Map.Entry<String, String> query : queries.entrySet()) {
				StringBuilder plan = new StringBuilder();
				try (ResultSet rs = statement.executeQuery("EXPLAIN " + query.getValue())) {
					while (rs.next()) {
						plan.append(rs.getString(1)).append('\n');
					}
				}
				List<String> indexes = new ArrayList<>();
				Matcher m = index.matcher(plan);
				while (m.find()) {
					String name = (m.group(1) != null) ? m.group(1) : m.group(2);
					if (!indexes.contains(name)) {
						indexes.add(name);
					}
				}
				boolean seq = plan.toString().contains("Seq Scan on eec_effect_intent");
				section.add("| " + query.getKey() + " | " + String.join(", ", indexes) + " | "
						+ (seq ? "**yes**" : "no") + " |");
				Bench.progress(SCENARIO + ": plan of " + query.getKey() + ": " + indexes + (seq ? " SEQ SCAN" : ""));
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
		this.bench.report.section(section.toString());
	}

	private static int get(HttpClient http, String url) {
		try {
			return http
				.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.discarding())
				.statusCode();
		}
		catch (IOException ex) {
			throw new IllegalStateException(url + ": " + ex.getMessage(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static String encode(Object value) {
		return URLEncoder.encode(String.valueOf(value), StandardCharsets.UTF_8);
	}

	private static double median(List<Double> sorted) {
		int n = sorted.size();
		return (n % 2 == 1) ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
	}

	/** A web application with Ductor, its endpoint, the console and a limited effect. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class ConsoleApplication {

		@Bean
		LegacySystem legacySystem() {
			return new LegacySystem();
		}

	}

	/** A receiver that takes eight calls at once. */
	static class LegacySystem {

		@DurableEffect(name = "legacy.submit", maxConcurrency = 8)
		public void submit(String order) {
		}

	}

}
