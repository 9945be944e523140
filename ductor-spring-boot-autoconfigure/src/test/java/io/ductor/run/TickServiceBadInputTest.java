package io.ductor.run;

import java.util.Map;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import io.ductor.internal.Ids;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.SchemaMode;
import io.ductor.json.JsonConversionException;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Bad input gets a clear exception and writes nothing. */
class TickServiceBadInputTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static HikariDataSource dataSource;

	static TickService ticks;

	static RunTables tables;

	static String runId;

	Map<String, Object> before;

	@BeforeAll
	static void migrate() {
		dataSource = postgres.newDataSource(4);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		ticks = TickServiceTest.tickService(dataSource, 20);
		tables = new RunTables(dataSource);
		tables.createSideTable();
		runId = "run-" + UUID.randomUUID();
		ticks.start("counter", runId, new Counter(0));
		ticks.tick(runId, "first", Counter.class, (state, tick) -> state.plus(1));
	}

	@AfterAll
	static void close() {
		dataSource.close();
	}

	@BeforeEach
	void snapshot() {
		this.before = tables.snapshot();
	}

	@AfterEach
	void nothingWasWritten() {
		assertThat(tables.snapshot()).isEqualTo(this.before);
	}

	@ParameterizedTest
	@NullAndEmptySource
	@ValueSource(strings = { " ", "\t\n" })
	void nullOrBlankRunIdIsRefused(String bad) {
		assertThatIllegalArgumentException().isThrownBy(() -> addOne(bad, "stamp"))
			.withMessageStartingWith("runId must not be");
		assertThatIllegalArgumentException().isThrownBy(() -> ticks.start("counter", bad, new Counter(0)))
			.withMessageStartingWith("runId must not be");
	}

	@ParameterizedTest
	@NullAndEmptySource
	@ValueSource(strings = { " ", "\t\n" })
	void nullOrBlankStampIsRefused(String bad) {
		assertThatIllegalArgumentException().isThrownBy(() -> addOne(runId, bad))
			.withMessageStartingWith("stamp must not be");
	}

	@Test
	void idsLongerThanTheLimitAreRefused() {
		String tooLong = "x".repeat(Ids.MAX_LENGTH + 1);
		assertThatIllegalArgumentException().isThrownBy(() -> addOne(tooLong, "stamp"))
			.withMessageContaining("runId must be at most " + Ids.MAX_LENGTH + " characters but has 201");
		assertThatIllegalArgumentException().isThrownBy(() -> addOne(runId, tooLong))
			.withMessageContaining("stamp must be at most 200 characters");
		assertThatIllegalArgumentException().isThrownBy(() -> ticks.start(tooLong, "other-run", new Counter(0)))
			.withMessageContaining("type must be at most 200 characters");
		// the limit itself is fine
		assertThat(addOne(runId, "s".repeat(Ids.MAX_LENGTH)).result()).isEqualTo(TickOutcome.Result.APPLIED);
		this.before = tables.snapshot();
	}

	@Test
	void controlCharactersInIdsAreRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> addOne(runId, "stamp\u0000"))
			.withMessage("stamp must not contain control characters, found U+0000 at index 5");
	}

	@Test
	void unpairedSurrogatesInIdsAreRefusedButRealSupplementaryCharactersAreFine() {
		assertThatIllegalArgumentException().isThrownBy(() -> ticks.start("counter", "lone-\uD800", new Counter(0)))
			.withMessage("runId must be valid Unicode, found an unpaired surrogate U+D800 at index 5");
		assertThatIllegalArgumentException().isThrownBy(() -> addOne(runId, "\uDC00-first"))
			.withMessageContaining("unpaired surrogate U+DC00 at index 0");
		assertThat(addOne(runId, "emoji-\uD83D\uDE00").result()).isEqualTo(TickOutcome.Result.APPLIED);
		this.before = tables.snapshot();
	}

	@Test
	void tickingAnUnknownRunIsRefused() {
		assertThatThrownBy(() -> addOne("never-started", "stamp")).isInstanceOf(UnknownRunException.class)
			.hasMessageContaining("No run with id 'never-started'");
	}

	@Test
	void startingAnExistingRunIdWithAnotherTypeIsRefused() {
		assertThatThrownBy(() -> ticks.start("order", runId, new Counter(0)))
			.isInstanceOf(RunTypeMismatchException.class)
			.hasMessageContaining("already exists with type 'counter'")
			.hasMessageContaining("cannot start it as 'order'");
	}

	@Test
	void aStateThatCannotBeSerializedIsRefused() {
		assertThatThrownBy(() -> ticks.start("counter", "unserializable", new Unserializable()))
			.isInstanceOf(JsonConversionException.class)
			.hasMessageContaining("initial state of run 'unserializable'")
			.hasMessageContaining(Unserializable.class.getName());
		assertThatThrownBy(() -> ticks.tick(runId, "bad-state", Object.class, (state, tick) -> {
			tables.writeSideRow(runId);
			return new Unserializable();
		})).isInstanceOf(JsonConversionException.class).hasMessageContaining("state of run '" + runId + "'");
		assertThatThrownBy(() -> ticks.tick(runId, "bad-input", new Unserializable(), Counter.class,
				(state, tick) -> state.plus(1)))
			.isInstanceOf(JsonConversionException.class)
			.hasMessageContaining("input of tick 'bad-input'");
	}

	@Test
	void aStateThatCannotBeReadAsTheRequestedTypeIsRefused() {
		assertThatThrownBy(() -> ticks.tick(runId, "wrong-type", Integer.class, (state, tick) -> state + 1))
			.isInstanceOf(JsonConversionException.class)
			.hasMessageContaining("Cannot read state of run '" + runId + "' as java.lang.Integer");
	}

	@Test
	void nullStepOrStateTypeIsRefused() {
		assertThatThrownBy(() -> ticks.tick(runId, "s", Counter.class, null)).isInstanceOf(NullPointerException.class)
			.hasMessage("step must not be null");
		assertThatThrownBy(() -> ticks.tick(runId, "s", null, (state, tick) -> state))
			.isInstanceOf(NullPointerException.class)
			.hasMessage("stateType must not be null");
	}

	@Test
	void failingARunWithoutAReasonIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> ticks.tick(runId, "fail", Counter.class, (state, tick) -> {
				tick.fail(" ");
				return state;
			}))
			.withMessage("reason must not be blank");
	}

	private static TickOutcome<Counter> addOne(String runId, String stamp) {
		return ticks.tick(runId, stamp, Counter.class, (state, tick) -> state.plus(1));
	}

	/** Jackson cannot write a value whose property getter throws. */
	public static final class Unserializable {

		public String getBroken() {
			throw new IllegalStateException("not serializable");
		}

	}

}
