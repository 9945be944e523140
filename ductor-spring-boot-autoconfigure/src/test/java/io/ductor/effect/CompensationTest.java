package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.internal.EffectDrainer;
import io.ductor.run.RunCompensation;
import io.ductor.run.RunStatus;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A run that fails records the undo of its steps, in its failing transaction, and runs it
 * backwards.
 */
class CompensationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static TickService ticks;

	static SagaEffects saga;

	static EffectOutbox outbox;

	static EffectOperations operations;

	static RecordingReceiver receiver;

	static JdbcClient jdbc;

	static EffectDrainer drainer;

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), SagaEffects.Config.class,
				"ductor.effects.drainer.poll-interval=100ms");
		ticks = context.getBean(TickService.class);
		saga = context.getBean(SagaEffects.class);
		outbox = context.getBean(EffectOutbox.class);
		operations = context.getBean(EffectOperations.class);
		receiver = context.getBean(RecordingReceiver.class);
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
		drainer = context.getBean(EffectDrainer.class);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	/**
	 * A run that reserved and charged, both completed: the state its failing tick starts
	 * from.
	 */
	static String reservedAndCharged() {
		String run = "order-" + UUID.randomUUID();
		ticks.start("order", run, 0);
		ticks.tick(run, "reserve", Integer.class, (state, tick) -> {
			saga.reserve(run, "book-1");
			return state + 1;
		});
		awaitStatus("reserve:" + run, EffectStatus.COMPLETED);
		ticks.tick(run, "charge", Integer.class, (state, tick) -> {
			saga.charge(run, 4500);
			return state + 1;
		});
		awaitStatus("charge:" + run, EffectStatus.COMPLETED);
		return run;
	}

	static void fail(String run) {
		ticks.tick(run, "ship", Integer.class, (state, tick) -> {
			tick.fail("out of stock at shipping");
			return state;
		});
	}

	@Test
	void aCompensationWhoseEffectLeftTheApplicationCarriesTheTraceOfTheIntentItCompensates() {
		String run = reservedAndCharged();
		String traceContext = "{\"traceparent\": \"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}";
		jdbc.sql("UPDATE eec_effect_intent SET trace_context = ?::jsonb WHERE idempotency_key = ?")
			.param(traceContext)
			.param("charge:" + run)
			.update();
		jdbc.sql("UPDATE eec_run_compensation SET effect_name = 'saga.gone' WHERE run_id = ? AND original_key = ?")
			.param(run)
			.param("charge:" + run)
			.update();
		fail(run);
		assertThat(jdbc.sql("SELECT trace_context->>'traceparent' FROM eec_effect_intent WHERE idempotency_key = ?")
			.param("compensate:charge:" + run)
			.query(String.class)
			.single()).isEqualTo("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
	}

	@Test
	void failingARunRecordsTheCompensationsOfItsCompletedStepsInReverseOrderOfTheirTicks() {
		String run = reservedAndCharged();
		fail(run);
		// recorded by the failing tick itself, before any drainer saw them
		EffectIntent refund = operations.findByKey("compensate:charge:" + run).orElseThrow();
		EffectIntent release = operations.findByKey("compensate:reserve:" + run).orElseThrow();
		assertThat(refund.id()).isLessThan(release.id());
		assertThat(List.of(refund.effectName(), release.effectName())).containsExactly("saga.refund", "saga.release");
		assertThat(refund.orderingKey()).isEqualTo("compensate:" + run).isEqualTo(release.orderingKey());
		assertThat(refund.runId()).isEqualTo(run);
		assertThat(refund.payloadJson()).isEqualTo("[\"" + run + "\", 4500]");
		assertThat(ticks.find(run, Integer.class).orElseThrow()).satisfies((r) -> {
			assertThat(r.status()).isEqualTo(RunStatus.FAILED);
			assertThat(r.compensation()).isIn(RunCompensation.COMPENSATING, RunCompensation.COMPENSATED);
		});
		awaitCompensated(run);
		List<String> calls = jdbc
			.sql("SELECT idempotency_key FROM test_call_log WHERE idempotency_key LIKE ? ORDER BY seq")
			.param("compensate:%" + run)
			.query(String.class)
			.list();
		assertThat(calls).containsExactly("compensate:charge:" + run, "compensate:reserve:" + run);
		CompensationChain chain = operations.compensations(run);
		assertThat(chain.compensation()).isEqualTo(RunCompensation.COMPENSATED);
		assertThat(chain.links()).extracting(CompensationChain.Link::originalKey)
			.containsExactly("charge:" + run, "reserve:" + run);
		assertThat(chain.links()).allSatisfy((link) -> {
			assertThat(link.original().status()).isEqualTo(EffectStatus.COMPLETED);
			assertThat(link.compensation().status()).isEqualTo(EffectStatus.COMPLETED);
		});
	}

	@Test
	void aFailingTickThatRollsBackRecordsNoCompensation() {
		String run = reservedAndCharged();
		// a step that fails the run and then throws: its tick rolls back, and with it the
		// compensations
		assertThatThrownBy(() -> ticks.tick(run, "ship", Integer.class, (state, tick) -> {
			tick.fail("out of stock at shipping");
			throw new IllegalStateException("the step breaks after failing the run");
		})).hasMessage("the step breaks after failing the run");
		assertThat(operations.findByRun(run)).hasSize(2);
		// a tick that fails the run in a caller's transaction that rolls back after the
		// tick
		String other = reservedAndCharged();
		TransactionTemplate transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		assertThatThrownBy(() -> transactions.executeWithoutResult((status) -> {
			fail(other);
			// read in the same transaction: the failing tick recorded them there
			assertThat(operations.findByKey("compensate:charge:" + other)).isPresent();
			throw new IllegalStateException("the caller's work fails after the tick");
		})).hasMessage("the caller's work fails after the tick");
		assertThat(operations.findByKey("compensate:charge:" + other)).isEmpty();
		assertThat(operations.findByKey("compensate:reserve:" + other)).isEmpty();
		assertThat(ticks.find(other, Integer.class).orElseThrow()).satisfies((r) -> {
			assertThat(r.status()).isEqualTo(RunStatus.ACTIVE);
			assertThat(r.compensation()).isEqualTo(RunCompensation.NONE);
		});
		assertThat(operations.findByRun(other)).hasSize(2);
	}

	@Test
	void failingARunAgainRecordsNothingTwice() {
		String run = reservedAndCharged();
		fail(run);
		awaitCompensated(run);
		assertThat(ticks.compensateFailedRun(run)).isZero();
		fail(run);
		assertThat(operations.findByRun(run)).hasSize(4);
		assertThat(ticks.find(run, Integer.class).orElseThrow().compensation()).isEqualTo(RunCompensation.COMPENSATED);
		assertThat(jdbc.sql("SELECT count(*) FROM test_call_log WHERE idempotency_key LIKE ?")
			.param("compensate:%" + run)
			.query(Long.class)
			.single()).isEqualTo(2);
	}

	@Test
	void aCompensationIsNotDispatchedBeforeThePreviousOneSettled() throws Exception {
		String run = reservedAndCharged();
		CountDownLatch gate = new CountDownLatch(1);
		SagaEffects.gates.put("compensate:charge:" + run, gate);
		try {
			fail(run);
			awaitStatus("compensate:charge:" + run, EffectStatus.IN_FLIGHT);
			DrainerSignals.awaitFreshClaim(drainer);
			EffectIntent release = operations.findByKey("compensate:reserve:" + run).orElseThrow();
			assertThat(release.status()).isEqualTo(EffectStatus.PENDING);
			assertThat(release.attempts()).isZero();
			assertThat(ticks.find(run, Integer.class).orElseThrow().compensation())
				.isEqualTo(RunCompensation.COMPENSATING);
		}
		finally {
			gate.countDown();
		}
		awaitCompensated(run);
		EffectIntent refund = operations.findByKey("compensate:charge:" + run).orElseThrow();
		Map<String, Object> releaseCall = receiver.log("saga.release")
			.stream()
			.filter((row) -> row.get("idempotency_key").equals("compensate:reserve:" + run))
			.findFirst()
			.orElseThrow();
		assertThat(((java.sql.Timestamp) releaseCall.get("received_at")).toInstant())
			.isAfterOrEqualTo(refund.finishedAt().toInstant());
	}

	@Test
	void aCompensationThatCannotBeAppliedParksAndHoldsUpTheRestUntilAnOperatorActs() throws Exception {
		String run = reservedAndCharged();
		SagaEffects.refuse.add("compensate:charge:" + run);
		fail(run);
		awaitStatus("compensate:charge:" + run, EffectStatus.FAILED);
		DrainerSignals.awaitFreshClaim(drainer);
		assertThat(operations.findByKey("compensate:reserve:" + run).orElseThrow()).satisfies((release) -> {
			assertThat(release.status()).isEqualTo(EffectStatus.PENDING);
			assertThat(release.attempts()).isZero();
		});
		assertThat(ticks.find(run, Integer.class).orElseThrow().compensation()).isEqualTo(RunCompensation.COMPENSATING);
		operations.retry(operations.findByKey("compensate:charge:" + run).orElseThrow().id());
		awaitCompensated(run);
		assertThat(operations.findByKey("compensate:reserve:" + run).orElseThrow().status())
			.isEqualTo(EffectStatus.COMPLETED);
	}

	@Test
	void aStepThatNeverReachedItsReceiverIsCancelledInsteadOfCompensated() {
		String run = reservedAndCharged();
		ticks.tick(run, "later", Integer.class, (state, tick) -> {
			saga.later(run);
			return state;
		});
		fail(run);
		assertThat(operations.findByKey("later:" + run).orElseThrow()).satisfies((later) -> {
			assertThat(later.status()).isEqualTo(EffectStatus.CANCELLED);
			assertThat(later.lastError()).contains("before its first attempt");
		});
		assertThat(operations.findByKey("compensate:later:" + run)).isEmpty();
		assertThat(operations.compensations(run).links()).extracting(CompensationChain.Link::originalKey)
			.containsExactly("later:" + run, "charge:" + run, "reserve:" + run);
		awaitCompensated(run);
	}

	@Test
	void aCompensationWaitsForTheStepItUndoesWhileThatStepRuns() throws Exception {
		String run = "order-" + UUID.randomUUID();
		ticks.start("order", run, 0);
		CountDownLatch gate = new CountDownLatch(1);
		SagaEffects.gates.put("charge:" + run, gate);
		try {
			ticks.tick(run, "charge", Integer.class, (state, tick) -> {
				saga.charge(run, 100);
				return state;
			});
			awaitStatus("charge:" + run, EffectStatus.IN_FLIGHT);
			fail(run);
			DrainerSignals.awaitFreshClaim(drainer);
			assertThat(operations.findByKey("compensate:charge:" + run).orElseThrow().attempts()).isZero();
		}
		finally {
			gate.countDown();
		}
		awaitCompensated(run);
		List<String> calls = jdbc
			.sql("SELECT idempotency_key FROM test_call_log WHERE idempotency_key LIKE ? ORDER BY seq")
			.param("%charge:" + run)
			.query(String.class)
			.list();
		assertThat(calls).containsExactly("charge:" + run, "compensate:charge:" + run);
	}

	@Test
	void anOperatorsCompensateDecisionFailsTheRunAndUndoesEveryStepIncludingTheUncertainOne() {
		String run = reservedAndCharged();
		SagaEffects.lose.add("mail:" + run);
		ticks.tick(run, "mail", Integer.class, (state, tick) -> {
			saga.mail(run);
			return state;
		});
		EffectIntent mail = awaitStatus("mail:" + run, EffectStatus.NEEDS_DECISION);
		EffectIntent resolved = operations.resolve(mail.id(), EffectResolution.COMPENSATE);
		assertThat(resolved.status()).isEqualTo(EffectStatus.CANCELLED);
		assertThat(ticks.find(run, Integer.class).orElseThrow()).satisfies((r) -> {
			assertThat(r.status()).isEqualTo(RunStatus.FAILED);
			assertThat(r.failureReason()).contains("an operator decided to compensate");
		});
		awaitCompensated(run);
		List<String> calls = jdbc
			.sql("SELECT idempotency_key FROM test_call_log WHERE idempotency_key LIKE ? ORDER BY seq")
			.param("compensate:%" + run)
			.query(String.class)
			.list();
		assertThat(calls).containsExactly("compensate:mail:" + run, "compensate:charge:" + run,
				"compensate:reserve:" + run);
		assertThatThrownBy(() -> operations.resolve(mail.id(), EffectResolution.COMPENSATE))
			.isInstanceOf(EffectIntentStateException.class);
	}

	@Test
	void aCompensateDecisionOnARunThatAlreadyFailedRecordsNothingTwiceAndReleasesTheChain() throws Exception {
		String run = reservedAndCharged();
		SagaEffects.lose.add("mail:" + run);
		ticks.tick(run, "mail", Integer.class, (state, tick) -> {
			saga.mail(run);
			return state;
		});
		EffectIntent mail = awaitStatus("mail:" + run, EffectStatus.NEEDS_DECISION);
		fail(run);
		// the mail may have gone out, so its retraction is recorded, but it waits for the
		// decision
		assertThat(operations.findByRun(run)).hasSize(6);
		DrainerSignals.awaitFreshClaim(drainer);
		assertThat(operations.findByKey("compensate:mail:" + run).orElseThrow().attempts()).isZero();
		assertThat(operations.findByKey("compensate:charge:" + run).orElseThrow().attempts()).isZero();
		assertThat(operations.resolve(mail.id(), EffectResolution.COMPENSATE).status())
			.isEqualTo(EffectStatus.CANCELLED);
		assertThat(operations.findByRun(run)).hasSize(6);
		awaitCompensated(run);
		List<String> calls = jdbc
			.sql("SELECT idempotency_key FROM test_call_log WHERE idempotency_key LIKE ? ORDER BY seq")
			.param("compensate:%" + run)
			.query(String.class)
			.list();
		assertThat(calls).containsExactly("compensate:mail:" + run, "compensate:charge:" + run,
				"compensate:reserve:" + run);
	}

	@Test
	void aCompensationPassedAtTheCallIsRecordedWithItsOwnArguments() {
		String run = "order-" + UUID.randomUUID();
		ticks.start("order", run, 0);
		ticks.tick(run, "note", Integer.class, (state, tick) -> {
			outbox.schedule(EffectRequest.of("saga.note", run, "hello")
				.withKey("note:" + run)
				.withCompensation(EffectRequest.of("saga.note", run, "sorry")));
			return state;
		});
		awaitStatus("note:" + run, EffectStatus.COMPLETED);
		fail(run);
		EffectIntent undo = operations.findByKey("compensate:note:" + run).orElseThrow();
		assertThat(undo.payloadJson()).contains("sorry");
		awaitCompensated(run);
		TransactionTemplate transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		assertThatThrownBy(() -> transactions.executeWithoutResult((status) -> outbox.schedule(
				EffectRequest.of("saga.note", run, "x").withCompensation(EffectRequest.of("saga.note", run, "y")))))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("outside a tick");
	}

	static EffectIntent awaitStatus(String key, EffectStatus status) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> operations.findByKey(key).map(EffectIntent::status).orElse(null) == status);
		return operations.findByKey(key).orElseThrow();
	}

	static void awaitCompensated(String run) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> ticks.find(run, Integer.class).orElseThrow().compensation() == RunCompensation.COMPENSATED);
	}

}
