package io.ductor.testing.internal;

import javax.sql.DataSource;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.effect.internal.DurableEffects;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.json.internal.JsonCodec;
import io.ductor.run.TickService;
import io.ductor.testing.DuctorTester;

/**
 * Auto-configuration of the {@link DuctorTester}, imported by
 * {@link AutoConfigureDuctorTester} only: it is not among the application's
 * auto-configurations. Ductor's DataSource is wrapped so that its connections carry the
 * tester's clock.
 */
@AutoConfiguration(after = { DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
		DuctorIdempotencyAutoConfiguration.class })
@ConditionalOnBean(DurableEffects.class)
public final class DuctorTesterAutoConfiguration {

	/**
	 * Gives the connections of Ductor's DataSource the tester's clock.
	 */
	@Bean
	static DuctorTesterClockPostProcessor ductorTesterClockPostProcessor() {
		return new DuctorTesterClockPostProcessor();
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	DuctorTester ductorTester(DurableEffects effects, EffectOutbox outbox, DataSource dataSource, JsonCodec json,
			ObjectProvider<TickService> ticks) {
		return new DuctorTester(effects, outbox, dataSource, json.mapper(), ticks.getIfAvailable());
	}

}
