package io.ductor.effect;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Ductor's threads: effects on virtual threads when
 * {@code spring.threads.virtual.enabled} is on (Java 21 or later), one shutdown deadline
 * for everything that stops, and no thread of Ductor's left once the context is closed.
 */
class DuctorThreadsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] SETTINGS = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.reconciler.interval=1h" };

	@Test
	void effectsRunOnVirtualThreadsWhenSpringBootsVirtualThreadsAreOnAndTheJavaHasThem() throws Exception {
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Effects.class,
				concat(SETTINGS, "spring.threads.virtual.enabled=true", "ductor.effects.drainer.concurrency=2"))) {
			// Spring Boot's Threading.VIRTUAL: on only on Java 21 or later
			assertThat(context.getBean(DuctorThreads.class).virtual()).isEqualTo(Runtime.version().feature() >= 21);
			assumeThat(Runtime.version().feature())
				.as("virtual threads need Java 21 or later; this is Java %s: only the choice of platform threads "
						+ "was checked", Runtime.version().feature())
				.isGreaterThanOrEqualTo(21);
			Thread thread = runProbe(context, "virtual");
			assertThat(isVirtual(thread)).isTrue();
			assertThat(thread.getName()).startsWith("ductor-effect-");
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	@Test
	void effectsRunOnPlatformThreadsByDefault() throws Exception {
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Effects.class, SETTINGS)) {
			assertThat(context.getBean(DuctorThreads.class).virtual()).isFalse();
			Thread thread = runProbe(context, "platform");
			assertThat(isVirtual(thread)).isFalse();
			assertThat(thread.getName()).startsWith("ductor-effect-");
			// the one daemon rule: like Spring Boot's own executors, not daemon threads
			assertThat(thread.isDaemon()).isFalse();
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	/**
	 * An effect that runs past the deadline and three worker rounds that never end: each
	 * used to get a timeout of its own (the effect's shutdown timeout, then ten seconds
	 * per worker), one after the other; they now share one deadline, and whatever still
	 * runs then is interrupted, so no thread of Ductor's outlives the close.
	 */
	@Test
	void aContextClosesWithinTheShutdownTimeoutAndLeavesNoThreadOfDuctorsBehind() throws Exception {
		TestDatabase database = TestDatabases.create();
		CountDownLatch released = new CountDownLatch(1);
		ThreadEffects.gate = released;
		EffectsAndStuckWorkers.release = released;
		EffectsAndStuckWorkers.inRound = new CountDownLatch(3);
		List<Thread> ours;
		long closed;
		long closing;
		try (HikariDataSource dataSource = database.newDataSource(2)) {
			ConfigurableApplicationContext context = EffectInstances.start(database, EffectsAndStuckWorkers.class,
					concat(SETTINGS, "ductor.shutdown-timeout=2s"));
			DuctorThreads threads = context.getBean(DuctorThreads.class);
			ThreadEffects effects = context.getBean(ThreadEffects.class);
			tx(context).executeWithoutResult((status) -> effects.slow("slow"));
			await().atMost(Duration.ofSeconds(30)).until(() -> ThreadEffects.ran.containsKey("slow"));
			assertThat(EffectsAndStuckWorkers.inRound.await(30, TimeUnit.SECONDS)).isTrue();
			ours = threads.liveThreads();
			assertThat(ours).contains(ThreadEffects.ran.remove("slow"))
				.allMatch((thread) -> thread.getName().startsWith("ductor-"));
			closing = System.nanoTime();
			context.close();
			closed = System.nanoTime();
			// cut off at the deadline: its outcome is not recorded, the reconciler takes
			// it over once its lease expires
			assertThat(JdbcClient.create(dataSource)
				.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = 'slow'")
				.query(String.class)
				.single()).isEqualTo("in_flight");
		}
		finally {
			released.countDown();
			TestDatabases.drop(database);
		}
		// the bound plus a generous margin for a loaded machine: the four waits one
		// after the other took 32 s, and would take 8 s with a whole timeout each
		assertThat(Duration.ofNanos(closed - closing)).isLessThan(Duration.ofSeconds(2).plusSeconds(4));
		// interrupted at the deadline, they end as soon as they notice
		await().atMost(Duration.ofSeconds(5)).until(() -> ours.stream().noneMatch(Thread::isAlive));
	}

	private static Thread runProbe(ConfigurableApplicationContext context, String key) {
		ThreadEffects effects = context.getBean(ThreadEffects.class);
		tx(context).executeWithoutResult((status) -> effects.probe(key));
		await().atMost(Duration.ofSeconds(30)).until(() -> ThreadEffects.ran.containsKey(key));
		return ThreadEffects.ran.remove(key);
	}

	/** {@code Thread.isVirtual()}, which Java 17 does not have. */
	private static boolean isVirtual(Thread thread) throws Exception {
		if (!DuctorThreads.virtualThreadsSupported()) {
			return false;
		}
		Method isVirtual = Thread.class.getMethod("isVirtual");
		return (boolean) isVirtual.invoke(thread);
	}

	private static TransactionTemplate tx(ConfigurableApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

	private static String[] concat(String[] base, String... more) {
		String[] all = new String[base.length + more.length];
		System.arraycopy(base, 0, all, 0, base.length);
		System.arraycopy(more, 0, all, base.length, more.length);
		return all;
	}

	/** Effects that say which thread ran them, or wait. */
	public static class ThreadEffects {

		static final Map<String, Thread> ran = new ConcurrentHashMap<>();

		static volatile CountDownLatch gate = new CountDownLatch(0);

		@DurableEffect(name = "thread.probe", key = "#key")
		public void probe(String key) {
			ran.put(key, Thread.currentThread());
		}

		@DurableEffect(name = "thread.slow", key = "#key", receiver = Receiver.NOT_IDEMPOTENT)
		public void slow(String key) {
			ran.put(key, Thread.currentThread());
			try {
				gate.await(5, TimeUnit.MINUTES);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("interrupted", ex);
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Effects {

		@Bean
		ThreadEffects threadEffects() {
			return new ThreadEffects();
		}

	}

	/**
	 * The effects, and three workers whose rounds never end until released (or
	 * interrupted).
	 */
	@Configuration(proxyBeanMethods = false)
	static class EffectsAndStuckWorkers extends Effects {

		static volatile CountDownLatch release;

		static volatile CountDownLatch inRound;

		@Bean
		PeriodicWorker firstStuckWorker(DuctorThreads threads) {
			return stuck(threads, "first-stuck");
		}

		@Bean
		PeriodicWorker secondStuckWorker(DuctorThreads threads) {
			return stuck(threads, "second-stuck");
		}

		@Bean
		PeriodicWorker thirdStuckWorker(DuctorThreads threads) {
			return stuck(threads, "third-stuck");
		}

		private static PeriodicWorker stuck(DuctorThreads threads, String name) {
			return new PeriodicWorker(threads, name, Duration.ofHours(1), () -> {
				inRound.countDown();
				release.await(5, TimeUnit.MINUTES);
				return false;
			}, io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		}

	}

}
