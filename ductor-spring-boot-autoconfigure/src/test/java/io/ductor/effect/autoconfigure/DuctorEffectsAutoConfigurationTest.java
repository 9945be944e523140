package io.ductor.effect.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.RecurringAlarms;
import io.ductor.effect.internal.EffectWriter;
import io.ductor.run.internal.RunFailureHandler;
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
			.hasSingleBean(EffectWriter.class));
	}

	@Test
	void producerOperatorAndAlarmServicesAreABeanEachAndAUserBeanReplacesItsOwnTypeOnly() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(EffectOutbox.class)
			.hasSingleBean(EffectOperations.class)
			.hasSingleBean(RecurringAlarms.class)
			.hasSingleBean(RunFailureHandler.class));
		this.runner.withUserConfiguration(UserOperations.class).run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(EffectOutbox.class)
				.hasSingleBean(EffectOperations.class)
				.hasSingleBean(RecurringAlarms.class);
			assertThat(context.getBean(EffectOperations.class)).isSameAs(UserOperations.OPERATIONS);
			assertThat(context.getBean(EffectOutbox.class)).isNotInstanceOf(EffectOperations.class);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class UserOperations {

		static final EffectOperations OPERATIONS = (EffectOperations) java.lang.reflect.Proxy.newProxyInstance(
				EffectOperations.class.getClassLoader(), new Class<?>[] { EffectOperations.class },
				(proxy, method, args) -> switch (method.getName()) {
					case "toString" -> "the application's operations";
					case "hashCode" -> 0;
					case "equals" -> proxy == args[0];
					default -> throw new UnsupportedOperationException(method.getName());
				});

		@Bean
		EffectOperations userOperations() {
			return OPERATIONS;
		}

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
