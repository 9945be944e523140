package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;

import io.ductor.run.TickOutcome;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Effects recorded by a tick's step commit, roll back and recompute with the tick. */
class EffectsInTicksTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static TickService ticks;

	static TestEffects effects;

	static EffectOutbox outbox;

	static EffectOperations operations;

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), TestEffects.Config.class,
				"ductor.effects.drainer.poll-interval=100ms");
		ticks = context.getBean(TickService.class);
		effects = context.getBean(TestEffects.class);
		outbox = context.getBean(EffectOutbox.class);
		operations = context.getBean(EffectOperations.class);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void anEffectRecordedByAStepCommitsWithTheTickAndIsLinkedToTheRun() {
		String run = "order-" + UUID.randomUUID();
		ticks.start("order", run, 0);
		ticks.tick(run, "place", Integer.class, (state, tick) -> {
			effects.ship(tick.runId(), List.of());
			return state + 1;
		});
		await().atMost(Duration.ofSeconds(10))
			.until(() -> operations.findByKey("ship:" + run).orElseThrow().status() == EffectStatus.COMPLETED);
		assertThat(operations.findByRun(run)).singleElement().satisfies((intent) -> {
			assertThat(intent.runId()).isEqualTo(run);
			assertThat(intent.idempotencyKey()).isEqualTo("ship:" + run);
		});
	}

	@Test
	void aStepThatThrowsLeavesNoIntent() {
		String run = "order-" + UUID.randomUUID();
		ticks.start("order", run, 0);
		assertThatThrownBy(() -> ticks.tick(run, "place", Integer.class, (state, tick) -> {
			effects.ship(tick.runId(), List.of());
			throw new IllegalStateException("out of stock");
		})).hasMessage("out of stock");
		assertThat(operations.findByKey("ship:" + run)).isEmpty();
		assertThat(operations.findByRun(run)).isEmpty();
	}

	@Test
	void aTickThatLosesARaceAndRecomputesRecordsItsEffectOnce() throws Exception {
		String run = "order-" + UUID.randomUUID();
		ticks.start("order", run, 0);
		ExecutorService other = Executors.newSingleThreadExecutor();
		try {
			TickOutcome<Integer> outcome = ticks.tick(run, "contested", Integer.class, (state, tick) -> {
				effects.notify(run + " at state " + state);
				if (tick.attempt() == 1) {
					// a concurrent tick commits first: this attempt rolls back, its
					// intent with it
					try {
						other.submit(() -> ticks.tick(run, "interloper", Integer.class, (s, t) -> s + 10)).get();
					}
					catch (Exception ex) {
						throw new IllegalStateException(ex);
					}
				}
				return state + 1;
			});
			assertThat(outcome.attempts()).isEqualTo(2);
		}
		finally {
			other.shutdownNow();
		}
		assertThat(operations.findByRun(run)).singleElement()
			.satisfies((intent) -> assertThat(intent.payloadJson()).contains("at state 10"));
	}

}
