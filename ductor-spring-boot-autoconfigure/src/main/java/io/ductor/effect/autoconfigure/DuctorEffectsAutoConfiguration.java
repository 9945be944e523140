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
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

import io.ductor.autoconfigure.BackoffProperties;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.RecurringAlarms;
import io.ductor.effect.internal.DurableEffectAdvisor;
import io.ductor.effect.internal.DurableEffects;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.effect.internal.EffectMethods;
import io.ductor.effect.internal.EffectRegistry;
import io.ductor.effect.internal.EffectRetrySettings;
import io.ductor.effect.internal.RecurringAlarmDeclaration;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorObserver;
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

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static EffectMethods ductorEffectMethods() {
		return new EffectMethods();
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static DurableEffectAdvisor ductorDurableEffectAdvisor(ObjectProvider<DurableEffects> effects) {
		return new DurableEffectAdvisor(effects);
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

	@Bean
	@ConditionalOnMissingBean
	@DependsOnDatabaseInitialization
	DurableEffects ductorDurableEffects(DuctorDatabase database, EffectRegistry registry, JsonCodec json,
			ApplicationEventPublisher events, ObjectProvider<DuctorObserver> observer,
			ObjectProvider<DuctorObservations> observations, DuctorEffectsProperties properties,
			ObjectProvider<TickService> ticks, DuctorThreads threads) {
		DuctorEffectsProperties.Drainer drainer = properties.drainer();
		DurableEffects durableEffects = new DurableEffects(database, registry, json.mapper(), events,
				new DurableEffects.Settings(drainer.notifyOnCommit(), drainer.notifyInTransaction(),
						drainer.dispatchAtCommit(), properties.maxPayloadSize().toBytes(), properties.retention(),
						properties.reconciler().batchSize(),
						new EffectDrainer.Settings(drainer.batchSize(), drainer.concurrency(), drainer.pollInterval(),
								drainer.lease()),
						new DurableEffects.Reconcile(properties.reconciliation().maxRounds(),
								backoff(properties.reconciliation().backoff()))),
				observer.getIfUnique(() -> DuctorObserver.NOOP),
				observations.getIfUnique(() -> DuctorObservations.NOOP), ticks::getIfAvailable, threads);
		return durableEffects;
	}

	@Bean
	@ConditionalOnMissingBean
	EffectOutbox effectOutbox(DurableEffects effects) {
		return effects.outbox();
	}

	@Bean
	@ConditionalOnMissingBean
	EffectOperations effectOperations(DurableEffects effects) {
		return effects.operations();
	}

	@Bean
	@ConditionalOnMissingBean
	RecurringAlarms recurringAlarms(DurableEffects effects) {
		return effects.recurringAlarms();
	}

	/**
	 * Records a run's compensations in the transaction of the tick that fails it; the
	 * tick service finds it by type.
	 */
	@Bean
	@ConditionalOnMissingBean
	RunFailureHandler ductorRunCompensations(DurableEffects effects) {
		return effects.runFailureHandler();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ductor.effects.drainer.enabled", matchIfMissing = true)
	EffectDrainer ductorEffectDrainer(DurableEffects effects, ObjectProvider<PostgresNotificationListener> listener,
			DuctorEffectsProperties properties) {
		if (properties.drainer().notifyOnCommit()) {
			listener.ifAvailable(effects::wakeDrainerOnNotifications);
		}
		return effects.drainer();
	}

	@Bean(name = "ductorReconcilerWorker")
	@ConditionalOnMissingBean(name = "ductorReconcilerWorker")
	@ConditionalOnBooleanProperty(name = "ductor.effects.reconciler.enabled", matchIfMissing = true)
	PeriodicWorker ductorReconcilerWorker(DuctorThreads threads, DurableEffects effects,
			ObjectProvider<DuctorObserver> observer, ObjectProvider<DuctorObservations> observations,
			DuctorEffectsProperties properties) {
		return new PeriodicWorker(threads, "reconciler", properties.reconciler().interval(), effects.reconciler(),
				observer.getIfUnique(() -> DuctorObserver.NOOP),
				observations.getIfUnique(() -> DuctorObservations.NOOP));
	}

	@Bean(name = "ductorAlarmSchedulerWorker")
	@ConditionalOnMissingBean(name = "ductorAlarmSchedulerWorker")
	@ConditionalOnBooleanProperty(name = "ductor.effects.alarm-scheduler.enabled", matchIfMissing = true)
	PeriodicWorker ductorAlarmSchedulerWorker(DuctorThreads threads, DurableEffects effects,
			ObjectProvider<DuctorObserver> observer, DuctorEffectsProperties properties) {
		DuctorEffectsProperties.AlarmScheduler scheduler = properties.alarmScheduler();
		return new PeriodicWorker(threads, "alarm-scheduler", scheduler.interval(),
				effects.alarmScheduler(scheduler.batchSize()), observer.getIfUnique(() -> DuctorObserver.NOOP),
				DuctorObservations.NOOP);
	}

	/**
	 * Declares the recurring alarms of {@code ductor.effects.alarms} once every bean is
	 * ready, so that an unknown effect or arguments that do not fit it fail start-up
	 * naming the property.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "ductorRecurringAlarmDeclarations")
	SmartInitializingSingleton ductorRecurringAlarmDeclarations(DurableEffects effects, DuctorConfiguredAlarms alarms) {
		List<RecurringAlarmDeclaration> declared = new ArrayList<>();
		new TreeMap<>(alarms.byName()).forEach((name, alarm) -> declared.add(new RecurringAlarmDeclaration(name,
				"ductor.effects.alarms." + name, alarm.effect(), alarm.toSchedule(), alarm.arguments())));
		return () -> effects.declareAlarms(declared);
	}

	@Bean
	@ConditionalOnMissingBean(name = "ductorEffectRetentionPurger")
	RetentionPurger ductorEffectRetentionPurger(DurableEffects effects) {
		return effects.retentionPurger();
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
