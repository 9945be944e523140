package io.ductor.idempotency.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.internal.DefaultIdempotencyService;
import io.ductor.idempotency.internal.IdempotencyRetentionPurger;
import io.ductor.idempotency.internal.IdempotencyStore;
import io.ductor.idempotency.internal.IdempotencySweeper;
import io.ductor.idempotency.web.TenantScopeResolver;
import io.ductor.idempotency.web.internal.HandlerExceptions;
import io.ductor.idempotency.web.internal.IdempotencyFilter;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.json.internal.JsonCodec;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.PeriodicWorker;

/**
 * Auto-configuration for Ductor's ingress idempotency: the {@link IdempotencyService},
 * the sweeper, the retention purger for idempotency records and, in Spring MVC
 * applications, {@code @Idempotent} handler methods, configured by
 * {@link DuctorIdempotencyProperties} ({@code ductor.idempotency.*}).
 */
@AutoConfiguration(after = DuctorAutoConfiguration.class)
@ConditionalOnBean(DuctorSchema.class)
@EnableConfigurationProperties(DuctorIdempotencyProperties.class)
public final class DuctorIdempotencyAutoConfiguration {

	private static final int SWEEP_BATCH_SIZE = 1000;

	/** The SQL of idempotency records, which the service and the sweeper run. */
	@Bean
	@ConditionalOnMissingBean
	IdempotencyStore ductorIdempotencyStore(DuctorDatabase database) {
		return new IdempotencyStore(database.dataSource());
	}

	@Bean
	@ConditionalOnMissingBean
	@DependsOnDatabaseInitialization
	IdempotencyService idempotencyService(DuctorDatabase database, IdempotencyStore store, JsonCodec json,
			ObjectProvider<PostgresNotificationListener> listener, DuctorInstrumentation instrumentation,
			DuctorIdempotencyProperties properties) {
		return new DefaultIdempotencyService(database.dataSource(), database.transactionManager(), store, json,
				properties.toSettings(), listener.getIfAvailable(), instrumentation);
	}

	/** One round of the sweeper worker: releases expired reservations. */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ductor.idempotency.sweeper.enabled", matchIfMissing = true)
	IdempotencySweeper ductorIdempotencySweeper(IdempotencyStore store, DuctorInstrumentation instrumentation) {
		return new IdempotencySweeper(store, SWEEP_BATCH_SIZE, instrumentation.metrics());
	}

	@Bean(name = "ductorSweeperWorker")
	@ConditionalOnMissingBean(name = "ductorSweeperWorker")
	@ConditionalOnBooleanProperty(name = "ductor.idempotency.sweeper.enabled", matchIfMissing = true)
	@DependsOnDatabaseInitialization
	PeriodicWorker ductorSweeperWorker(DuctorThreads threads, IdempotencySweeper sweeper,
			DuctorInstrumentation instrumentation, DuctorIdempotencyProperties properties) {
		return new PeriodicWorker(threads, "sweeper", properties.sweeper().interval(), sweeper, instrumentation);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyRetentionPurger idempotencyRetentionPurger(DuctorDatabase database,
			DuctorIdempotencyProperties properties) {
		return new IdempotencyRetentionPurger(database.dataSource(), properties.retention());
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ RequestMappingHandlerMapping.class, jakarta.servlet.Filter.class })
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	static class WebMvcConfiguration {

		@Bean
		@ConditionalOnMissingBean
		TenantScopeResolver ductorTenantScopeResolver() {
			return TenantScopeResolver.principal();
		}

		@Bean
		@ConditionalOnMissingBean
		IdempotencyFilter ductorIdempotencyFilter(IdempotencyService service, TenantScopeResolver tenants,
				JsonCodec json, DuctorIdempotencyProperties properties,
				ObjectProvider<RequestMappingHandlerMapping> mappings) {
			return new IdempotencyFilter(service, properties.toSettings(), tenants, json, properties.headerName(),
					mappings, properties.maxRequestSize(), properties.maxResponseSize());
		}

		/**
		 * Tells the filter that a handler threw, also when Spring MVC answered for it.
		 */
		@Bean
		@ConditionalOnMissingBean
		HandlerExceptions ductorHandlerExceptions() {
			return new HandlerExceptions();
		}

		/**
		 * Registers the filter for the forwards, includes and asynchronous dispatches it
		 * must see too.
		 */
		@Bean
		@ConditionalOnMissingBean(name = "ductorIdempotencyFilterRegistration")
		FilterRegistrationBean<IdempotencyFilter> ductorIdempotencyFilterRegistration(IdempotencyFilter filter) {
			FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(filter);
			registration.setDispatcherTypes(IdempotencyFilter.DISPATCHER_TYPES);
			registration.setOrder(IdempotencyFilter.ORDER);
			registration.setAsyncSupported(true);
			return registration;
		}

	}

}
