package io.ductor.modulith.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.config.EventExternalizationAutoConfiguration;

import io.ductor.amqp.DurableRabbit;
import io.ductor.kafka.DurableKafka;
import io.ductor.modulith.internal.DuctorListenerFactory;
import io.ductor.modulith.internal.EventRelay;
import io.ductor.modulith.internal.RelayEventExternalizer;

/**
 * Spring Modulith's event externalization through Ductor's message relays: with
 * {@code ductor-spring-boot-kafka} ({@link DurableKafka}) or
 * {@code ductor-spring-boot-amqp} ({@link DurableRabbit}) configured, an event that
 * Modulith's {@link EventExternalizationConfiguration} selects ({@code @Externalized}
 * ones by default) is recorded as a relay message in the publishing transaction, routed
 * and mapped as that configuration says. Needs Ductor as Modulith's publication registry
 * ({@link DuctorModulithAutoConfiguration}); off with
 * {@code ductor.modulith.externalization.enabled=false} (or Modulith's
 * {@code spring.modulith.events.externalization.enabled=false}).
 */
@AutoConfiguration(after = { DuctorModulithAutoConfiguration.class, EventExternalizationAutoConfiguration.class },
		afterName = { "io.ductor.kafka.autoconfigure.DuctorKafkaAutoConfiguration",
				"io.ductor.amqp.autoconfigure.DuctorAmqpAutoConfiguration" })
@ConditionalOnClass(EventExternalizationConfiguration.class)
@ConditionalOnBooleanProperty(name = "ductor.modulith.externalization.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "spring.modulith.events.externalization.enabled", matchIfMissing = true)
@ConditionalOnBean({ DuctorListenerFactory.class, EventExternalizationConfiguration.class })
public final class DuctorModulithExternalizationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(EventRelay.class)
	RelayEventExternalizer ductorRelayEventExternalizer(EventExternalizationConfiguration configuration,
			ObjectProvider<EventRelay> relays, BeanFactory beanFactory) {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setBeanResolver(new BeanFactoryResolver(beanFactory));
		List<EventRelay> all = relays.orderedStream().toList();
		return new RelayEventExternalizer(configuration, all, context);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(DurableKafka.class)
	@ConditionalOnBean(DurableKafka.class)
	static class KafkaRelay {

		// by name, not by type: every EventRelay bean is a relay the externalizer routes
		// to
		@Bean
		@ConditionalOnMissingBean(name = "ductorModulithKafkaRelay")
		EventRelay ductorModulithKafkaRelay(DurableKafka kafka) {
			return kafka::send;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(DurableRabbit.class)
	@ConditionalOnBean(DurableRabbit.class)
	static class RabbitRelay {

		// by name, not by type: every EventRelay bean is a relay the externalizer routes
		// to
		@Bean
		@ConditionalOnMissingBean(name = "ductorModulithRabbitRelay")
		EventRelay ductorModulithRabbitRelay(DurableRabbit rabbit) {
			return (exchange, routingKey, payload, headers) -> rabbit.send(exchange,
					(routingKey != null) ? routingKey : "", payload, headers);
		}

	}

}
