package io.ductor.effect.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.EffectStatus;
import io.ductor.internal.DbValues;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The named sets of intent statuses say what the schema says (the generated columns and
 * the partial indexes that Ductor's statements read through them), and no statement of
 * the shipped modules spells a list of statuses by hand.
 */
class IntentStatusesTest {

	private static final List<String> SHIPPED_MODULES = List.of("ductor-spring-boot-autoconfigure",
			"ductor-spring-boot-console", "ductor-spring-boot-kafka", "ductor-spring-boot-amqp",
			"ductor-spring-modulith", "ductor-spring-boot-test");

	@Test
	void setsFollowTheLifeOfAnIntent() {
		assertThat(EnumSet.copyOf(IntentStatuses.LIVE))
			.isEqualTo(EnumSet.complementOf(EnumSet.copyOf(IntentStatuses.FINISHED)));
		assertThat(IntentStatuses.LIVE).containsAll(IntentStatuses.PARKED)
			.containsAll(IntentStatuses.WAITING)
			.containsAll(IntentStatuses.STARTED)
			.containsAll(IntentStatuses.MAY_STILL_RUN);
		assertThat(IntentStatuses.ENDED).containsAll(IntentStatuses.FINISHED).contains(EffectStatus.FAILED);
		assertThat(IntentStatuses.MAY_STILL_RUN).doesNotContain(EffectStatus.FAILED)
			.contains(EffectStatus.NEEDS_DECISION, EffectStatus.RECONCILING, EffectStatus.IN_FLIGHT);
		assertThat(IntentStatuses.PARKED_SQL).isEqualTo("('failed', 'needs_decision')");
	}

	@Test
	void setsAreWhatTheSchemaDerivesAndTheirSqlReadsThePartialIndexes() throws SQLException {
		TestDatabase database = TestDatabases.create();
		try (HikariDataSource dataSource = database.newDataSource(2)) {
			Flyway.configure()
				.dataSource(dataSource)
				.locations(DuctorSchema.LOCATION)
				.table(DuctorSchema.HISTORY_TABLE)
				.load()
				.migrate();
			JdbcClient jdbc = JdbcClient.create(dataSource);
			for (EffectStatus status : EffectStatus.values()) {
				// an attempt in flight that the sweep watches, with no ordering key nor
				// alarm: the case in which queue_status leaves it out
				jdbc.sql("""
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint,
						    max_attempts, status, attempts, lease_swept, lease_owner, lease_expires_at)
						VALUES ('statuses', :status, '[]', 'f', 3, :status, 1, true,
						    CASE WHEN :status = 'in_flight' THEN 'drainer' END,
						    CASE WHEN :status = 'in_flight' THEN now() + interval '1 minute' END)""")
					.param("status", DbValues.of(status))
					.update();
			}
			assertThat(statuses(jdbc, "queue_status IS NOT NULL")).isEqualTo(IntentStatuses.WAITING);
			assertThat(statuses(jdbc, "parked_at IS NOT NULL")).isEqualTo(IntentStatuses.PARKED);

			assertThat(plan(dataSource,
					"SELECT id FROM eec_effect_intent WHERE queue_status IN " + IntentStatuses.PARKED_SQL
							+ " ORDER BY queue_status, parked_at"))
				.containsPattern("Scan (on|using) eec_effect_intent_parked(_effect)?_idx");
			assertThat(plan(dataSource,
					"SELECT id FROM eec_effect_intent WHERE queue_status = 'failed' AND queue_status IN "
							+ IntentStatuses.WAITING_SQL + " ORDER BY id"))
				.containsPattern("Scan (on|using) eec_effect_intent_live_id_idx");
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	@Test
	void noStatementOfTheShippedModulesSpellsAListOfStatuses() throws IOException {
		String literal = Stream.of(EffectStatus.values())
			.map(DbValues::of)
			.collect(Collectors.joining("|", "'(?:", ")'"));
		// a list of intent statuses only: the lists of an idempotency record's statuses
		// (pending, completed, failed_before_commit) are another table's
		Pattern handWritten = Pattern.compile("IN\\s*\\(\\s*" + literal + "(?:\\s*,\\s*" + literal + ")*\\s*\\)",
				Pattern.CASE_INSENSITIVE);
		Path root = Path.of("").toAbsolutePath().getParent();
		List<String> found = new ArrayList<>();
		for (String module : SHIPPED_MODULES) {
			Path sources = root.resolve(module).resolve("src/main/java");
			assertThat(sources).isDirectory();
			try (Stream<Path> files = Files.walk(sources)) {
				files.filter((file) -> file.toString().endsWith(".java")).forEach((file) -> {
					Matcher matcher = handWritten.matcher(read(file));
					while (matcher.find()) {
						found.add(root.relativize(file) + ": " + matcher.group());
					}
				});
			}
		}
		assertThat(found).as("status lists written by hand instead of IntentStatuses").isEmpty();
	}

	private static Set<EffectStatus> statuses(JdbcClient jdbc, String condition) {
		return jdbc.sql("SELECT status FROM eec_effect_intent WHERE " + condition)
			.query((rs, row) -> DbValues.parse(EffectStatus.class, rs.getString(1)))
			.set();
	}

	private static String plan(DataSource dataSource, String query) throws SQLException {
		// a table scan disabled: the plan reads the index only when the list implies the
		// index's predicate
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute("SET enable_seqscan = off");
			StringBuilder plan = new StringBuilder();
			try (ResultSet rows = statement.executeQuery("EXPLAIN " + query)) {
				while (rows.next()) {
					plan.append(rows.getString(1)).append('\n');
				}
			}
			statement.execute("RESET enable_seqscan");
			return plan.toString();
		}
	}

	private static String read(Path file) {
		try {
			return Files.readString(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
