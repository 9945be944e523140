package io.ductor.observation.autoconfigure;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.observation.DefaultDuctorObservationConvention;
import io.ductor.observation.DuctorObservationConvention;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.observation.internal.MicrometerDuctorObservations;
import io.ductor.run.TickOutcome;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ductor's observations use the application's observation registry and convention when
 * there are any, and observe nothing (and fail nothing) without them or without
 * Micrometer.
 */
class DuctorObservationsAutoConfigurationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorObservationAutoConfiguration.class)
		.withPropertyValues("ductor.retention.enabled=false");

	@Test
	void ticksAreObservedInTheApplicationsRegistryWithItsConvention() {
		List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStop(Observation.Context context) {
				stopped.add(context);
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
		this.runner.withBean(ObservationRegistry.class, () -> registry)
			.withBean(DuctorObservationConvention.class, Tenanted::new)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(DuctorObservations.class)).isInstanceOf(MicrometerDuctorObservations.class);
				String runId = "run-" + UUID.randomUUID();
				assertThat(tick(context.getBean(TickService.class), runId).result())
					.isEqualTo(TickOutcome.Result.APPLIED);
				assertThat(stopped).singleElement().satisfies((tick) -> {
					assertThat(tick.getName()).isEqualTo("ductor.tick");
					assertThat(tick.getContextualName()).isEqualTo("ductor tick");
					assertThat(tick.getLowCardinalityKeyValues()).extracting(Object::toString)
						.contains("keyValue(outcome=applied)", "keyValue(tenant=shop)");
					assertThat(tick.getHighCardinalityKeyValue("ductor.run").getValue()).isEqualTo(runId);
				});
			});
	}

	@Test
	void withoutARegistryOrWithoutMicrometerNothingIsObservedAndTicksRun() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(DuctorObservations.class)).isSameAs(DuctorObservations.NOOP);
			assertThat(tick(context.getBean(TickService.class), "run-" + UUID.randomUUID()).result())
				.isEqualTo(TickOutcome.Result.APPLIED);
		});
		this.runner.withClassLoader(new FilteredClassLoader("io.micrometer.observation")).run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(DuctorObservations.class);
			assertThat(tick(context.getBean(TickService.class), "run-" + UUID.randomUUID()).result())
				.isEqualTo(TickOutcome.Result.APPLIED);
		});
	}

	private static TickOutcome<Integer> tick(TickService ticks, String runId) {
		ticks.start("counter", runId, 0);
		return ticks.tick(runId, "s1", Integer.class, (state, tick) -> state + 1);
	}

	/** A convention that adds a key to every observation. */
	static class Tenanted extends DefaultDuctorObservationConvention {

		@Override
		public KeyValues getLowCardinalityKeyValues(Observation.Context context) {
			return super.getLowCardinalityKeyValues(context).and("tenant", "shop");
		}

	}

}
