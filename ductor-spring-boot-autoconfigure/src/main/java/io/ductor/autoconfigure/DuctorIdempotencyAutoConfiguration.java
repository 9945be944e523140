package io.ductor.autoconfigure;

import javax.sql.DataSource;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import io.ductor.idempotency.IdempotencyRetentionPurger;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotencySweeper;
import io.ductor.idempotency.web.IdempotencyFilter;
import io.ductor.idempotency.web.TenantScopeResolver;
import io.ductor.jdbc.DuctorSchema;
import io.ductor.jdbc.PostgresNotificationListener;
import io.ductor.json.JsonCodec;
import io.ductor.metrics.DuctorObserver;
import io.ductor.observation.DuctorObservations;
import io.ductor.worker.PeriodicWorker;

/**
 * Auto-configuration for Ductor's ingress idempotency: the {@link IdempotencyService}, the
 * notification listener that wakes parked duplicates, the sweeper, the retention purger for
 * idempotency records and, in Spring MVC applications, {@code @Idempotent} handler methods.
 */
@AutoConfiguration(after = DuctorAutoConfiguration.class)
@ConditionalOnBean(DuctorSchema.class)
public final class DuctorIdempotencyAutoConfiguration {

	private static final int SWEEP_BATCH_SIZE = 1000;

	@Bean
	@ConditionalOnMissingBean
	IdempotencyService idempotencyService(DuctorSchema schema, DataSource dataSource,
			ObjectProvider<PlatformTransactionManager> transactionManager, JsonCodec json,
			ObjectProvider<PostgresNotificationListener> listener, ObjectProvider<DuctorObserver> observer,
			ObjectProvider<DuctorObservations> observations, DuctorProperties properties) {
		return new IdempotencyService(dataSource, DuctorAutoConfiguration.transactionManager(transactionManager, dataSource),
				json,
				properties.idempotency().toSettings(), listener.getIfAvailable(), DuctorAutoConfiguration.observer(observer),
				DuctorAutoConfiguration.observations(observations));
	}

	@Bean(name = "ductorSweeperWorker")
	@ConditionalOnMissingBean(name = "ductorSweeperWorker")
	@ConditionalOnBooleanProperty(name = "ductor.sweeper.enabled", matchIfMissing = true)
	PeriodicWorker ductorSweeperWorker(DuctorSchema schema, DataSource dataSource,
			ObjectProvider<DuctorObserver> observer, ObjectProvider<DuctorObservations> observations, DuctorProperties properties) {
		return new PeriodicWorker("sweeper", properties.sweeper().interval(),
				DuctorAutoConfiguration.WORKER_SHUTDOWN_TIMEOUT,
				new IdempotencySweeper(dataSource, SWEEP_BATCH_SIZE, DuctorAutoConfiguration.observer(observer)),
				DuctorAutoConfiguration.observer(observer), DuctorAutoConfiguration.observations(observations));
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyRetentionPurger idempotencyRetentionPurger(DataSource dataSource, DuctorProperties properties) {
		return new IdempotencyRetentionPurger(dataSource, properties.idempotency().retention());
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
				JsonCodec json, DuctorProperties properties,
				ObjectProvider<RequestMappingHandlerMapping> mappings) {
			return new IdempotencyFilter(service, tenants, json, properties.idempotency().headerName(), mappings,
					properties.idempotency().maxRequestSize(), properties.idempotency().maxResponseSize());
		}

	}

}
