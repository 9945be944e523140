package io.ductor.effect.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Lazy;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.BackoffProperties;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.RecurringAlarms;
import io.ductor.effect.internal.AlarmOccurrences;
import io.ductor.effect.internal.AlarmScheduler;
import io.ductor.effect.internal.CommitNotifier;
import io.ductor.effect.internal.Compensations;
import io.ductor.effect.internal.DefaultEffectOperations;
import io.ductor.effect.internal.DefaultEffectOutbox;
import io.ductor.effect.internal.DefaultRecurringAlarms;
import io.ductor.effect.internal.DrainSession;
import io.ductor.effect.internal.DrainerLeases;
import io.ductor.effect.internal.DrainerWakeUps;
import io.ductor.effect.internal.DurableEffectAdvisor;
import io.ductor.effect.internal.DurableEffectInterceptor;
import io.ductor.effect.internal.EffectDispatcher;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.effect.internal.EffectMethods;
import io.ductor.effect.internal.EffectPayloads;
import io.ductor.effect.internal.EffectReconciliation;
import io.ductor.effect.internal.EffectRegistry;
import io.ductor.effect.internal.EffectRetentionPurger;
import io.ductor.effect.internal.EffectRetrySettings;
import io.ductor.effect.internal.EffectSlots;
import io.ductor.effect.internal.EffectTestSupport;
import io.ductor.effect.internal.EffectWriter;
import io.ductor.effect.internal.ExpiredLeaseRedriver;
import io.ductor.effect.internal.IntentClaims;
import io.ductor.effect.internal.IntentOutcomes;
import io.ductor.effect.internal.IntentReads;
import io.ductor.effect.internal.IntentRecorder;
import io.ductor.effect.internal.IntentRedrive;
import io.ductor.effect.internal.IntentRetention;
import io.ductor.effect.internal.LocalDrainer;
import io.ductor.effect.internal.OperatorMoves;
import io.ductor.effect.internal.ReconcileRounds;
import io.ductor.effect.internal.RecurringAlarmDeclaration;
import io.ductor.effect.internal.RecurringAlarmStore;
import io.ductor.effect.internal.SettledIntents;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.json.internal.JsonCodec;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.run.TickService;
import io.ductor.run.internal.RunFailureHandler;
import io.ductor.worker.internal.Backoff;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.PeriodicWorker;
import io.ductor.worker.internal.RetentionPurger;

/**
 * Auto-configuration for durable effects: the {@code @DurableEffect} advisor, the
 * {@link EffectOutbox}, {@link EffectOperations} and {@link RecurringAlarms} beans, the
 * drainer, the lease reconciler and the recurring-alarm scheduler, configured by
 * {@link DuctorEffectsProperties} ({@code ductor.effects.*}).
 * <p>
 * The three services are three beans, each {@code @ConditionalOnMissingBean} on its own
 * type: an application's bean of one of them replaces that one, and the other two stay.
 * Ductor's own operator tools (the actuator endpoint, the console) use whichever
 * {@link EffectOperations} bean there is.
 */
@AutoConfiguration(after = DuctorAutoConfiguration.class)
@ConditionalOnBean(DuctorSchema.class)
@EnableConfigurationProperties(DuctorEffectsProperties.class)
@Import(AutoProxyRegistrar.class)
public final class DuctorEffectsAutoConfiguration {

