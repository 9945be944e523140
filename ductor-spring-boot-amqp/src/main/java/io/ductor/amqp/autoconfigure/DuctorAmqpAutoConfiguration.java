package io.ductor.amqp.autoconfigure;

import com.rabbitmq.client.Channel;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.amqp.autoconfigure.CachingConnectionFactoryConfigurer;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.amqp.autoconfigure.RabbitTemplateConfigurer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.core.annotation.Order;

import io.ductor.amqp.DurableRabbit;
import io.ductor.amqp.internal.AmqpMessageReader;
import io.ductor.amqp.internal.DefaultDurableRabbit;
import io.ductor.amqp.internal.MessageMetrics;
import io.ductor.amqp.internal.MicrometerMessageMetrics;
import io.ductor.amqp.internal.RabbitInboxRejectAdvisor;
import io.ductor.amqp.internal.RabbitRelay;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.json.internal.JsonCodec;

/**
 * {@link DurableRabbit} and its relay, when Spring AMQP and Ductor's effects are
 * configured ({@code ductor.amqp.enabled=false} turns them off). The relay publishes on a
 * connection of its own, made from the application's connection factory's client factory
 * (its host, credentials and TLS) and configured by {@code spring.rabbitmq.*}, with
 * correlated publisher confirms and returns whatever the application's factory uses; its
 * template follows {@code spring.rabbitmq.template.*} (observation, retry) and is always
 * mandatory. The inbox ({@link io.ductor.messaging.IdempotentListener}) reads the key of
 * an AMQP {@code Message} argument of a {@code @RabbitListener} method, and rejects a
 * message without a key without requeue.
 */
@AutoConfiguration(after = { RabbitAutoConfiguration.class, DuctorEffectsAutoConfiguration.class },
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
				"io.ductor.metrics.autoconfigure.DuctorMetricsAutoConfiguration" })
@ConditionalOnClass({ RabbitTemplate.class, Channel.class })
@ConditionalOnBean(EffectOutbox.class)
@ConditionalOnBooleanProperty(name = "ductor.amqp.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DuctorAmqpProperties.class)
public final class DuctorAmqpAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnSingleCandidate(ConnectionFactory.class)
	RabbitRelay ductorRabbitRelay(ConnectionFactory connectionFactory,
			ObjectProvider<CachingConnectionFactoryConfigurer> connectionFactoryConfigurer,
			ObjectProvider<RabbitTemplateConfigurer> templateConfigurer, DuctorAmqpProperties properties,
			ObjectProvider<MessageMetrics> metrics, ApplicationContext context) {
		if (!(connectionFactory instanceof AbstractConnectionFactory application)) {
			throw new IllegalStateException("Ductor's RabbitMQ relay opens a connection of its own from the "
					+ "application's connection factory, but " + connectionFactory.getClass().getName()
					+ " is not an AbstractConnectionFactory; define a CachingConnectionFactory or set "
					+ "ductor.amqp.enabled=false");
		}
		CachingConnectionFactory relay = new CachingConnectionFactory(application.getRabbitConnectionFactory());
		connectionFactoryConfigurer.ifAvailable((configurer) -> configurer.configure(relay));
		relay.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
		relay.setPublisherReturns(true);
		relay.setConnectionNameStrategy((factory) -> properties.connectionName());
		relay.setApplicationContext(context);
		relay.afterPropertiesSet();
		RabbitTemplate template = new RabbitTemplate();
		templateConfigurer.ifAvailable((configurer) -> configurer.configure(template, relay));
		template.setConnectionFactory(relay);
		template.setApplicationContext(context);
		// a returned message is read from its CorrelationData; nothing else to call
		template.setReturnsCallback((returned) -> {
		});
		return new RabbitRelay(relay, template, properties.confirmTimeout(),
				metrics.getIfAvailable(() -> MessageMetrics.NONE));
	}

	@Bean
	@ConditionalOnMissingBean
	DurableRabbit durableRabbit(EffectOutbox outbox, JsonCodec json) {
		return new DefaultDurableRabbit(outbox, json.mapper());
	}

	@Bean
	@ConditionalOnMissingBean
	@Order(0)
	AmqpMessageReader ductorAmqpMessageReader() {
		return new AmqpMessageReader();
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RabbitInboxRejectAdvisor ductorRabbitInboxRejectAdvisor() {
		return new RabbitInboxRejectAdvisor();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	@ConditionalOnBean(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		MessageMetrics ductorRabbitMessageMetrics(MeterRegistry registry) {
			return new MicrometerMessageMetrics(registry);
		}

	}

}
