package io.ductor.health;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.actuate.autoconfigure.DuctorEndpointAutoConfiguration;
import io.ductor.actuate.internal.DuctorEndpoint;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.NonRetryableEffectException;
import io.ductor.effect.Receiver;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.health.autoconfigure.DuctorHealthAutoConfiguration;
import io.ductor.health.internal.DuctorHealthIndicator;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.StoredResponse;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.metrics.autoconfigure.DuctorMetricsAutoConfiguration;
import io.ductor.metrics.internal.DuctorBacklog;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/** Meters, health and the endpoint through a scripted scenario on a real database. */
class OperationsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static MeterRegistry meters;

	static TransactionTemplate tx;

	static Effects effects;

	static EffectOutbox outbox;

	static EffectOperations operations;

	static DuctorHealthIndicator health;

	@BeforeAll
	static void start() {
		context = new SpringApplicationBuilder(Infrastructure.class).web(WebApplicationType.NONE)
			.properties(postgres.springProperties())
			.properties("ductor.effects.drainer.poll-interval=100ms", "ductor.effects.backoff.initial=10ms",
					"ductor.effects.backoff.max=20ms", "ductor.backlog.cache-ttl=10ms",
					"management.endpoints.web.exposure.include=ductor")
			.run();
		meters = context.getBean(MeterRegistry.class);
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		effects = context.getBean(Effects.class);
		outbox = context.getBean(EffectOutbox.class);
		operations = context.getBean(EffectOperations.class);
		health = context.getBean(DuctorHealthIndicator.class);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	static double count(String name, String... tags) {
		return meters.find(name).tags(tags).counters().stream().mapToDouble((counter) -> counter.count()).sum();
	}

	@Test
	void metersFollowAScriptedScenario() {
		TickService ticks = context.getBean(TickService.class);
		String run = "run-" + UUID.randomUUID();
		ticks.start("order", run, 0);
		ticks.tick(run, "a", Integer.class, (state, tick) -> state + 1);
		ticks.tick(run, "a", Integer.class, (state, tick) -> state + 1);
		assertThat(count("ductor.ticks", "outcome", "applied")).isGreaterThanOrEqualTo(1);
		assertThat(count("ductor.ticks", "outcome", "duplicate")).isGreaterThanOrEqualTo(1);

		String ok = "ok-" + UUID.randomUUID();
		String flaky = "flaky-" + UUID.randomUUID();
		String doomed = "doomed-" + UUID.randomUUID();
		String unsure = "unsure-" + UUID.randomUUID();
		double scheduled = count("ductor.effects.scheduled", "effect", "send");
		double completed = count("ductor.effects.dispatched", "effect", "send", "outcome", "completed");
		double retried = count("ductor.effects.dispatched", "effect", "send", "outcome", "retry");
		double failedSends = count("ductor.effects.dispatched", "effect", "send", "outcome", "failed");
		long lags = meters.find("ductor.effects.lag")
			.tag("effect", "send")
			.timers()
			.stream()
			.mapToLong((t) -> t.count())
			.sum();
		double parkedFailed = meters.get("ductor.effects.parked").tag("status", "failed").gauge().value();
		tx.executeWithoutResult((status) -> {
			effects.send(ok);
			effects.send(flaky);
			effects.send(doomed);
			effects.mail(unsure);
		});
		await().atMost(Duration.ofSeconds(20)).until(() -> settled(ok, flaky, doomed, unsure));
		assertThat(count("ductor.effects.scheduled", "effect", "send")).isEqualTo(scheduled + 3);
		assertThat(count("ductor.effects.scheduled", "effect", "mail")).isEqualTo(1);
		assertThat(count("ductor.effects.dispatched", "effect", "send", "outcome", "completed"))
			.isEqualTo(completed + 2);
		assertThat(count("ductor.effects.dispatched", "effect", "send", "outcome", "retry")).isEqualTo(retried + 1);
		assertThat(count("ductor.effects.dispatched", "effect", "send", "outcome", "failed"))
			.isEqualTo(failedSends + 1);
		assertThat(count("ductor.effects.dispatched", "effect", "mail", "outcome", "needs_decision")).isEqualTo(1);
		assertThat(meters.get("ductor.effects.lag").tag("effect", "send").timer().count()).isEqualTo(lags + 3);
		assertThat(meters.get("ductor.effects.dispatch.duration").tag("effect", "send").timers()).isNotEmpty();
		assertThat(meters.get("ductor.effects.parked").tag("status", "failed").gauge().value())
			.isEqualTo(parkedFailed + 1);
		assertThat(meters.get("ductor.effects.parked").tag("status", "needs_decision").gauge().value()).isEqualTo(1);
		assertThat(meters.get("ductor.effects.backlog").gauge().value()).isZero();
		assertThat(count("ductor.worker.runs", "worker", "drainer", "outcome", "success")).isPositive();

		IdempotencyService idempotency = context.getBean(IdempotencyService.class);
		IdempotentRequest request = new IdempotentRequest("", "orders", "key-" + UUID.randomUUID(), "f");
		ReserveOutcome first = idempotency.reserve(request);
		await().atMost(Duration.ofSeconds(5))
			.until(() -> meters.get("ductor.idempotency.pending").gauge().value() == 1);
		idempotency.complete(((ReserveOutcome.Reserved) first).reservation(), "order-1",
				new StoredResponse(201, Map.of(), new byte[0]));
		idempotency.reserve(request);
		assertThat(count("ductor.idempotency.reservations", "outcome", "reserved")).isEqualTo(1);
		assertThat(count("ductor.idempotency.reservations", "outcome", "replay")).isEqualTo(1);

		Health details = health.health(true);
		assertThat(details.getStatus().getCode()).isEqualTo("UP");
		assertThat(details.getDetails().get("backlog")).asString().contains("needsDecision=1");
		assertThat(details.getDetails().get("workers")).asString()
			.contains("drainer")
			.contains("reconciler")
			.contains("retention")
			.contains("sweeper");

		// the endpoint acts on what health reported, and says what it changed
		DuctorEndpoint endpoint = context.getBean(DuctorEndpoint.class);
		assertThat(endpoint.overview()).containsKeys("backlog", "workers");
		List<EffectIntent> failed = endpoint.intents("failed", null, null);
		assertThat(failed).extracting(EffectIntent::idempotencyKey).contains("send:" + doomed);
		EffectIntent undecided = endpoint.intents("needs_decision", null, 10).get(0);
		assertThat(endpoint.act(undecided.id(), "resolve", "mark_done").status()).isEqualTo(EffectStatus.COMPLETED);
		assertThat((Integer) endpoint.retryAll("send", "failed").get("retried")).isPositive();
		assertThatIllegalArgumentException().isThrownBy(() -> endpoint.act(undecided.id(), "explode", null))
			.withMessageContaining("action must be retry, cancel or resolve");
		// a client error (400 over HTTP), as every other bad read is
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.intents("lost", null, null))
			.withMessageContaining("status must be one of");
	}

	@Test
	void healthTurnsDownWhenParkedIntentsPassTheirThreshold() {
		DuctorHealthIndicator strict = new DuctorHealthIndicator(context.getBean(DuctorBacklog.class), List.of(), null,
				0);
		String doomed = "threshold-" + UUID.randomUUID();
		tx.executeWithoutResult((status) -> effects.send(doomed));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> operations.findByKey("send:" + doomed).orElseThrow().status() == EffectStatus.FAILED);
		Health down = strict.health(true);
		assertThat(down.getStatus().getCode()).isEqualTo("DOWN");
		assertThat(down.getDetails().get("reasons")).asString().contains("ductor.health.max-parked (0)");
		DuctorHealthIndicator doublyStrict = new DuctorHealthIndicator(context.getBean(DuctorBacklog.class), List.of(),
				Duration.ofNanos(1), 0);
		// a due intent that waits makes the age threshold trip too: both reasons are
		// reported, neither hides the other
		String late = "threshold-late-" + UUID.randomUUID();
		tx.executeWithoutResult((status) -> effects.send(late));
		String waiting = "ok-waiting-" + UUID.randomUUID();
		context.getBean(io.ductor.effect.internal.EffectDrainer.class).stop();
		try {
			tx.executeWithoutResult((status) -> effects.send(waiting));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> doublyStrict.health(true)
					.getDetails()
					.getOrDefault("reasons", List.of())
					.toString()
					.contains("ductor.health.max-oldest-age"));
			assertThat(doublyStrict.health(true).getDetails().get("reasons")).asString()
				.contains("ductor.health.max-oldest-age")
				.contains("ductor.health.max-parked (0)");
		}
		finally {
			context.getBean(io.ductor.effect.internal.EffectDrainer.class).start();
		}
		// the other test counts the dispatches of send from a baseline: these two must
		// not land after it
		await().atMost(Duration.ofSeconds(20))
			.until(() -> operations.findByKey("send:" + late).orElseThrow().status() == EffectStatus.FAILED
					&& operations.findByKey("send:" + waiting).orElseThrow().status() == EffectStatus.COMPLETED);
		DuctorHealthIndicator lenient = new DuctorHealthIndicator(context.getBean(DuctorBacklog.class), List.of(),
				Duration.ofHours(1), 1000);
		assertThat(lenient.health(true).getStatus().getCode()).isEqualTo("UP");
	}

	static boolean settled(String... keys) {
		for (String key : keys) {
			String prefix = key.startsWith("unsure") ? "mail:" : "send:";
			EffectStatus status = operations.findByKey(prefix + key)
				.map(EffectIntent::status)
				.orElse(EffectStatus.PENDING);
			if (status == EffectStatus.PENDING || status == EffectStatus.IN_FLIGHT) {
				return false;
			}
		}
		return true;
	}

	public static class Effects {

		private final JdbcClient jdbc;

		private final Map<String, Integer> failures = new java.util.concurrent.ConcurrentHashMap<>();

		public Effects(DataSource dataSource) {
			this.jdbc = JdbcClient.create(dataSource);
		}

		@DurableEffect(name = "send", key = "'send:' + #key", maxAttempts = 3)
		public void send(String key) {
			if (key.startsWith("doomed") || key.startsWith("threshold")) {
				throw new NonRetryableEffectException("refused");
			}
			if (key.startsWith("flaky") && this.failures.merge(key, 1, Integer::sum) == 1) {
				throw new IllegalStateException("first attempt fails");
			}
		}

		@DurableEffect(name = "mail", key = "'mail:' + #key", receiver = Receiver.NOT_IDEMPOTENT)
		public void mail(String key) {
			throw new IllegalStateException("timeout after sending");
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
			DuctorEffectsAutoConfiguration.class, DuctorIdempotencyAutoConfiguration.class,
			DuctorMetricsAutoConfiguration.class, DuctorHealthAutoConfiguration.class,
			DuctorEndpointAutoConfiguration.class })
	static class Infrastructure {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		Effects effects(DataSource dataSource) {
			return new Effects(dataSource);
		}

	}

}
