package io.ductor.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ductor reads the time only through {@code ductor_now()} and {@code ductor_clock()}
 * (migration V11), so that a test can move Ductor's clock: no plain {@code now()} or
 * {@code clock_timestamp()} in its SQL, its column defaults or its functions, and the two
 * functions are inlined by the planner, so that a statement plans as it did with
 * {@code now()}.
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
				"SELECT id FROM eec_effect_intent WHERE status = 'pending' AND next_attempt_at <= ductor_now()"
						+ " ORDER BY next_attempt_at, id LIMIT 10");
		String withNow = plan(jdbc,
				"SELECT id FROM eec_effect_intent WHERE status = 'pending' AND next_attempt_at <= now()"
						+ " ORDER BY next_attempt_at, id LIMIT 10");
		assertThat(withClock).isEqualTo(withNow).doesNotContain("ductor_now");
		assertThat(plan(jdbc, "SELECT ductor_clock() - ductor_now()")).doesNotContain("ductor_");
	}

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
