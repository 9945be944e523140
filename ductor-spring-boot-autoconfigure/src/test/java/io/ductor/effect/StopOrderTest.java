package io.ductor.effect;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.ductor.effect.internal.EffectDrainer;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The order of Ductor's stop, as {@code DuctorThreads} states it: "claiming first, then
 * the running effects, their outcomes, the heartbeat, the periodic workers, the
 * notification listener". The listener, of the default phase, stopped first, before the
 * drainer and the workers it wakes (and started last, after them).
 */
class StopOrderTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void theNotificationListenerStopsAfterTheDrainerAndTheWorkersAndStartsBeforeThem() {
		TestDatabase database = TestDatabases.create();
		RecordingListener.events.clear();
		try {
			ConfigurableApplicationContext context = EffectInstances.start(database, Listener.class);
			EffectDrainer drainer = context.getBean(EffectDrainer.class);
			List<PeriodicWorker> workers = List.copyOf(context.getBeansOfType(PeriodicWorker.class).values());
			assertThat(workers).isNotEmpty();
			RecordingListener.others = () -> drainer.isRunning()
					|| workers.stream().anyMatch(PeriodicWorker::isRunning);
			context.stop();
			context.start();
			context.close();
		}
		finally {
			TestDatabases.drop(database);
		}
		// whether the drainer or a worker ran when the listener started or stopped
		assertThat(RecordingListener.events).containsExactly("start: others running false",
				"stop: others running false", "start: others running false", "stop: others running false");
	}

	static class RecordingListener extends PostgresNotificationListener {

		static final List<String> events = new ArrayList<>();

		static volatile java.util.function.BooleanSupplier others = () -> false;

		RecordingListener(DuctorDatabase database, DuctorThreads threads) {
			super(database.dataSource(), PostgresNotificationListener.DEFAULT_RECEIVE_TIMEOUT,
					PostgresNotificationListener.DEFAULT_MAX_RECONNECT_DELAY,
					PostgresNotificationListener.DEFAULT_VALIDATION_INTERVAL, threads);
		}

		@Override
		public synchronized void start() {
			events.add("start: others running " + others.getAsBoolean());
			super.start();
		}

		@Override
		public synchronized void stop() {
			events.add("stop: others running " + others.getAsBoolean());
			super.stop();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Listener {

		@Bean
		RecordingListener recordingListener(DuctorDatabase database, DuctorThreads threads) {
			return new RecordingListener(database, threads);
		}

	}

}
