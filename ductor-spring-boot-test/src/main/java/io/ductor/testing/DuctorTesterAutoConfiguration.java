package io.ductor.testing;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.effect.internal.AlarmScheduler;
import io.ductor.effect.internal.EffectTestSupport;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.json.internal.JsonCodec;
import io.ductor.run.TickService;
import io.ductor.testing.internal.DuctorTesterClockPostProcessor;

/**
 * Auto-configuration of the {@link DuctorTester}, imported by
 * {@link AutoConfigureDuctorTester} only: it is not among the application's
 * auto-configurations. Ductor's DataSource is wrapped so that its connections carry the
 * tester's clock. Package-private: it is Ductor's, and only the annotation names it.
 */
@AutoConfiguration(after = { DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
		DuctorIdempotencyAutoConfiguration.class })
@ConditionalOnBean(EffectTestSupport.class)
final class DuctorTesterAutoConfiguration {

	/**
	 * Gives the connections of Ductor's DataSource the tester's clock.
	 */
	@Bean
	static DuctorTesterClockPostProcessor ductorTesterClockPostProcessor() {
		return new DuctorTesterClockPostProcessor();
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	DuctorTester ductorTester(EffectTestSupport effects, AlarmScheduler alarmScheduler, DuctorDatabase database,
			JsonCodec json, ObjectProvider<TickService> ticks) {
		return new DuctorTester(effects, alarmScheduler, database.dataSource(), json.mapper(), ticks.getIfAvailable());
	}

}
