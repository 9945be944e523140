package io.ductor.reliability;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import io.ductor.idempotency.web.Idempotent;
import io.ductor.reliability.BookingClients.Answer;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The booking storm: a booking application written from the README
 * ({@code POST /bookings}, {@code @Idempotent}, a row and a {@code @DurableEffect} hold
 * per booking) under clients that send every key several times at once and retry on
 * connection errors, 409 and 5xx, while its JVM is killed with SIGKILL (or every
 * connection of two instances is terminated). Judged per key, in SQL and in what the
 * clients got: one booking, one hold intent, one hold at the hotel, and one booking id in
 * every answer.
 */
class BookingStormTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	/** The size of a storm in the short and the long profile. */
	record Storm(int minimumKeys, int copies, int keysInFlight, int faults, int pauseMinMillis, int pauseMaxMillis) {

		static Storm kills() {
			return "chaos".equals(Scale.current().name()) ? new Storm(2000, 3, 16, 12, 500, 2000)
					: new Storm(300, 3, 16, 3, 500, 1500);
		}

		static Storm connectionFaults() {
			return "chaos".equals(Scale.current().name()) ? new Storm(2000, 3, 16, 20, 800, 2000)
					: new Storm(300, 3, 16, 5, 800, 1400);
		}

	}

	/**
	 * What the two-phase mode's documented crash window does to the bookings. Judged per
	 * key, like every storm; the window's consequences are asserted to be found,
	 * everything else to be 0.
	 */
	static final Set<String> TWO_PHASE_WINDOW = Set.of("keys with two or more bookings (must be 0)",
			"keys answered with two different booking ids (must be 0)",
			"keys whose bookings have other than one hold intent (must be 0)",
			"keys whose bookings have other than one hold at the hotel (must be 0)",
			"keys with a booking whose reservation is not completed (must be 0)");

	@Test
	void killedDuringTheStormEveryKeyHasOneBookingOneHoldAndOneAnsweredId() throws Exception {
		killStorm("Booking storm, kill -9", "booking-storm-kill", "/bookings", Idempotent.DEFAULT_POOL,
				BookingStormTest::assertMustBeZero);
	}

	/**
	 * The same storm on {@code @Idempotent(mode = TWO_PHASE)}, whose crash window is
	 * documented: a booking committed before a kill and its pending reservation swept
	 * lets a retry book again. It keeps the harness honest: if the judge stopped finding
	 * that window, it would no longer prove that the default mode closes it.
	 */
	@Test
	@Tag("long")
	void killedDuringTheStormTheTwoPhaseModeShowsItsDocumentedWindow() throws Exception {
		killStorm("Booking storm, kill -9, two-phase mode", "booking-storm-kill-two-phase", "/two-phase/bookings",
				Idempotent.DEFAULT_POOL, BookingStormTest::assertTwoPhaseWindowFound);
	}

	/**
	 * The same storm on the README's one-transaction form from code
	 * ({@code IdempotencyService.executeInTransaction}): the control that shows the judge
	 * passes an implementation that commits the booking and its decision together.
	 */
	@Test
	@Tag("long")
	void killedDuringTheStormTheOneTransactionFormKeepsOneBookingPerKey() throws Exception {
		killStorm("Booking storm, kill -9, one-transaction form", "booking-storm-kill-one-transaction",
				"/one-transaction/bookings", "bookings", BookingStormTest::assertMustBeZero);
	}

	private void killStorm(String scenario, String directoryName, String path, String pool,
			java.util.function.Consumer<Map<String, Object>> verdict) throws Exception {
		Storm storm = Storm.kills();
		TestDatabase database = postgres.database();
		createSchema(postgres.dataSource());
		Path directory = Report.directory(directoryName);
		Random random = new Random(20261201L);
		int port = Workload.freePort();
		List<BookingInstance> up = new CopyOnWriteArrayList<>();
		AtomicBoolean faulting = new AtomicBoolean(true);
		List<Duration> restarts = new ArrayList<>();
		long start = System.nanoTime();
		BookingInstance instance = BookingInstance.launch(directory, database, "a-g0", port);
		try {
			instance.awaitReady(Duration.ofSeconds(90));
			up.add(instance);
			try (BookingClients clients = new BookingClients(directoryName, path, () -> up, storm.copies(),
					storm.keysInFlight(), storm.minimumKeys(), faulting::get, Duration.ofSeconds(240))) {
				for (int kill = 1; kill <= storm.faults(); kill++) {
					// not a wait: a random moment for the next kill
					Thread.sleep(
							storm.pauseMinMillis() + random.nextInt(storm.pauseMaxMillis() - storm.pauseMinMillis()));
					up.clear();
					instance.kill();
					instance = BookingInstance.launch(directory, database, "a-g" + kill, port);
					restarts.add(instance.awaitReady(Duration.ofSeconds(90)));
					up.add(instance);
				}
				faulting.set(false);
				boolean settled = clients.awaitSettled();
				Duration stormTime = Duration.ofNanos(System.nanoTime() - start);
				Map<String, Object> figures = judge(postgres.dataSource(), clients, pool);
				Report report = new Report(scenario).parameter("endpoint", "POST " + path)
					.parameter("kills (SIGKILL)", storm.faults())
					.parameter("time between ready and kill",
							storm.pauseMinMillis() + " to " + storm.pauseMaxMillis() + " ms, random (seed 20261201)")
					.parameter("clients",
							storm.copies() + " per key at once, at most " + storm.keysInFlight()
									+ " keys unanswered; retry on connection error, 409 and 5xx")
					.parameter("booking.yml", "pending-ttl 2s, sweeper 250ms, wait-timeout 1s")
					.figure("kills survived", storm.faults())
					.figure("restart to ready (JVM start)", Report.spread(restarts))
					.figure("storm and settle", Report.millis(stormTime))
					.figure("every client stopped before its timeout", settled);
				report.figures(figures).write();
				verdict.accept(figures);
				assertThat(settled).as("every client got an answer before its timeout").isTrue();
			}
		}
		finally {
			instance.close();
		}
	}

	@Test
	void connectionsTerminatedUnderTwoInstancesEveryKeyHasOneBookingOneHoldAndOneAnsweredId() throws Exception {
		Storm storm = Storm.connectionFaults();
		TestDatabase database = postgres.database();
		createSchema(postgres.dataSource());
		Path directory = Report.directory("booking-storm-terminate");
		Random random = new Random(20261202L);
		List<BookingInstance> up = new CopyOnWriteArrayList<>();
		AtomicBoolean faulting = new AtomicBoolean(true);
		long start = System.nanoTime();
		BookingInstance a = BookingInstance.launch(directory, database, "a", Workload.freePort());
		BookingInstance b = BookingInstance.launch(directory, database, "b", Workload.freePort());
		try {
			a.awaitReady(Duration.ofSeconds(90));
			b.awaitReady(Duration.ofSeconds(90));
			up.addAll(List.of(a, b));
			long terminated = 0;
			try (BookingClients clients = new BookingClients("term", "/bookings", () -> up, storm.copies(),
					storm.keysInFlight(), storm.minimumKeys(), faulting::get, Duration.ofSeconds(240))) {
				for (int fault = 1; fault <= storm.faults(); fault++) {
					// not a wait: a random moment for the next fault
					Thread.sleep(
							storm.pauseMinMillis() + random.nextInt(storm.pauseMaxMillis() - storm.pauseMinMillis()));
					terminated += TestDatabases.terminateConnections(database,
							BookingInstance.APPLICATION_NAME_PREFIX + "%");
				}
				faulting.set(false);
				boolean settled = clients.awaitSettled();
				Duration stormTime = Duration.ofNanos(System.nanoTime() - start);
				Map<String, Object> figures = judge(postgres.dataSource(), clients, Idempotent.DEFAULT_POOL);
				Report report = new Report("Booking storm, connections terminated")
					.parameter("faults",
							storm.faults() + " x pg_terminate_backend of every connection of both instances")
					.parameter("time between faults",
							storm.pauseMinMillis() + " to " + storm.pauseMaxMillis() + " ms, random (seed 20261202)")
					.parameter("clients",
							storm.copies() + " per key at once, spread over 2 instances, at most "
									+ storm.keysInFlight() + " keys unanswered; retry on connection error, 409 and 5xx")
					.parameter("booking.yml", "pending-ttl 2s, sweeper 250ms, wait-timeout 1s")
					.figure("faults survived", storm.faults())
					.figure("backends terminated", terminated)
					.figure("storm and settle", Report.millis(stormTime))
					.figure("every client stopped before its timeout", settled);
				report.figures(figures).write();
				assertMustBeZero(figures);
				assertThat(settled).as("every client got an answer before its timeout").isTrue();
			}
		}
		finally {
			a.close();
			b.close();
		}
	}

	/**
	 * The application's own schema script, run before its instances start (they run it
	 * again, harmlessly), and empty tables: the scenarios of this class share one
	 * database.
	 */
	static void createSchema(DataSource dataSource) {
		new ResourceDatabasePopulator(new ClassPathResource("booking/schema.sql")).execute(dataSource);
		JdbcClient jdbc = JdbcClient.create(dataSource);
		jdbc.sql("TRUNCATE booking, hotel_hold").update();
		if (jdbc.sql("SELECT to_regclass('eec_effect_intent') IS NOT NULL").query(Boolean.class).single()) {
			jdbc.sql("TRUNCATE eec_effect_intent, eec_routing_idempotency").update();
		}
	}

	/**
	 * Waits for the holds to drain, then judges every key the clients issued, with its
	 * reservation in {@code pool}.
	 */
	static Map<String, Object> judge(DataSource dataSource, BookingClients clients, String pool)
			throws InterruptedException {
		JdbcClient jdbc = JdbcClient.create(dataSource);
		try {
			Awaitility.await()
				.atMost(Duration.ofSeconds(60))
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(200))
				.until(() -> jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('pending', 'in_flight')")
					.query(Long.class)
					.single() == 0);
		}
		catch (ConditionTimeoutException ex) {
			// judged below: what did not settle shows in the figures
		}
		Map<String, List<String[]>> bookings = new HashMap<>();
		jdbc.sql("SELECT request_key, id, made_by FROM booking ORDER BY created_at").query((rs) -> {
			bookings.computeIfAbsent(rs.getString(1), (k) -> new ArrayList<>())
				.add(new String[] { rs.getString(2), rs.getString(3) });
		});
		Map<String, Long> intents = new HashMap<>();
		jdbc.sql("""
				SELECT b.request_key, count(i.id) FROM booking b
				LEFT JOIN eec_effect_intent i ON i.idempotency_key = 'hold:' || b.id GROUP BY b.request_key""")
			.query((rs) -> {
				intents.put(rs.getString(1), rs.getLong(2));
			});
		Map<String, Long> holds = new HashMap<>();
		jdbc.sql("""
				SELECT b.request_key, count(h.hold_key) FROM booking b
				LEFT JOIN hotel_hold h ON h.booking_id = b.id GROUP BY b.request_key""").query((rs) -> {
			holds.put(rs.getString(1), rs.getLong(2));
		});
		Map<String, String> reservations = new HashMap<>();
		jdbc.sql("SELECT idempotency_key, status FROM eec_routing_idempotency WHERE pool_id = ?")
			.param(pool)
			.query((rs) -> {
				reservations.put(rs.getString(1), rs.getString(2));
			});
		long answered = 0;
		long firstAnswers = 0;
		long replays = 0;
		long unexpected = 0;
		Set<String> unanswered = new TreeSet<>();
		Set<String> twoBookings = new TreeSet<>();
		Set<String> twoBookingsOneStart = new TreeSet<>();
		Set<String> noBooking = new TreeSet<>();
		Set<String> twoIds = new TreeSet<>();
		Set<String> strangerId = new TreeSet<>();
		Set<String> intentsNotOne = new TreeSet<>();
		Set<String> holdsNotOne = new TreeSet<>();
		Set<String> pending = new TreeSet<>();
		Set<String> releasedAfterBooking = new TreeSet<>();
		List<String> examples = new ArrayList<>();
		for (Map.Entry<String, Queue<Answer>> entry : clients.answers.entrySet()) {
			String key = entry.getKey();
			List<Answer> got = List.copyOf(entry.getValue());
			List<String[]> rows = bookings.getOrDefault(key, List.of());
			Set<String> ids = got.stream()
				.map(Answer::id)
				.filter(java.util.Objects::nonNull)
				.collect(Collectors.toSet());
			Set<String> bookingIds = rows.stream().map((row) -> row[0]).collect(Collectors.toSet());
			if (got.isEmpty()) {
				unanswered.add(key);
			}
			else {
				answered++;
			}
			for (Answer answer : got) {
				if (answer.status() != 201 || answer.id() == null) {
					unexpected++;
				}
				else if (answer.replayed()) {
					replays++;
				}
				else {
					firstAnswers++;
				}
			}
			if (rows.size() > 1) {
				twoBookings.add(key);
				if (rows.stream().map((row) -> row[1]).distinct().count() == 1) {
					twoBookingsOneStart.add(key);
				}
			}
			if (rows.isEmpty() && !got.isEmpty()) {
				noBooking.add(key);
			}
			if (ids.size() > 1) {
				twoIds.add(key);
			}
			if (!bookingIds.containsAll(ids)) {
				strangerId.add(key);
			}
			if (!rows.isEmpty() && intents.getOrDefault(key, 0L) != 1) {
				intentsNotOne.add(key);
			}
			if (!rows.isEmpty() && holds.getOrDefault(key, 0L) != 1) {
				holdsNotOne.add(key);
			}
			String reservation = reservations.get(key);
			if ("pending".equals(reservation)) {
				pending.add(key);
			}
			if (!rows.isEmpty() && !"completed".equals(reservation)) {
				releasedAfterBooking.add(key);
			}
			if ((rows.size() > 1 || ids.size() > 1) && examples.size() < 5) {
				examples.add(key + ": bookings " + rows.stream().map((row) -> row[0] + " by " + row[1]).toList()
						+ ", answers " + got);
			}
		}
		Map<String, Object> f = new LinkedHashMap<>();
		f.put("keys issued", (long) clients.keysIssued.get());
		f.put("keys answered", answered);
		f.put("HTTP sends, retries included", clients.sends.get());
		f.put("connection errors retried", clients.connectionErrors.get());
		f.put("409 retried", clients.conflicts.get());
		f.put("5xx retried", clients.serverErrors.get());
		f.put("answers: first (201)", firstAnswers);
		f.put("answers: replayed (201, Idempotency-Replayed)", replays);
		f.put("booking rows",
				clients.answers.keySet()
					.stream()
					.mapToLong((key) -> bookings.getOrDefault(key, List.of()).size())
					.sum());
		f.put("keys never answered (must be 0)", (long) unanswered.size());
		f.put("answers other than 201 with an id (must be 0)", unexpected);
		f.put("keys with two or more bookings (must be 0)", (long) twoBookings.size());
		f.put("of which both bookings were made by one instance start", (long) twoBookingsOneStart.size());
		f.put("keys answered with two different booking ids (must be 0)", (long) twoIds.size());
		f.put("keys answered with an id that is not their booking (must be 0)", (long) strangerId.size());
		f.put("keys answered without a booking (must be 0)", (long) noBooking.size());
		f.put("keys whose bookings have other than one hold intent (must be 0)", (long) intentsNotOne.size());
		f.put("keys whose bookings have other than one hold at the hotel (must be 0)", (long) holdsNotOne.size());
		f.put("keys with a booking whose reservation is not completed (must be 0)", (long) releasedAfterBooking.size());
		f.put("reservations left pending (must be 0)", (long) pending.size());
		f.put("hold calls collapsed by the hotel",
				jdbc.sql("SELECT coalesce(sum(calls - 1), 0) FROM hotel_hold").query(Long.class).single());
		f.put("intents not completed",
				jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status <> 'completed'")
					.query(Long.class)
					.single());
		if (!examples.isEmpty()) {
			f.put("examples", String.join("; ", examples));
		}
		return f;
	}

	/**
	 * The two-phase window was found (some key has two bookings), and nothing else broke:
	 * every key answered with its own booking's id, no reservation left pending.
	 */
	static void assertTwoPhaseWindowFound(Map<String, Object> figures) {
		assertThat((Long) figures.get("keys with two or more bookings (must be 0)"))
			.as("the storm finds the two-phase window (keys with two bookings); all figures: " + figures)
			.isPositive();
		Map<String, Object> others = new LinkedHashMap<>(figures);
		others.keySet().removeAll(TWO_PHASE_WINDOW);
		assertMustBeZero(others);
	}

	static void assertMustBeZero(Map<String, Object> figures) {
		Map<String, Object> broken = new LinkedHashMap<>();
		figures.forEach((name, value) -> {
			if (name.contains("(must be 0)") && ((Long) value) != 0) {
				broken.put(name, value);
			}
		});
		assertThat(broken).as("promises broken; all figures: " + figures).isEmpty();
	}

}
