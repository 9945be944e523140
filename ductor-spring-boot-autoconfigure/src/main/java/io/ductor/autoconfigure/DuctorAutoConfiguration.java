package io.ductor.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.autoconfigure.internal.DuctorConfigurationException;
import io.ductor.autoconfigure.internal.DuctorDataSources;
import io.ductor.autoconfigure.internal.DuctorPropertyNames;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.jdbc.DuctorDataSource;
import io.ductor.jdbc.internal.ApplicationMigrationsCheck;
import io.ductor.jdbc.internal.CommittingTransactions;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorBacklog;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.run.TickService;
import io.ductor.run.internal.DefaultTickService;
import io.ductor.run.internal.RunFailureHandler;
import io.ductor.run.internal.RunStore;
import io.ductor.worker.internal.Backoff;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.DuctorWorkers;
import io.ductor.worker.internal.PeriodicWorker;
import io.ductor.worker.internal.RetentionPurger;
import io.ductor.worker.internal.RetentionTask;
import io.ductor.worker.internal.WorkerStatus;

/**
 * Auto-configuration for Ductor's core: its schema, the JSON codec, the tick service, the
 * backlog and the retention worker, on the application's {@link DataSource} (its only or
 * primary one, or the one marked {@link DuctorDataSource}). Its schema is a database
 * initializer: beans annotated with {@link DependsOnDatabaseInitialization} (Ductor's
 * own, and the application's) are created after Ductor's migrations, which run after the
 * application's own (its Flyway or Liquibase migrations and SQL scripts).
 */
@AutoConfiguration(afterName = { "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
		"org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
		"org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
		"org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration" })
