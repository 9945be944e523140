package io.ductor.effect.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.internal.DurableEffects;
import io.ductor.effect.EffectOutbox;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.RetentionPurger;

import static org.assertj.core.api.Assertions.assertThat;

class DuctorEffectsAutoConfigurationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class)
		.withPropertyValues("ductor.effects.drainer.enabled=false");

	@Test
	void theEffectRetentionPurgerBacksOffByNameAndTheIdempotencyOneDoesNotHideIt() {
		this.runner.withUserConfiguration(UserPurger.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean("ductorEffectRetentionPurger")).isSameAs(UserPurger.PURGER);
		});
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.hasBean("ductorEffectRetentionPurger")
			.hasSingleBean(EffectOutbox.class)
			.hasSingleBean(DurableEffects.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserPurger {

		static final RetentionPurger PURGER = (batchSize) -> 0;

		@Bean
		RetentionPurger ductorEffectRetentionPurger() {
			return PURGER;
		}

	}

}
