package io.ductor.autoconfigure;

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
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;

import io.ductor.effect.DurableEffectAdvisor;
import io.ductor.effect.DurableEffects;
import io.ductor.effect.EffectDrainer;
import io.ductor.effect.EffectMethods;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRegistry;
import io.ductor.effect.EffectRetrySettings;
import io.ductor.effect.RecurringAlarmDeclaration;
import io.ductor.jdbc.DuctorSchema;
import io.ductor.jdbc.PostgresNotificationListener;
import io.ductor.json.JsonCodec;
import io.ductor.metrics.DuctorObserver;
import io.ductor.observation.DuctorObservations;
import io.ductor.run.TickService;
import io.ductor.worker.Backoff;
import io.ductor.worker.PeriodicWorker;
import io.ductor.worker.RetentionPurger;

/**
 * Auto-configuration for durable effects: the {@code @DurableEffect} advisor, the
 * {@link EffectOutbox}, the drainer and the lease reconciler.
 */
@AutoConfiguration(after = DuctorAutoConfiguration.class)
@ConditionalOnBean(DuctorSchema.class)
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
			DuctorProperties properties) {
		return new EffectRegistry(methods, beanFactory, json.mapper().getTypeFactory(),
				retrySettings(properties.effects()));
	}

	@Bean
	@ConditionalOnMissingBean
	DurableEffects ductorDurableEffects(DuctorSchema schema, DataSource dataSource, EffectRegistry registry,
			JsonCodec json, ApplicationEventPublisher events, ObjectProvider<DuctorObserver> observer,
			ObjectProvider<DuctorObservations> observations, DuctorProperties properties, ObjectProvider<TickService> ticks) {
		DuctorProperties.Drainer drainer = properties.drainer();
		DuctorProperties.Effects effects = properties.effects();
		DurableEffects durableEffects = new DurableEffects(dataSource, registry, json.mapper(), events,
				new DurableEffects.Settings(drainer.notifyOnCommit(), drainer.notifyInTransaction(),
						drainer.enabled() && drainer.dispatchAtCommit(), effects.maxPayloadSize().toBytes(), effects.retention(),
						properties.reconciler().batchSize(),
						new EffectDrainer.Settings(drainer.batchSize(), drainer.concurrency(), drainer.pollInterval(),
								drainer.lease(), drainer.shutdownTimeout()),
						new DurableEffects.Reconcile(effects.reconcile().maxRounds(),
								effects.reconcile().backoff().toBackoff())),
				DuctorAutoConfiguration.observer(observer), DuctorAutoConfiguration.observations(observations));
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
	@ConditionalOnBooleanProperty(name = "ductor.drainer.enabled", matchIfMissing = true)
	EffectDrainer ductorEffectDrainer(DurableEffects effects, ObjectProvider<PostgresNotificationListener> listener,
			DuctorProperties properties) {
		if (properties.drainer().notifyOnCommit()) {
			listener.ifAvailable(effects::wakeDrainerOnNotifications);
		}
		return effects.drainer();
	}

	@Bean(name = "ductorReconcilerWorker")
	@ConditionalOnMissingBean(name = "ductorReconcilerWorker")
	@ConditionalOnBooleanProperty(name = "ductor.reconciler.enabled", matchIfMissing = true)
	PeriodicWorker ductorReconcilerWorker(DurableEffects effects, ObjectProvider<DuctorObserver> observer,
			ObjectProvider<DuctorObservations> observations, DuctorProperties properties) {
		return new PeriodicWorker("reconciler", properties.reconciler().interval(),
				DuctorAutoConfiguration.WORKER_SHUTDOWN_TIMEOUT, effects.reconciler(),
				DuctorAutoConfiguration.observer(observer), DuctorAutoConfiguration.observations(observations));
	}

	@Bean(name = "ductorAlarmSchedulerWorker")
	@ConditionalOnMissingBean(name = "ductorAlarmSchedulerWorker")
	@ConditionalOnBooleanProperty(name = "ductor.alarm-scheduler.enabled", matchIfMissing = true)
	PeriodicWorker ductorAlarmSchedulerWorker(DurableEffects effects, ObjectProvider<DuctorObserver> observer,
			DuctorProperties properties) {
		DuctorProperties.AlarmScheduler scheduler = properties.alarmScheduler();
		return new PeriodicWorker("alarm-scheduler", scheduler.interval(), DuctorAutoConfiguration.WORKER_SHUTDOWN_TIMEOUT,
				effects.alarmScheduler(scheduler.batchSize()), DuctorAutoConfiguration.observer(observer));
	}

	/**
	 * Declares the recurring alarms of {@code ductor.alarms} once every bean is ready, so that an
	 * unknown effect or arguments that do not fit it fail start-up naming the property.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "ductorRecurringAlarmDeclarations")
	SmartInitializingSingleton ductorRecurringAlarmDeclarations(DurableEffects effects, DuctorProperties properties) {
		List<RecurringAlarmDeclaration> declared = new ArrayList<>();
		new TreeMap<>(properties.alarms()).forEach((name, alarm) -> declared.add(new RecurringAlarmDeclaration(name,
				"ductor.alarms." + name, alarm.effect(), alarm.toSchedule(), alarm.arguments())));
		return () -> effects.declareAlarms(declared);
	}

	@Bean
	@ConditionalOnMissingBean(name = "ductorEffectRetentionPurger")
	RetentionPurger ductorEffectRetentionPurger(DurableEffects effects) {
		return effects.retentionPurger();
	}

	private static EffectRetrySettings retrySettings(DuctorProperties.Effects effects) {
		Map<String, Integer> maxAttempts = new LinkedHashMap<>();
		Map<String, Backoff> backoffs = new LinkedHashMap<>();
		Map<String, Integer> maxConcurrency = new LinkedHashMap<>();
		effects.overrides().forEach((name, override) -> {
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
		return new EffectRetrySettings(effects.maxAttempts(), effects.backoff().toBackoff(), maxAttempts, backoffs,
				maxConcurrency);
	}

}
