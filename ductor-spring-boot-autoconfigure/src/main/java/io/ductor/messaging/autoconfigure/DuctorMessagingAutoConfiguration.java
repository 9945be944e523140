package io.ductor.messaging.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.messaging.Message;

import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.messaging.IdempotentListener;
import io.ductor.messaging.ListenerMessageReader;
import io.ductor.messaging.internal.IdempotentListenerAdvisor;
import io.ductor.messaging.internal.IdempotentListenerDeclarations;
import io.ductor.messaging.internal.IdempotentListenerInterceptor;
import io.ductor.messaging.internal.SpringMessageReader;

/**
 * The inbox: applies {@link IdempotentListener} methods once per message key, with the
 * {@link IdempotencyService}. Broker modules add their {@link ListenerMessageReader}.
 */
@AutoConfiguration(after = DuctorIdempotencyAutoConfiguration.class)
@ConditionalOnBean(IdempotencyService.class)
@Import(DuctorMessagingAutoConfiguration.AutoProxyRegistrar.class)
public final class DuctorMessagingAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static IdempotentListenerAdvisor ductorIdempotentListenerAdvisor(
			ObjectProvider<IdempotentListenerInterceptor> interceptor) {
		return new IdempotentListenerAdvisor(interceptor);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentListenerInterceptor ductorIdempotentListenerInterceptor(IdempotencyService idempotency,
			ObjectProvider<ListenerMessageReader> readers) {
		return new IdempotentListenerInterceptor(idempotency, readers.orderedStream().toList());
	}

	@Bean
	@ConditionalOnMissingBean
	static IdempotentListenerDeclarations ductorIdempotentListenerDeclarations(
			ConfigurableListableBeanFactory beanFactory) {
		return new IdempotentListenerDeclarations(beanFactory);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Message.class)
	static class SpringMessagingConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@Order(Ordered.LOWEST_PRECEDENCE)
		SpringMessageReader ductorSpringMessageReader() {
			return new SpringMessageReader();
		}

	}

	/**
	 * Makes sure an auto-proxy creator exists, so the advisor applies even without Spring
	 * Boot's AOP auto-configuration.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		}

	}

}
