package io.ductor.run;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.Concurrently;
import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.json.internal.JsonCodec;
import io.ductor.run.internal.DefaultTickService;
import io.ductor.run.internal.RunningTick;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.Backoff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TickServiceTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static HikariDataSource dataSource;

	static TickService ticks;

	static RunTables tables;

	@BeforeAll
	static void migrate() {
		dataSource = postgres.newDataSource(24);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		ticks = tickService(dataSource, 20);
		tables = new RunTables(dataSource);
		tables.createSideTable();
	}

	@AfterAll
	static void close() {
		dataSource.close();
	}

	static TickService tickService(DataSource dataSource, int maxAttempts) {
		return new DefaultTickService(dataSource, new DataSourceTransactionManager(dataSource),
				new io.ductor.run.internal.RunStore(org.springframework.jdbc.core.simple.JdbcClient.create(dataSource)),
				new JsonCodec(JsonMapper.builder().build()), maxAttempts,
				new Backoff(Duration.ofMillis(5), Duration.ofMillis(200), 2.0),
				io.ductor.observation.internal.DuctorInstrumentation.NOOP,
				io.ductor.run.internal.RunFailureHandler.NONE);
	}

	static String newRun() {
		String runId = "run-" + UUID.randomUUID();
		assertThat(ticks.start("counter", runId, new Counter(0))).isEqualTo(StartOutcome.CREATED);
		return runId;
	}

	static TickOutcome<Counter> addOne(String runId, String stamp) {
		return ticks.tick(runId, stamp, Counter.class, (state, tick) -> state.plus(1));
	}

	@Test
	void sixteenThreadsTickingOneRunApplyEveryTickExactlyOnce() throws Exception {
		String runId = newRun();
		Concurrently.run(16, (thread) -> {
			for (int i = 0; i < 200; i++) {
				assertThat(addOne(runId, "t" + thread + "-" + i).result()).isEqualTo(TickOutcome.Result.APPLIED);
			}
			return null;
		});
		Run<Counter> run = ticks.find(runId, Counter.class).orElseThrow();
		assertThat(run.state().value()).isEqualTo(3200);
		assertThat(run.lastTransitionSeq()).isEqualTo(3200);
		assertThat(run.recordVersion()).isEqualTo(3201);
		tables.assertContiguousHistory(runId, 3200);
	}

	@Test
	void sameStampFromEightThreadsAtOnceAppliesOnce() throws Exception {
		String runId = newRun();
		List<TickOutcome<Counter>> outcomes = Concurrently.run(8, (thread) -> addOne(runId, "the-stamp"));
		assertThat(outcomes).extracting(TickOutcome::result)
			.containsOnlyOnce(TickOutcome.Result.APPLIED)
			.filteredOn((result) -> result == TickOutcome.Result.DUPLICATE)
			.hasSize(7);
		assertThat(tables.count("SELECT count(*) FROM eec_run_transition WHERE run_id = ?", runId)).isOne();
		assertThat(ticks.find(runId, Counter.class).orElseThrow().state().value()).isOne();
		tables.assertContiguousHistory(runId, 1);
	}

	@Test
	void tickAppliedTwiceWithSameStampWritesNoRows() {
		String runId = newRun();
		assertThat(addOne(runId, "s1").result()).isEqualTo(TickOutcome.Result.APPLIED);
		Map<String, Object> before = tables.snapshot();
		TickOutcome<Counter> again = ticks.tick(runId, "s1", Counter.class, (state, tick) -> {
			throw new AssertionError("a duplicate stamp must not run the step");
		});
		assertThat(again.result()).isEqualTo(TickOutcome.Result.DUPLICATE);
		assertThat(again.state()).isEqualTo(new Counter(1));
		assertThat(again.seq()).isOne();
		assertThat(tables.snapshot()).isEqualTo(before);
	}

	@Test
	void redeliveringEveryStampOfAFinishedRunInRandomOrderChangesNoTable() throws Exception {
		String runId = newRun();
		List<String> stamps = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			stamps.add("event-" + i);
			int last = i;
			ticks.tick(runId, "event-" + i, Counter.class, (state, tick) -> {
				if (last == 49) {
					tick.complete();
				}
				return state.plus(1);
			});
		}
		assertThat(ticks.find(runId, Counter.class).orElseThrow().status()).isEqualTo(RunStatus.COMPLETED);
		Map<String, Object> before = tables.snapshot();

		Collections.shuffle(stamps, new Random(42));
		AtomicInteger next = new AtomicInteger();
		List<List<TickOutcome.Result>> results = Concurrently.run(4, (thread) -> {
			List<TickOutcome.Result> mine = new ArrayList<>();
			for (int i = next.getAndIncrement(); i < stamps.size(); i = next.getAndIncrement()) {
				mine.add(addOne(runId, stamps.get(i)).result());
			}
			return mine;
		});
		assertThat(results.stream().flatMap(List::stream)).hasSize(50).containsOnly(TickOutcome.Result.DUPLICATE);
		assertThat(addOne(runId, "a-new-stamp").result()).isEqualTo(TickOutcome.Result.TERMINAL);
		assertThat(tables.snapshot()).isEqualTo(before);
		tables.assertContiguousHistory(runId, 50);
	}

	@Test
	void stepThatThrowsLeavesNoVersionBumpNoTransitionAndNoneOfItsWrites() {
		String runId = newRun();
		addOne(runId, "first");
		Map<String, Object> before = tables.snapshot();
		assertThatThrownBy(() -> ticks.tick(runId, "boom", Counter.class, (state, tick) -> {
			tables.writeSideRow(runId);
			throw new IllegalStateException("step failed");
		})).isInstanceOf(IllegalStateException.class).hasMessage("step failed");
		assertThat(tables.snapshot()).isEqualTo(before);
		assertThat(tables.sideRows(runId)).isZero();
		// the failed stamp was not recorded: it can be applied later
		assertThat(addOne(runId, "boom").result()).isEqualTo(TickOutcome.Result.APPLIED);
		tables.assertContiguousHistory(runId, 2);
	}

	@Test
	void writesOfAStepCommitWithTheTick() {
		String runId = newRun();
		ticks.tick(runId, "write", Counter.class, (state, tick) -> {
			tables.writeSideRow(runId);
			return state.plus(1);
		});
		assertThat(tables.sideRows(runId)).isOne();
	}

	@Test
	void versionConflictRecomputesOnFreshState() throws Exception {
		String runId = newRun();
		ExecutorService other = Executors.newSingleThreadExecutor();
		try {
			List<Integer> attempts = new ArrayList<>();
			TickOutcome<Counter> outcome = ticks.tick(runId, "contested", Counter.class, (state, tick) -> {
				attempts.add(tick.attempt());
				if (tick.attempt() == 1) {
					// another tick commits while this one computes
					await(other.submit(() -> addOne(runId, "interloper")));
				}
				return state.plus(10);
			});
			assertThat(attempts).containsExactly(1, 2);
			assertThat(outcome.attempts()).isEqualTo(2);
			assertThat(outcome.result()).isEqualTo(TickOutcome.Result.APPLIED);
			assertThat(outcome.state()).isEqualTo(new Counter(11));
			assertThat(outcome.seq()).isEqualTo(2);
			tables.assertContiguousHistory(runId, 2);
		}
		finally {
			other.shutdownNow();
		}
	}

	@Test
	void conflictsBeyondTheAttemptLimitEndInAClearExceptionAndWriteNothing() {
		TickService oneAttempt = tickService(dataSource, 1);
		String runId = newRun();
		ExecutorService other = Executors.newSingleThreadExecutor();
		try {
			assertThatThrownBy(() -> oneAttempt.tick(runId, "always-late", Counter.class, (state, tick) -> {
				tables.writeSideRow(runId + "-late");
				await(other.submit(() -> addOne(runId, "interloper")));
				return state.plus(10);
			})).isInstanceOf(TickConflictException.class)
				.hasMessageContaining("always-late")
				.hasMessageContaining("1 times")
				.hasMessageContaining("ductor.ticks.max-attempts=1");
		}
		finally {
			other.shutdownNow();
		}
		assertThat(tables.sideRows(runId + "-late")).isZero();
		assertThat(tables.count("SELECT count(*) FROM eec_run_transition WHERE stamp = 'always-late'")).isZero();
		assertThat(ticks.find(runId, Counter.class).orElseThrow().state()).isEqualTo(new Counter(1));
		tables.assertContiguousHistory(runId, 1);
	}

	@Test
	void aRetryQueuesBehindTheWinnerSoContendedTicksNeedAtMostTwoAttempts() throws Exception {
		String runId = newRun();
		List<List<Integer>> attempts = Concurrently.run(8, (thread) -> {
			List<Integer> mine = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				mine.add(addOne(runId, "c" + thread + "-" + i).attempts());
			}
			return mine;
		});
		assertThat(attempts.stream().flatMap(List::stream)).hasSize(400).allMatch((n) -> n <= 2);
		tables.assertContiguousHistory(runId, 400);
	}

	@Test
	void finishedRunsIgnoreLaterTicks() {
		String completed = newRun();
		ticks.tick(completed, "done", Counter.class, (state, tick) -> {
			tick.complete();
			return state.plus(1);
		});
		String failed = newRun();
		ticks.tick(failed, "broken", Counter.class, (state, tick) -> {
			tick.fail("card declined");
			return state;
		});
		Map<String, Object> before = tables.snapshot();
		TickOutcome<Counter> late = addOne(completed, "late");
		assertThat(late.result()).isEqualTo(TickOutcome.Result.TERMINAL);
		assertThat(late.runStatus()).isEqualTo(RunStatus.COMPLETED);
		assertThat(late.state()).isEqualTo(new Counter(1));
		assertThat(addOne(failed, "late").result()).isEqualTo(TickOutcome.Result.TERMINAL);
		assertThat(tables.snapshot()).isEqualTo(before);

		Run<Counter> failedRun = ticks.find(failed, Counter.class).orElseThrow();
		assertThat(failedRun.status()).isEqualTo(RunStatus.FAILED);
		assertThat(failedRun.failureReason()).isEqualTo("card declined");
		assertThat(ticks.transitions(failed)).singleElement()
			.satisfies((transition) -> assertThat(transition.runStatus()).isEqualTo(RunStatus.FAILED));
	}

	@Test
	void inputIsRecordedWithItsTransition() {
		String runId = newRun();
		ticks.tick(runId, "payment-attempt-1", Map.of("charged", 42), Counter.class, (state, tick) -> state.plus(42));
		assertThat(ticks.transitions(runId)).singleElement().satisfies((transition) -> {
			assertThat(transition.seq()).isOne();
			assertThat(transition.stamp()).isEqualTo("payment-attempt-1");
			assertThat(transition.inputJson()).isEqualTo("{\"charged\": 42}");
			assertThat(transition.recordVersion()).isEqualTo(2);
		});
	}

	@Test
	void repeatedStartWritesNothing() {
		String runId = newRun();
		addOne(runId, "s");
		Map<String, Object> before = tables.snapshot();
		assertThat(ticks.start("counter", runId, new Counter(99))).isEqualTo(StartOutcome.ALREADY_STARTED);
		assertThat(tables.snapshot()).isEqualTo(before);
		assertThat(ticks.find(runId, Counter.class).orElseThrow().state()).isEqualTo(new Counter(1));
	}

	@Test
	void tickInsideACallersTransactionCommitsAndRollsBackWithIt() {
		String runId = newRun();
		TransactionTemplate outer = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		outer.executeWithoutResult((status) -> {
			addOne(runId, "kept");
			tables.writeSideRow(runId + "-kept");
		});
		outer.executeWithoutResult((status) -> {
			addOne(runId, "undone");
			tables.writeSideRow(runId + "-undone");
			status.setRollbackOnly();
		});
		assertThat(ticks.transitions(runId)).extracting(RunTransition::stamp).containsExactly("kept");
		assertThat(tables.sideRows(runId + "-kept")).isOne();
		assertThat(tables.sideRows(runId + "-undone")).isZero();
	}

	@Test
	void aStepThatTicksAnotherRunIsTheCurrentTickAgainAfterIt() {
		String outerRun = newRun();
		String innerRun = newRun();
		List<String> seen = new ArrayList<>();
		ticks.tick(outerRun, "outer", Counter.class, (state, tick) -> {
			addOne(innerRun, "inner");
			seen.add(RunningTick.current().map(Tick::runId).orElse("none"));
			return state.plus(1);
		});
		assertThat(seen).containsExactly(outerRun);
		assertThat(RunningTick.current()).isEmpty();
	}

	static <T> T await(java.util.concurrent.Future<T> future) {
		try {
			return future.get();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
