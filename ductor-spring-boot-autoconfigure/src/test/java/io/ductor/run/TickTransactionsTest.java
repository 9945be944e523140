package io.ductor.run;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.jdbc.internal.CommittingTransactions;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.SchemaMode;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Which transaction a tick runs in: its own, the caller's, an enclosing tick's; and ticks
 * from steps.
 */
class TickTransactionsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static HikariDataSource dataSource;

	/**
	 * Another DataSource, with a transaction manager of its own; Ductor's tables are not
	 * its business.
	 */
	static HikariDataSource otherDataSource;

	static TickService ticks;

	static RunTables tables;

	final ExecutorService other = Executors.newSingleThreadExecutor();

	@BeforeAll
	static void migrate() {
		dataSource = postgres.newDataSource(8);
		otherDataSource = postgres.newDataSource(4);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		ticks = TickServiceTest.tickService(dataSource, 20);
		tables = new RunTables(dataSource);
		tables.createSideTable();
	}

	@AfterAll
	static void close() {
		dataSource.close();
		otherDataSource.close();
	}

	@AfterEach
	void stopOther() {
		this.other.shutdownNow();
	}

	static String newRun() {
		String runId = "run-" + UUID.randomUUID();
		ticks.start("counter", runId, new Counter(0));
		return runId;
	}

	static TickOutcome<Counter> addOne(TickService service, String runId, String stamp) {
		return service.tick(runId, stamp, Counter.class, (state, tick) -> state.plus(1));
	}

	/**
	 * Ticks {@code runId} from another thread, so that it commits while the caller's tick
	 * computes.
	 */
	void interlope(String runId) {
		TickServiceTest.await(this.other.submit(() -> addOne(ticks, runId, "interloper-" + UUID.randomUUID())));
	}

	/**
	 * A tick from an {@code afterCommit} or {@code afterCompletion} callback on a pool
	 * without auto-commit: joining the committed transaction, its writes would be rolled
	 * back by the pool after it answered {@code APPLIED}.
	 */
	@Test
	void aTickCalledAfterTheCommitOfTheCallersTransactionCommitsInATransactionOfItsOwn() {
		try (HikariDataSource manual = new HikariDataSource()) {
			manual.setJdbcUrl(postgres.jdbcUrl());
			manual.setUsername(postgres.username());
			manual.setPassword(postgres.password());
			manual.setAutoCommit(false);
			manual.setMaximumPoolSize(4);
			TickService service = TickServiceTest.tickService(manual, 20);
			String runId = newRun();
			TransactionTemplate callers = new TransactionTemplate(
					CommittingTransactions.addTo(new DataSourceTransactionManager(manual)));
			List<TickOutcome<Counter>> outcomes = new ArrayList<>();
			callers.executeWithoutResult((status) -> {
				JdbcClient.create(manual).sql("SELECT 1").query(Integer.class).single();
				TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

					@Override
					public void afterCommit() {
						outcomes.add(addOne(service, runId, "after-commit"));
					}

					@Override
					public void afterCompletion(int status) {
						outcomes.add(addOne(service, runId, "after-completion"));
					}

				});
			});
			assertThat(outcomes).extracting(TickOutcome::result)
				.containsExactly(TickOutcome.Result.APPLIED, TickOutcome.Result.APPLIED);
			assertThat(ticks.find(runId, Counter.class).orElseThrow().state()).isEqualTo(new Counter(2));
			tables.assertContiguousHistory(runId, 2);
		}
	}

	@Test
	void aNestedTickThatLosesItsRaceMakesTheEnclosingTickRecomputeAndBothRunsAdvanceOnce() {
		String outer = newRun();
		String inner = newRun();
		List<Integer> outerAttempts = new ArrayList<>();
		TickOutcome<Counter> outcome = ticks.tick(outer, "outer", Counter.class, (state, tick) -> {
			outerAttempts.add(tick.attempt());
			ticks.tick(inner, "inner", Counter.class, (innerState, innerTick) -> {
				if (outerAttempts.size() == 1) {
					interlope(inner);
				}
				return innerState.plus(10);
			});
			return state.plus(1);
		});
		assertThat(outerAttempts).containsExactly(1, 2);
		assertThat(outcome.result()).isEqualTo(TickOutcome.Result.APPLIED);
		assertThat(outcome.attempts()).isEqualTo(2);
		assertThat(ticks.find(outer, Counter.class).orElseThrow().state()).isEqualTo(new Counter(1));
		assertThat(ticks.find(inner, Counter.class).orElseThrow().state()).isEqualTo(new Counter(11));
		tables.assertContiguousHistory(outer, 1);
		tables.assertContiguousHistory(inner, 2);
	}

	@Test
	void aNestedConflictBeyondTheAttemptLimitNamesTheNestedRunAndWritesNothing() {
		TickService oneAttempt = TickServiceTest.tickService(dataSource, 1);
		String outer = newRun();
		String inner = newRun();
		assertThatThrownBy(() -> oneAttempt.tick(outer, "outer", Counter.class, (state, tick) -> {
			tables.writeSideRow(outer + "-side");
			oneAttempt.tick(inner, "inner", Counter.class, (innerState, innerTick) -> {
				interlope(inner);
				return innerState.plus(10);
			});
			return state.plus(1);
		})).isInstanceOf(TickConflictException.class)
			.hasMessage("Tick 'outer' on run '" + outer + "' lost to concurrent ticks 1 times"
					+ " (ductor.ticks.max-attempts=1), the last time on run '" + inner + "' which its step ticked;"
					+ " nothing was written and re-submitting the same stamp is safe");
		assertThat(tables.sideRows(outer + "-side")).isZero();
		tables.assertContiguousHistory(outer, 0);
		tables.assertContiguousHistory(inner, 1);
		assertThat(tables.count("SELECT count(*) FROM eec_run_transition WHERE stamp = 'inner' AND run_id = ?", inner))
			.isZero();
	}

	@Test
	void aNestedTickInsideTheCallersTransactionLeavesTheRetryToTheCaller() {
		String outer = newRun();
		String inner = newRun();
		AtomicInteger outerSteps = new AtomicInteger();
		TransactionTemplate caller = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		assertThatThrownBy(() -> caller.executeWithoutResult((status) -> {
			ticks.tick(outer, "outer", Counter.class, (state, tick) -> {
				outerSteps.incrementAndGet();
				ticks.tick(inner, "inner", Counter.class, (innerState, innerTick) -> {
					interlope(inner);
					return innerState.plus(10);
				});
				return state.plus(1);
			});
		})).isInstanceOf(TickConflictException.class)
			.hasMessageContaining("while tick 'inner' ran inside the caller's transaction")
			.hasMessageContaining("retry the caller's transaction");
		assertThat(outerSteps).hasValue(1);
		tables.assertContiguousHistory(outer, 0);
		tables.assertContiguousHistory(inner, 1);
	}

	@Test
	void aStepThatTicksItsOwnRunIsRefusedAtOnceAndWritesNothing() {
		String runId = newRun();
		AtomicInteger steps = new AtomicInteger();
		assertThatThrownBy(() -> ticks.tick(runId, "outer", Counter.class, (state, tick) -> {
			steps.incrementAndGet();
			tables.writeSideRow(runId + "-side");
			addOne(ticks, runId, "inner");
			return state.plus(1);
		})).isInstanceOf(IllegalStateException.class)
			.hasMessageStartingWith("Tick 'inner' on run '" + runId + "' was called from the step of tick 'outer' on"
					+ " the same run; a step may not tick its own run");
		assertThat(steps).hasValue(1);
		assertThat(tables.sideRows(runId + "-side")).isZero();
		tables.assertContiguousHistory(runId, 0);
	}

	@Test
	void aStepThatTicksItsOwnRunThroughAnotherRunsStepIsRefused() {
		String first = newRun();
		String second = newRun();
		AtomicInteger steps = new AtomicInteger();
		assertThatThrownBy(() -> ticks.tick(first, "a", Counter.class, (state, tick) -> {
			steps.incrementAndGet();
			ticks.tick(second, "b", Counter.class, (secondState, secondTick) -> {
				addOne(ticks, first, "c");
				return secondState.plus(1);
			});
			return state.plus(1);
		})).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("Tick 'c' on run '" + first + "' was called from the step of tick 'a'")
			.hasMessageContaining("a step may not tick its own run");
		assertThat(steps).hasValue(1);
		tables.assertContiguousHistory(first, 0);
		tables.assertContiguousHistory(second, 0);
	}

	@Test
	void aTickInsideAnotherDataSourcesTransactionRunsInItsOwnAndRetriesItsConflicts() {
		String runId = newRun();
		List<Integer> attempts = new ArrayList<>();
		JdbcClient otherJdbc = JdbcClient.create(otherDataSource);
		TransactionTemplate otherTransaction = new TransactionTemplate(
				new DataSourceTransactionManager(otherDataSource));
		TickOutcome<Counter> outcome = otherTransaction.execute((status) -> {
			otherJdbc.sql("INSERT INTO test_side_table (id, note) VALUES (?, 'other')")
				.param(runId + "-other")
				.update();
			TickOutcome<Counter> inside = ticks.tick(runId, "contested", Counter.class, (state, tick) -> {
				attempts.add(tick.attempt());
				tables.writeSideRow(runId + "-step-" + tick.attempt());
				if (tick.attempt() == 1) {
					interlope(runId);
				}
				return state.plus(10);
			});
			// the tick committed on its own: another connection sees it before this
			// transaction ends
			assertThat(tables.count("SELECT count(*) FROM eec_run_transition WHERE run_id = ? AND stamp = 'contested'",
					runId))
				.isOne();
			status.setRollbackOnly();
			return inside;
		});
		assertThat(attempts).containsExactly(1, 2);
		assertThat(outcome.result()).isEqualTo(TickOutcome.Result.APPLIED);
		assertThat(outcome.attempts()).isEqualTo(2);
		assertThat(outcome.state()).isEqualTo(new Counter(11));
		tables.assertContiguousHistory(runId, 2);
		// the step's writes went with its own attempt; the other transaction's rolled
		// back alone
		assertThat(tables.sideRows(runId + "-step-1")).isZero();
		assertThat(tables.sideRows(runId + "-step-2")).isOne();
		assertThat(tables.sideRows(runId + "-other")).isZero();
	}

	@Test
	void aTickInsideATransactionOnDuctorsDataSourceJoinsIt() {
		String runId = newRun();
		TransactionTemplate caller = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		caller.executeWithoutResult((status) -> {
			addOne(ticks, runId, "joined");
			// not committed yet: a connection outside the caller's transaction does not
			// see it
			assertThat(JdbcClient.create(otherDataSource)
				.sql("SELECT count(*) FROM eec_run_transition WHERE run_id = ?")
				.param(runId)
				.query(Long.class)
				.single()).isZero();
			status.setRollbackOnly();
		});
		tables.assertContiguousHistory(runId, 0);
	}

}
