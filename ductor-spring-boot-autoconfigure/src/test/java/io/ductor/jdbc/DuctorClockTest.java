package io.ductor.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.postgresql.PGConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ductor reads the time only through {@code ductor_now()} and {@code ductor_clock()}
 * (migrations V11 and V12), so that a test can move Ductor's clock: no plain
 * {@code now()} or {@code clock_timestamp()} in its SQL, its column defaults or its
 * functions; the two functions are inlined by the planner, so that a statement plans as
 * it did with {@code now()}; and the clock moves for the session that sets
 * {@code ductor.clock} only, statements it prepared included.
 */
class DuctorClockTest {

	/** A time function of PostgreSQL not reached through Ductor's clock. */
	static final Pattern SERVER_CLOCK = Pattern.compile(
			"(?i)(?<![\\w.])(now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday)\\s*\\(\\s*\\)"
					+ "|(?<!\\w)(current_timestamp|localtimestamp)(?!\\w)");

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static DataSource dataSource;

	@BeforeAll
	static void migrate() {
		dataSource = postgres.dataSource();
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
	}

	@Test
	void ductorsJavaCodeReadsTheTimeOnlyThroughDuctorsClock() throws IOException {
		List<String> offenders = new ArrayList<>();
		try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
			files.filter((file) -> file.toString().endsWith(".java")).forEach((file) -> offenders.addAll(scan(file)));
		}
		assertThat(offenders).as("SQL reading the server's clock instead of ductor_now() / ductor_clock()").isEmpty();
	}

	@Test
	void theScanFindsAPlainNowInSql() {
		assertThat(SERVER_CLOCK.matcher("SET updated_at = now() WHERE").find()).isTrue();
		assertThat(SERVER_CLOCK.matcher("lease_expires_at < CURRENT_TIMESTAMP").find()).isTrue();
		assertThat(SERVER_CLOCK.matcher("clock_timestamp() + ?").find()).isTrue();
		assertThat(SERVER_CLOCK.matcher("ductor_now() + ductor_clock() and Instant.now()").find()).isFalse();
	}

	@Test
	void noColumnDefaultOfDuctorsTablesReadsTheServersClock() {
		List<String> defaults = JdbcClient.create(dataSource)
			.sql("""
					SELECT c.relname || '.' || a.attname || ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid)
					FROM pg_attrdef d
					JOIN pg_class c ON c.oid = d.adrelid
					JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
					WHERE c.relname LIKE 'eec\\_%' AND c.relnamespace = current_schema()::regnamespace""")
			.query(String.class)
			.list();
		assertThat(defaults).anyMatch((column) -> column.contains("ductor_now()"))
			.noneMatch((column) -> SERVER_CLOCK.matcher(column.replace("ductor_now()", "")).find());
	}

	@Test
	void noFunctionOfDuctorsSchemaReadsTheServersClockButTheClockItself() {
		List<String> functions = JdbcClient.create(dataSource)
			.sql("""
					SELECT proname || ': ' || prosrc FROM pg_proc
					WHERE pronamespace = current_schema()::regnamespace AND proname NOT IN ('ductor_now', 'ductor_clock')""")
			.query(String.class)
			.list();
		assertThat(functions).isNotEmpty().noneMatch((function) -> SERVER_CLOCK.matcher(function).find());
	}

	@Test
	void ductorsClockIsInlinedSoAStatementPlansAsItDidWithNow() {
		JdbcClient jdbc = JdbcClient.create(dataSource);
		String withClock = plan(jdbc,
				"SELECT id FROM eec_effect_intent WHERE queue_status = 'pending' AND next_attempt_at <= ductor_now()"
						+ " ORDER BY next_attempt_at, id LIMIT 10");
		String withNow = plan(jdbc,
				"SELECT id FROM eec_effect_intent WHERE queue_status = 'pending' AND next_attempt_at <= now()"
						+ " ORDER BY next_attempt_at, id LIMIT 10");
		// the inlined body reads the session's setting, then falls back to the server's
		// clock: the same plan, the same index condition
		assertThat(withClock).doesNotContain("ductor_now").contains("Index Cond").contains("current_setting");
		assertThat(INLINED_CLOCK.matcher(withClock).replaceAll("$1")).isEqualTo(withNow);
		String difference = plan(jdbc, "SELECT ductor_clock() - ductor_now()");
		assertThat(difference).doesNotContain("ductor_");
		assertThat(INLINED_CLOCK.matcher(difference).replaceAll("$1")).contains("(clock_timestamp() - now())");
	}

	@Test
	void theClockMovesForTheSessionThatSetsItOnlyPreparedStatementsIncluded() throws SQLException {
		try (Connection moved = dataSource.getConnection(); Connection other = dataSource.getConnection()) {
			moved.unwrap(PGConnection.class).setPrepareThreshold(1);
			try (PreparedStatement now = moved.prepareStatement("SELECT ductor_now(), ductor_clock()")) {
				for (int i = 0; i < 10; i++) {
					// past the five custom plans after which the server may keep a
					// generic
					// one
					assertThat(abs(read(now, 1), serverTime(moved))).isLessThan(Duration.ofMinutes(1));
				}
				setClock(moved, "2031-02-03T04:05:06.123456Z");
				assertThat(read(now, 1)).isEqualTo(Instant.parse("2031-02-03T04:05:06.123456Z"));
				assertThat(read(now, 2)).isEqualTo(Instant.parse("2031-02-03T04:05:06.123456Z"));
				assertThat(abs(read(other, "SELECT ductor_now()"), serverTime(other)))
					.isLessThan(Duration.ofMinutes(1));
				setClock(moved, "");
				assertThat(abs(read(now, 1), serverTime(moved))).isLessThan(Duration.ofMinutes(1));
			}
		}
	}

	private static void setClock(Connection connection, String instant) throws SQLException {
		try (PreparedStatement set = connection.prepareStatement("SELECT set_config('ductor.clock', ?, false)")) {
			set.setString(1, instant);
			set.execute();
		}
	}

	private static Instant serverTime(Connection connection) throws SQLException {
		return read(connection, "SELECT clock_timestamp()");
	}

	private static Instant read(Connection connection, String sql) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			return read(statement, 1);
		}
	}

	private static Instant read(PreparedStatement statement, int column) throws SQLException {
		try (ResultSet row = statement.executeQuery()) {
			row.next();
			return row.getObject(column, OffsetDateTime.class).toInstant();
		}
	}

	private static Duration abs(Instant one, Instant other) {
		return Duration.between(one, other).abs();
	}

	/** The body of either function as the planner inlines it; group 1 is its fallback. */
	static final Pattern INLINED_CLOCK = Pattern
		.compile("COALESCE\\(\\(NULLIF\\(current_setting\\('ductor\\.clock'::text, "
				+ "true\\), ''::text\\)\\)::timestamp with time zone, (now\\(\\)|clock_timestamp\\(\\))\\)");

	private static String plan(JdbcClient jdbc, String sql) {
		return String.join("\n", jdbc.sql("EXPLAIN (COSTS OFF, VERBOSE) " + sql).query(String.class).list());
	}

	private static List<String> scan(Path file) {
		try {
			List<String> found = new ArrayList<>();
			List<String> lines = Files.readAllLines(file);
			for (int i = 0; i < lines.size(); i++) {
				Matcher matcher = SERVER_CLOCK.matcher(lines.get(i));
				if (matcher.find()) {
					found.add(file + ":" + (i + 1) + ": " + lines.get(i).trim());
				}
			}
			return found;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
