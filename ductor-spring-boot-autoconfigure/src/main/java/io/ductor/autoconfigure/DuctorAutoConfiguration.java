package io.ductor.autoconfigure;

import java.time.Duration;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

import io.ductor.health.DuctorBacklog;
import io.ductor.jdbc.DuctorSchema;
import io.ductor.jdbc.PostgresNotificationListener;
import io.ductor.json.JsonCodec;
import io.ductor.metrics.DuctorObserver;
import io.ductor.observation.DuctorObservationConvention;
import io.ductor.observation.DuctorObservations;
import io.ductor.observation.MicrometerDuctorObservations;
import io.ductor.observation.TraceContextSource;
import io.ductor.run.TickService;
import io.ductor.worker.PeriodicWorker;
import io.ductor.worker.RetentionPurger;
import io.ductor.worker.RetentionTask;

/**
 * Auto-configuration for Ductor: its schema, the JSON codec and the tick service, on the
 * application's single {@link DataSource}.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
		"org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
		"org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
		"org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration" })
@ConditionalOnClass({ DataSource.class, JdbcClient.class, JsonMapper.class })
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBooleanProperty(name = "ductor.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DuctorProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
public final class DuctorAutoConfiguration {

	/** How long stopping waits for a periodic worker's round. */
	static final Duration WORKER_SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);

	/**
	 * Runs after the application's own database initializers (its Flyway or Liquibase
	 * migrations), so that an application starting on an empty schema migrates first and Ductor's
	 * tables then join it.
	 */
	@Bean
	@ConditionalOnMissingBean
	@DependsOnDatabaseInitialization
	DuctorSchema ductorSchema(DataSource dataSource, DuctorProperties properties) {
		return new DuctorSchema(dataSource, properties.schema().mode());
	}

	@Bean
	@ConditionalOnMissingBean
	JsonCodec ductorJsonCodec(ObjectProvider<JsonMapper> jsonMapper) {
		return new JsonCodec(jsonMapper.getIfUnique(() -> JsonMapper.builder().findAndAddModules().build()));
	}

	@Bean
	@ConditionalOnMissingBean
	TickService tickService(DuctorSchema schema, DataSource dataSource,
			ObjectProvider<PlatformTransactionManager> transactionManager, JsonCodec json,
			ObjectProvider<DuctorObserver> observer, ObjectProvider<DuctorObservations> observations, DuctorProperties properties) {
		return new TickService(dataSource, transactionManager(transactionManager, dataSource), json,
				properties.ticks().maxAttempts(), properties.ticks().backoff().toBackoff(), observer(observer),
				observations(observations));
	}

	@Bean
	@ConditionalOnMissingBean
	DuctorBacklog ductorBacklog(DuctorSchema schema, DataSource dataSource, DuctorProperties properties) {
		return new DuctorBacklog(dataSource, properties.backlog().cacheTtl(), properties.backlog().countLimit());
	}

	@Bean(name = "ductorRetentionWorker")
	@ConditionalOnMissingBean(name = "ductorRetentionWorker")
	@ConditionalOnBooleanProperty(name = "ductor.retention.enabled", matchIfMissing = true)
	PeriodicWorker ductorRetentionWorker(DuctorSchema schema, ObjectProvider<RetentionPurger> purgers,
			ObjectProvider<DuctorObserver> observer, ObjectProvider<DuctorObservations> observations, DuctorProperties properties) {
		DuctorProperties.Retention retention = properties.retention();
		return new PeriodicWorker("retention", retention.interval(), WORKER_SHUTDOWN_TIMEOUT,
				new RetentionTask(purgers.orderedStream().toList(), retention.batchSize()), observer(observer),
				observations(observations));
	}

	/** The application's transaction manager, or one of Ductor's own on {@code dataSource}. */
	static PlatformTransactionManager transactionManager(ObjectProvider<PlatformTransactionManager> transactionManager,
			DataSource dataSource) {
		return transactionManager.getIfUnique(() -> new DataSourceTransactionManager(dataSource));
	}

	/** The observer Ductor's components report to: Ductor's meters, the application's own, or none. */
	static DuctorObserver observer(ObjectProvider<DuctorObserver> observer) {
		return observer.getIfUnique(() -> DuctorObserver.NOOP);
	}

	/** Where Ductor's work is observed: the application's observation registry, or nowhere. */
	static DuctorObservations observations(ObjectProvider<DuctorObservations> observations) {
		return observations.getIfUnique(() -> DuctorObservations.NOOP);
	}

	/**
	 * Ductor's observations in the application's {@code ObservationRegistry}, when Micrometer's
	 * observation API is present; with a convention bean, that convention names them. The trace
	 * context an unobserved recording stores comes from the tracer's source
	 * ({@link DuctorTracingAutoConfiguration}), when there is one.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "io.micrometer.observation.ObservationRegistry")
	static class ObservationConfiguration {

		@Bean
		@ConditionalOnMissingBean
		DuctorObservations ductorObservations(
				ObjectProvider<io.micrometer.observation.ObservationRegistry> registry,
				ObjectProvider<DuctorObservationConvention> convention, ObjectProvider<TraceContextSource> traceContexts,
				DuctorProperties properties) {
			io.micrometer.observation.ObservationRegistry available = registry.getIfUnique();
			return (available != null) ? new MicrometerDuctorObservations(available, convention.getIfUnique(),
					traceContexts.getIfUnique(() -> TraceContextSource.NONE),
					properties.effects().tracing().observeRecording()) : DuctorObservations.NOOP;
		}

	}

	/**
	 * One connection that listens for Ductor's notifications (effects committed by other
	 * instances, idempotency keys settled) and reconnects by itself.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(PGConnection.class)
	static class NotificationListenerConfiguration {

		@Bean
		@ConditionalOnMissingBean
		PostgresNotificationListener ductorNotificationListener(DuctorSchema schema, DataSource dataSource) {
			return new PostgresNotificationListener(dataSource);
		}

	}

}