@ConditionalOnClass({ DataSource.class, JdbcClient.class, JsonMapper.class })
@ConditionalOnBean(DataSource.class)
@ConditionalOnBooleanProperty(name = "ductor.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DuctorProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
public final class DuctorAutoConfiguration {

	/**
	 * Fails start-up, before any bean is created, when the application's configuration
	 * sets a key under {@code ductor.} that Ductor does not read (a misspelled key would
	 * otherwise be ignored), naming it, where it was set and the closest key.
	 */
	// not @ConditionalOnMissingBean: a check of the configuration, not a service; a
	// BeanFactoryPostProcessor runs before conditions on beans could see an application's
	// own, and turning it off would let a misspelled key be silently ignored
	@Bean
	static BeanFactoryPostProcessor ductorPropertyNamesCheck(Environment environment) {
		return (beanFactory) -> {
			DuctorPropertyNames names = DuctorPropertyNames.load((beanFactory.getBeanClassLoader() != null)
					? beanFactory.getBeanClassLoader() : DuctorAutoConfiguration.class.getClassLoader());
			if (names != null) {
				names.check(environment);
			}
		};
	}

	/**
	 * Marks the transactions of every transaction manager bean from their commit to their
	 * completion, so that an effect called from an {@code afterCommit} callback is
	 * refused rather than written where nothing commits it.
	 */
	// not @ConditionalOnMissingBean: a BeanPostProcessor is created before the beans a
	// condition could compare it with, and without it an effect called after a commit
	// would be written where nothing commits it
	@Bean
	static BeanPostProcessor ductorCommittingTransactions() {
		return CommittingTransactions.postProcessor();
	}

	/**
	 * The {@code DataSource} that holds Ductor's tables and the transaction manager of
	 * Ductor's own transactions, chosen once for every part of Ductor.
	 */
	@Bean
	@ConditionalOnMissingBean
	DuctorDatabase ductorDatabase(ConfigurableListableBeanFactory beans) {
		return DuctorDataSources.choose(beans);
	}

	/**
	 * Ductor's migrations. Ordered after the application's own database initializers by
	 * {@link DuctorSchemaDatabaseInitializerDetector}, so that an application starting on
	 * an empty schema migrates first and Ductor's tables then join it.
	 */
	@Bean
	@ConditionalOnMissingBean
	DuctorSchema ductorSchema(DuctorDatabase database, DuctorProperties properties) {
		return new DuctorSchema(database.dataSource(), properties.schema().mode());
	}

	/**
	 * Warns at start-up when the application has Flyway migrations in
	 * {@code classpath:db/migration} and Spring Boot's Flyway auto-configuration is not
	 * on the class path, so that they would silently not run.
	 */
	@Bean
	@ConditionalOnMissingBean
	ApplicationMigrationsCheck ductorApplicationMigrationsCheck(ListableBeanFactory beans) {
		ClassLoader classLoader = (beans instanceof ConfigurableBeanFactory configurable
				&& configurable.getBeanClassLoader() != null) ? configurable.getBeanClassLoader()
						: DuctorAutoConfiguration.class.getClassLoader();
		return new ApplicationMigrationsCheck(beans, classLoader);
	}

	/**
	 * Every thread Ductor makes: virtual threads for its work when
	 * {@code spring.threads.virtual.enabled} is on (Java 21 or later), and one deadline,
	 * {@code ductor.shutdown-timeout}, for stopping them all.
	 */
	@Bean
	@ConditionalOnMissingBean
	DuctorThreads ductorThreads(Environment environment, DuctorProperties properties) {
		return new DuctorThreads(Threading.VIRTUAL.isActive(environment), properties.shutdownTimeout());
	}

	/**
	 * The one instrumentation seam of Ductor's collaborators: the meters when metrics are
	 * on, and the observations when an {@code ObservationRegistry} is there.
	 */
	@Bean
	@ConditionalOnMissingBean
	DuctorInstrumentation ductorInstrumentation(ObjectProvider<DuctorObserver> metrics,
			ObjectProvider<DuctorObservations> observations) {
		return DuctorInstrumentation.of(metrics.getIfUnique(() -> DuctorObserver.NOOP),
				observations.getIfUnique(() -> DuctorObservations.NOOP));
	}

	/**
	 * The application's {@code JsonMapper} (its only or primary one); one of Ductor's own
	 * only when the application has none. Several without a primary one fail start-up
	 * rather than store effect arguments with a mapper the application did not configure.
	 */
	@Bean
	@ConditionalOnMissingBean
	JsonCodec ductorJsonCodec(ObjectProvider<JsonMapper> jsonMapper, ListableBeanFactory beans) {
		JsonMapper unique = jsonMapper.getIfUnique();
		if (unique != null) {
			return new JsonCodec(unique);
		}
		String[] names = beans.getBeanNamesForType(JsonMapper.class);
		if (names.length > 0) {
			throw new DuctorConfigurationException(
					"Ductor found " + names.length + " JsonMapper beans and cannot tell which one stores effect"
							+ " arguments, run states and stored responses: " + String.join(", ", names),
					"Mark one JsonMapper bean @Primary.");
		}
		return new JsonCodec(JsonMapper.builder().findAndAddModules().build());
	}

	/** The SQL of runs and their transitions, which the tick service runs. */
	@Bean
	@ConditionalOnMissingBean
	RunStore ductorRunStore(DuctorDatabase database) {
		return new RunStore(JdbcClient.create(database.dataSource()));
	}

	@Bean
	@ConditionalOnMissingBean
	@DependsOnDatabaseInitialization
	TickService tickService(DuctorDatabase database, RunStore store, JsonCodec json,
			DuctorInstrumentation instrumentation, ObjectProvider<RunFailureHandler> failureHandler,
			DuctorProperties properties) {
		return new DefaultTickService(database.dataSource(), database.transactionManager(), store, json,
				properties.ticks().maxAttempts(), backoff(properties.ticks().backoff()), instrumentation,
				everyHandler(failureHandler.orderedStream().toList()));
	}

	/**
	 * Ductor's handler records the run's compensations; an application's is told besides,
	 * never instead of it.
	 */
	private static RunFailureHandler everyHandler(List<RunFailureHandler> handlers) {
		if (handlers.isEmpty()) {
			return RunFailureHandler.NONE;
		}
		return (runId) -> {
			int recorded = 0;
			for (RunFailureHandler handler : handlers) {
				recorded += handler.runFailed(runId);
			}
			return recorded;
		};
	}

	@Bean
	@ConditionalOnMissingBean
	@DependsOnDatabaseInitialization
	DuctorBacklog ductorBacklog(DuctorDatabase database, DuctorProperties properties) {
		return new DuctorBacklog(database.dataSource(), properties.backlog().cacheTtl(),
				properties.backlog().countLimit());
	}

	/** One round of the retention worker: every {@link RetentionPurger}, in order. */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ductor.retention.enabled", matchIfMissing = true)
	RetentionTask ductorRetentionTask(ObjectProvider<RetentionPurger> purgers, DuctorProperties properties) {
		return new RetentionTask(purgers.orderedStream().toList(), properties.retention().batchSize());
	}

	@Bean(name = "ductorRetentionWorker")
	@ConditionalOnMissingBean(name = "ductorRetentionWorker")
	@ConditionalOnBooleanProperty(name = "ductor.retention.enabled", matchIfMissing = true)
	@DependsOnDatabaseInitialization
	PeriodicWorker ductorRetentionWorker(DuctorThreads threads, RetentionTask task,
			DuctorInstrumentation instrumentation, DuctorProperties properties) {
		return new PeriodicWorker(threads, "retention", properties.retention().interval(), task, instrumentation);
	}

	/** The workers of this instance, whose statuses health and the endpoint show. */
	@Bean
	@ConditionalOnMissingBean
	DuctorWorkers ductorWorkers(ObjectProvider<PeriodicWorker> workers, ObjectProvider<EffectDrainer> drainer) {
		List<Supplier<WorkerStatus>> statuses = new ArrayList<>();
		drainer.orderedStream().forEach((bean) -> statuses.add(bean::status));
		workers.orderedStream().forEach((bean) -> statuses.add(bean::status));
		return new DuctorWorkers(statuses);
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
		@DependsOnDatabaseInitialization
		PostgresNotificationListener ductorNotificationListener(DuctorDatabase database, DuctorThreads threads) {
			return new PostgresNotificationListener(database.dataSource(),
					PostgresNotificationListener.DEFAULT_RECEIVE_TIMEOUT,
					PostgresNotificationListener.DEFAULT_MAX_RECONNECT_DELAY,
					PostgresNotificationListener.DEFAULT_VALIDATION_INTERVAL, threads);
		}

	}

	private static Backoff backoff(BackoffProperties backoff) {
		return new Backoff(backoff.initial(), backoff.max(), backoff.multiplier());
	}

}
