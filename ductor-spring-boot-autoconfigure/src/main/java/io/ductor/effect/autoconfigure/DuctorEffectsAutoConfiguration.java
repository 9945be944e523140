package io.ductor.effect.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import javax.sql.DataSource;

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

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.internal.DurableEffectAdvisor;
import io.ductor.effect.internal.DurableEffects;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.effect.internal.EffectMethods;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.internal.EffectRegistry;
import io.ductor.effect.internal.EffectRetrySettings;
import io.ductor.effect.internal.RecurringAlarmDeclaration;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.run.TickService;
import io.ductor.worker.internal.Backoff;
import io.ductor.worker.internal.PeriodicWorker;
import io.ductor.worker.internal.RetentionPurger;

/**
 * Auto-configuration for durable effects: the {@code @DurableEffect} advisor, the
 * {@link EffectOutbox}, the drainer, the lease reconciler and the recurring-alarm
 * scheduler, configured by {@link DuctorEffectsProperties} ({@code ductor.effects.*}).
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

	@Bean
	@ConditionalOnMissingBean
	EffectRegistry ductorEffectRegistry(EffectMethods methods, BeanFactory beanFactory, JsonCodec json,
			DuctorEffectsProperties properties) {
		return new EffectRegistry(methods, beanFactory, json.mapper().getTypeFactory(), retrySettings(properties));
	}

	@Bean
	@ConditionalOnMissingBean
	@DependsOnDatabaseInitialization
	DurableEffects ductorDurableEffects(DataSource dataSource, EffectRegistry registry, JsonCodec json,
			ApplicationEventPublisher events, ObjectProvider<DuctorObserver> observer,
			ObjectProvider<DuctorObservations> observations, DuctorEffectsProperties properties,
			ObjectProvider<TickService> ticks) {
		DuctorEffectsProperties.Drainer drainer = properties.drainer();
		DurableEffects durableEffects = new DurableEffects(dataSource, registry, json.mapper(), events,
				new DurableEffects.Settings(drainer.notifyOnCommit(), drainer.notifyInTransaction(),
						drainer.dispatchAtCommit(), properties.maxPayloadSize().toBytes(), properties.retention(),
						properties.reconciler().batchSize(),
						new EffectDrainer.Settings(drainer.batchSize(), drainer.concurrency(), drainer.pollInterval(),
								drainer.lease(), drainer.shutdownTimeout()),
						new DurableEffects.Reconcile(properties.reconcile().maxRounds(),
								properties.reconcile().backoff().toBackoff())),
				observer.getIfUnique(() -> DuctorObserver.NOOP),
				observations.getIfUnique(() -> DuctorObservations.NOOP));
		ticks.ifAvailable(durableEffects::compensateRunsOf);
		return durableEffects;
	}

	@Bean
	@ConditionalOnMissingBean
	EffectOutbox effectOutbox(DurableEffects effects) {
		return effects.outbox();
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
	PeriodicWorker ductorReconcilerWorker(DurableEffects effects, ObjectProvider<DuctorObserver> observer,
			ObjectProvider<DuctorObservations> observations, DuctorEffectsProperties properties) {
		return new PeriodicWorker("reconciler", properties.reconciler().interval(),
				PeriodicWorker.DEFAULT_SHUTDOWN_TIMEOUT, effects.reconciler(),
				observer.getIfUnique(() -> DuctorObserver.NOOP),
				observations.getIfUnique(() -> DuctorObservations.NOOP));
	}

	@Bean(name = "ductorAlarmSchedulerWorker")
	@ConditionalOnMissingBean(name = "ductorAlarmSchedulerWorker")
	@ConditionalOnBooleanProperty(name = "ductor.effects.alarm-scheduler.enabled", matchIfMissing = true)
	PeriodicWorker ductorAlarmSchedulerWorker(DurableEffects effects, ObjectProvider<DuctorObserver> observer,
			DuctorEffectsProperties properties) {
		DuctorEffectsProperties.AlarmScheduler scheduler = properties.alarmScheduler();
		return new PeriodicWorker("alarm-scheduler", scheduler.interval(), PeriodicWorker.DEFAULT_SHUTDOWN_TIMEOUT,
				effects.alarmScheduler(scheduler.batchSize()), observer.getIfUnique(() -> DuctorObserver.NOOP));
	}

	/**
	 * Declares the recurring alarms of {@code ductor.effects.alarms} once every bean is
	 * ready, so that an unknown effect or arguments that do not fit it fail start-up
	 * naming the property.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "ductorRecurringAlarmDeclarations")
	SmartInitializingSingleton ductorRecurringAlarmDeclarations(DurableEffects effects,
			DuctorEffectsProperties properties) {
		List<RecurringAlarmDeclaration> declared = new ArrayList<>();
		new TreeMap<>(properties.alarms()).forEach((name, alarm) -> declared.add(new RecurringAlarmDeclaration(name,
				"ductor.effects.alarms." + name, alarm.effect(), alarm.toSchedule(), alarm.arguments())));
		return () -> effects.declareAlarms(declared);
	}

	@Bean
	@ConditionalOnMissingBean(name = "ductorEffectRetentionPurger")
	RetentionPurger ductorEffectRetentionPurger(DurableEffects effects) {
		return effects.retentionPurger();
	}

	private static EffectRetrySettings retrySettings(DuctorEffectsProperties properties) {
		Map<String, Integer> maxAttempts = new LinkedHashMap<>();
		Map<String, Backoff> backoffs = new LinkedHashMap<>();
		Map<String, Integer> maxConcurrency = new LinkedHashMap<>();
		properties.overrides().forEach((name, override) -> {
			if (override.maxConcurrency() != null) {
				maxConcurrency.put(name, override.maxConcurrency());
			}
			if (override.maxAttempts() != null) {
				maxAttempts.put(name, override.maxAttempts());
			}
			if (override.backoff() != null) {
				backoffs.put(name, override.backoff().toBackoff());
			}
		});
		return new EffectRetrySettings(properties.maxAttempts(), properties.backoff().toBackoff(), maxAttempts,
				backoffs, maxConcurrency);
	}

}