	/** The most reconciliation rounds one reconciler round asks, one after the other. */
	private static final int RECONCILE_BATCH_SIZE = 50;

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static EffectMethods ductorEffectMethods() {
		return new EffectMethods();
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static DurableEffectAdvisor ductorDurableEffectAdvisor(ObjectProvider<DurableEffectInterceptor> interceptor) {
		return new DurableEffectAdvisor(interceptor);
	}

	/**
	 * The per-effect overrides of {@code ductor.effects.overrides}, whose keys are effect
	 * names with dots.
	 */
	@Bean
	@ConditionalOnMissingBean
	DuctorEffectOverrides ductorEffectOverrides(Environment environment, DuctorEffectsProperties properties) {
		return DuctorEffectOverrides.bind(environment, properties.backoff());
	}

	/**
	 * The recurring alarms of {@code ductor.effects.alarms}, whose keys are alarm names,
	 * possibly with dots.
	 */
	@Bean
	@ConditionalOnMissingBean
	DuctorConfiguredAlarms ductorConfiguredAlarms(Environment environment) {
		return DuctorConfiguredAlarms.bind(environment);
	}

	@Bean
	@ConditionalOnMissingBean
	EffectRegistry ductorEffectRegistry(EffectMethods methods, BeanFactory beanFactory, JsonCodec json,
			DuctorEffectsProperties properties, DuctorEffectOverrides overrides) {
		return new EffectRegistry(methods, beanFactory, json.mapper().getTypeFactory(),
				retrySettings(properties, overrides));
	}

	/**
	 * Checks, once every bean is ready, that each key of {@code ductor.effects.overrides}
	 * and the effect of each recurring alarm name an effect of the application; otherwise
	 * start-up fails naming the property, where it was set and the closest effect.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "ductorEffectNamesCheck")
	SmartInitializingSingleton ductorEffectNamesCheck(Environment environment, EffectRegistry registry,
			DuctorConfiguredAlarms alarms) {
		return () -> EffectKeys.checkNames(environment, registry.names(), alarms);
	}

	/**
	 * Declares the recurring alarms of {@code ductor.effects.alarms} once every bean is
	 * ready (after the check of the names), so that an unknown effect or arguments that
	 * do not fit it fail start-up naming the property.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "ductorRecurringAlarmDeclarations")
	SmartInitializingSingleton ductorRecurringAlarmDeclarations(io.ductor.effect.internal.RecurringAlarms recurring,
			DuctorDatabase database, DuctorConfiguredAlarms alarms) {
		List<RecurringAlarmDeclaration> declared = new ArrayList<>();
		new TreeMap<>(alarms.byName()).forEach((name, alarm) -> declared.add(new RecurringAlarmDeclaration(name,
				"ductor.effects.alarms." + name, alarm.effect(), alarm.toSchedule(), alarm.arguments())));
		return () -> recurring.declareAll(declared, new TransactionTemplate(database.transactionManager()));
	}

	/**
	 * The statements on Ductor's effect tables, and the codec of effect arguments.
	 */
	@Configuration(proxyBeanMethods = false)
	static class EffectStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		IntentRecorder ductorIntentRecorder(DuctorDatabase database) {
			return new IntentRecorder(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		IntentClaims ductorIntentClaims(DuctorDatabase database) {
			return new IntentClaims(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		IntentOutcomes ductorIntentOutcomes(DuctorDatabase database) {
			return new IntentOutcomes(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		IntentReads ductorIntentReads(DuctorDatabase database) {
			return new IntentReads(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		IntentRedrive ductorIntentRedrive(DuctorDatabase database) {
			return new IntentRedrive(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		IntentRetention ductorIntentRetention(DuctorDatabase database) {
			return new IntentRetention(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		OperatorMoves ductorOperatorMoves(DuctorDatabase database) {
			return new OperatorMoves(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		AlarmOccurrences ductorAlarmOccurrences(DuctorDatabase database) {
			return new AlarmOccurrences(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		RecurringAlarmStore ductorRecurringAlarmStore(DuctorDatabase database) {
			return new RecurringAlarmStore(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		DrainerLeases ductorDrainerLeases(DuctorDatabase database) {
			return new DrainerLeases(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		ReconcileRounds ductorReconcileRounds(DuctorDatabase database) {
			return new ReconcileRounds(database.dataSource());
		}

		@Bean
		@ConditionalOnMissingBean
		@DependsOnDatabaseInitialization
		EffectSlots ductorEffectSlots(DuctorDatabase database, EffectRegistry registry) {
			return new EffectSlots(database.dataSource(), database.transactionManager(), registry::concurrencyLimits);
		}

		/** Encodes effect arguments with the application's {@code JsonMapper}. */
		@Bean
		@ConditionalOnMissingBean
		EffectPayloads ductorEffectPayloads(JsonCodec json, DuctorEffectsProperties properties) {
			return new EffectPayloads(json.mapper(), properties.maxPayloadSize().toBytes());
		}

	}

	/**
	 * What records, dispatches, reconciles and settles intents.
	 */
	@Configuration(proxyBeanMethods = false)
	static class EffectEngineConfiguration {

		@Bean
		@ConditionalOnMissingBean
		LocalDrainer ductorLocalDrainer() {
			return new LocalDrainer();
		}

		@Bean
		@ConditionalOnMissingBean
		SettledIntents ductorSettledIntents(ApplicationEventPublisher events, LocalDrainer drainer) {
			return new SettledIntents(events, drainer);
		}

		@Bean
		@ConditionalOnMissingBean
		EffectDispatcher ductorEffectDispatcher(EffectRegistry registry, EffectPayloads payloads,
				DuctorInstrumentation instrumentation, DuctorEffectsProperties properties) {
			return new EffectDispatcher(registry, payloads, instrumentation, properties.drainer().pollInterval(),
					backoff(properties.reconciliation().backoff()));
		}

		@Bean
		@ConditionalOnMissingBean
		EffectReconciliation ductorEffectReconciliation(ReconcileRounds rounds, EffectRegistry registry,
				EffectPayloads payloads, DuctorInstrumentation instrumentation, DuctorEffectsProperties properties) {
			return new EffectReconciliation(rounds, registry, payloads, instrumentation,
					new EffectReconciliation.Settings(properties.reconciliation().maxRounds(),
							backoff(properties.reconciliation().backoff()), properties.drainer().lease(),
							RECONCILE_BATCH_SIZE));
		}

		/**
		 * Wakes the drainers of other instances after a commit; its thread ends within
		 * {@code ductor.shutdown-timeout} when the context closes.
		 */
		@Bean
		@ConditionalOnMissingBean
		CommitNotifier ductorCommitNotifier(IntentRecorder recorder, LocalDrainer drainer, DuctorThreads threads,
				DuctorEffectsProperties properties) {
			return new CommitNotifier(recorder, drainer.instanceId(), notifyMode(properties.drainer()), threads);
		}

		@Bean
		@ConditionalOnMissingBean
		EffectWriter ductorEffectWriter(DuctorDatabase database, IntentRecorder recorder, EffectPayloads payloads,
				CommitNotifier notifier, LocalDrainer drainer, DuctorInstrumentation instrumentation,
				DuctorEffectsProperties properties) {
			return new EffectWriter(database.dataSource(), recorder, payloads, notifier, drainer,
					properties.drainer().dispatchAtCommit(), instrumentation);
		}

		@Bean
		@ConditionalOnMissingBean
		Compensations ductorCompensations(DuctorDatabase database, EffectRegistry registry, EffectPayloads payloads,
				EffectWriter writer, IntentRecorder recorder, IntentReads reads, OperatorMoves moves) {
			return new Compensations(database.dataSource(), registry, payloads, writer, recorder, reads, moves);
		}

		/**
		 * Records a run's compensations in the transaction of the tick that fails it; the
		 * tick service receives it beside any handler of the application's. Not
		 * conditional: the compensations of a failed run are a promise, not an extension
		 * point.
		 */
		@Bean
		RunFailureHandler ductorRunFailureHandler(Compensations compensations) {
			return compensations::runFailed;
		}

		@Bean
		@ConditionalOnMissingBean
		io.ductor.effect.internal.RecurringAlarms ductorRecurringAlarmDeclarer(RecurringAlarmStore store,
				EffectRegistry registry, EffectPayloads payloads, AlarmOccurrences occurrences) {
			return new io.ductor.effect.internal.RecurringAlarms(store, registry, payloads, occurrences);
		}

		@Bean
		@ConditionalOnMissingBean
		DurableEffectInterceptor ductorDurableEffectInterceptor(EffectRegistry registry, EffectWriter writer,
				Compensations compensations) {
			return new DurableEffectInterceptor(registry, writer, compensations);
		}

		@Bean
		@ConditionalOnMissingBean
		EffectTestSupport ductorEffectTestSupport(IntentClaims claims, IntentOutcomes outcomes, IntentReads reads,
				IntentRedrive redrive, EffectDispatcher dispatcher, EffectRegistry registry,
				EffectReconciliation reconciliation, SettledIntents settled, LocalDrainer drainer,
				io.ductor.effect.internal.RecurringAlarms recurring, DuctorDatabase database,
				DuctorEffectsProperties properties) {
			return new EffectTestSupport(claims, outcomes, reads, redrive, dispatcher, registry, reconciliation,
					settled, drainer, recurring, database.transactionManager(), properties.drainer().lease(),
					properties.reconciler().batchSize());
		}

		private static CommitNotifier.Mode notifyMode(DuctorEffectsProperties.Drainer drainer) {
			if (!drainer.notifyOnCommit()) {
				return CommitNotifier.Mode.OFF;
			}
			return drainer.notifyInTransaction() ? CommitNotifier.Mode.IN_TRANSACTION
					: CommitNotifier.Mode.AFTER_COMMIT;
		}

	}

	/**
	 * The three services, split by who calls them. Each is replaced by a bean of its own
	 * type; the rest of the feature does not go through them, so it keeps working with an
	 * application's own.
	 */
	@Configuration(proxyBeanMethods = false)
	static class EffectServicesConfiguration {

		@Bean
		@ConditionalOnMissingBean
		EffectOutbox effectOutbox(EffectRegistry registry, EffectWriter writer, IntentRecorder recorder,
				AlarmOccurrences occurrences, Compensations compensations) {
			return new DefaultEffectOutbox(registry, writer, recorder, occurrences, compensations);
		}

		@Bean
		@ConditionalOnMissingBean
		EffectOperations effectOperations(EffectRegistry registry, IntentReads reads, OperatorMoves moves,
				AlarmOccurrences occurrences, LocalDrainer drainer, Compensations compensations, EffectSlots slots,
				ObjectProvider<TickService> ticks) {
			return new DefaultEffectOperations(registry, reads, moves, occurrences, drainer, compensations, slots,
					ticks::getIfAvailable);
		}

		@Bean
		@ConditionalOnMissingBean
		RecurringAlarms recurringAlarms(EffectRegistry registry, EffectWriter writer,
				io.ductor.effect.internal.RecurringAlarms recurring) {
			return new DefaultRecurringAlarms(registry, writer, recurring);
		}

	}

	/**
	 * The drainer and the periodic workers of the feature.
	 */
	@Configuration(proxyBeanMethods = false)
	static class EffectWorkersConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnBooleanProperty(name = "ductor.effects.drainer.enabled", matchIfMissing = true)
		EffectDrainer ductorEffectDrainer(IntentClaims claims, EffectSlots slots, IntentOutcomes outcomes,
				DrainerLeases leases, EffectDispatcher dispatcher, SettledIntents settled, LocalDrainer drainer,
				DuctorInstrumentation instrumentation, DuctorThreads threads, DuctorEffectsProperties properties) {
			DuctorEffectsProperties.Drainer settings = properties.drainer();
			return new EffectDrainer(new DrainSession.Stores(claims, slots, outcomes, leases), dispatcher, settled,
					drainer, new EffectDrainer.Settings(settings.batchSize(), settings.concurrency(),
							settings.pollInterval(), settings.lease()),
					instrumentation.metrics(), threads);
		}

		/**
		 * Wakes the drainer when another instance commits a due intent; closing the
		 * subscription (with the context) stops it. Never lazy: nothing depends on it, so
		 * with {@code spring.main.lazy-initialization=true} it would never subscribe.
		 */
		@Bean
		@Lazy(false)
		@ConditionalOnMissingBean(name = "ductorDrainerWakeUps")
		@ConditionalOnBean(PostgresNotificationListener.class)
		@ConditionalOnBooleanProperty(name = "ductor.effects.drainer.enabled", matchIfMissing = true)
		@ConditionalOnBooleanProperty(name = "ductor.effects.drainer.notify-on-commit", matchIfMissing = true)
		PostgresNotificationListener.Subscription ductorDrainerWakeUps(PostgresNotificationListener listener,
				LocalDrainer drainer) {
			return listener.subscribe(IntentRecorder.CHANNEL, new DrainerWakeUps(drainer));
		}

		@Bean
		@ConditionalOnMissingBean
		ExpiredLeaseRedriver ductorExpiredLeaseRedriver(IntentRedrive redrive, SettledIntents settled,
				EffectRegistry registry, EffectReconciliation reconciliation, DuctorEffectsProperties properties) {
			return new ExpiredLeaseRedriver(redrive, properties.reconciler().batchSize(), settled, registry,
					reconciliation);
		}

		@Bean(name = "ductorReconcilerWorker")
		@ConditionalOnMissingBean(name = "ductorReconcilerWorker")
		@ConditionalOnBooleanProperty(name = "ductor.effects.reconciler.enabled", matchIfMissing = true)
		PeriodicWorker ductorReconcilerWorker(DuctorThreads threads, ExpiredLeaseRedriver redriver,
				DuctorInstrumentation instrumentation, DuctorEffectsProperties properties) {
			return new PeriodicWorker(threads, "reconciler", properties.reconciler().interval(), redriver,
					instrumentation);
		}

		@Bean
		@ConditionalOnMissingBean
		AlarmScheduler ductorAlarmScheduler(RecurringAlarmStore alarms, IntentRecorder recorder,
				EffectRegistry registry, DuctorDatabase database, LocalDrainer drainer,
				DuctorInstrumentation instrumentation, DuctorEffectsProperties properties) {
			return new AlarmScheduler(alarms, recorder, registry, database.transactionManager(), drainer,
					instrumentation.metrics(), properties.alarmScheduler().batchSize());
		}

		@Bean(name = "ductorAlarmSchedulerWorker")
		@ConditionalOnMissingBean(name = "ductorAlarmSchedulerWorker")
		@ConditionalOnBooleanProperty(name = "ductor.effects.alarm-scheduler.enabled", matchIfMissing = true)
		PeriodicWorker ductorAlarmSchedulerWorker(DuctorThreads threads, AlarmScheduler scheduler,
				DuctorInstrumentation instrumentation, DuctorEffectsProperties properties) {
			return new PeriodicWorker(threads, "alarm-scheduler", properties.alarmScheduler().interval(), scheduler,
					DuctorInstrumentation.of(instrumentation.metrics(), DuctorObservations.NOOP));
		}

		@Bean
		@ConditionalOnMissingBean(name = "ductorEffectRetentionPurger")
		RetentionPurger ductorEffectRetentionPurger(IntentRetention retention, DuctorEffectsProperties properties) {
			return new EffectRetentionPurger(retention, properties.retention());
		}

	}

	private static EffectRetrySettings retrySettings(DuctorEffectsProperties properties,
			DuctorEffectOverrides overrides) {
		Map<String, Integer> maxAttempts = new LinkedHashMap<>();
		Map<String, Backoff> backoffs = new LinkedHashMap<>();
		Map<String, Integer> maxConcurrency = new LinkedHashMap<>();
		overrides.byEffect().forEach((name, override) -> {
			if (override.maxConcurrency() != null) {
				maxConcurrency.put(name, override.maxConcurrency());
			}
			if (override.maxAttempts() != null) {
				maxAttempts.put(name, override.maxAttempts());
			}
			if (override.backoff() != null) {
				backoffs.put(name, backoff(override.backoff()));
			}
		});
		return new EffectRetrySettings(properties.maxAttempts(), backoff(properties.backoff()), maxAttempts, backoffs,
				maxConcurrency);
	}

	private static Backoff backoff(BackoffProperties backoff) {
		return new Backoff(backoff.initial(), backoff.max(), backoff.multiplier());
	}

}
