package io.ductor.run.internal;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.RetentionTask;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The application's run store and retention task replace Ductor's, and Ductor's tick
 * service and retention worker then run them, against PostgreSQL.
 */
class ReplaceableRunBeansTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners.onDatabase(postgres,
			DuctorAutoConfiguration.class);

	@Test
	void theApplicationsRunStoreIsWhatTheTickServiceWritesThrough() {
		this.runner.withUserConfiguration(UserRunStore.class).run((context) -> {
			assertThat(context).hasNotFailed();
			CountingRunStore store = context.getBean(CountingRunStore.class);
			assertThat(context.getBean(RunStore.class)).isSameAs(store);
			context.getBean(TickService.class).start("order", "replaced-store-run", Map.of("step", 0));
			assertThat(store.inserts).hasValue(1);
			assertThat(JdbcClient.create(context.getBean(DuctorDatabase.class).dataSource())
				.sql("SELECT count(*) FROM eec_run WHERE id = 'replaced-store-run'")
				.query(Long.class)
				.single()).isOne();
		});
	}

	@Test
	void theApplicationsRetentionTaskIsWhatTheRetentionWorkerRuns() {
		this.runner.withUserConfiguration(UserRetentionTask.class)
			.withPropertyValues("ductor.retention.interval=50ms")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CountingRetentionTask task = context.getBean(CountingRetentionTask.class);
				assertThat(context.getBean(RetentionTask.class)).isSameAs(task);
				await().atMost(Duration.ofSeconds(20)).until(() -> task.rounds.get() >= 2);
			});
	}

	static class CountingRunStore extends RunStore {

		final AtomicInteger inserts = new AtomicInteger();

		CountingRunStore(JdbcClient jdbc) {
			super(jdbc);
		}

		@Override
		public int insert(String runId, String type, String stateJson) {
			this.inserts.incrementAndGet();
			return super.insert(runId, type, stateJson);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserRunStore {

		@Bean
		CountingRunStore userRunStore(DuctorDatabase database) {
			return new CountingRunStore(JdbcClient.create(database.dataSource()));
		}

	}

	static class CountingRetentionTask extends RetentionTask {

		final AtomicInteger rounds = new AtomicInteger();

		CountingRetentionTask() {
			super(List.of(), 1);
		}

		@Override
		public boolean runOnce() {
			this.rounds.incrementAndGet();
			return super.runOnce();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserRetentionTask {

		@Bean
		CountingRetentionTask userRetentionTask() {
			return new CountingRetentionTask();
		}

	}

}
