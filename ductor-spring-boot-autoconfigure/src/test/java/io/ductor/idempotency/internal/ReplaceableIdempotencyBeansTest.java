package io.ductor.idempotency.internal;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The application's idempotency store and sweeper replace Ductor's, and Ductor's service
 * and sweeper worker then run them, against PostgreSQL.
 */
class ReplaceableIdempotencyBeansTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners.onDatabase(postgres,
			DuctorAutoConfiguration.class, DuctorIdempotencyAutoConfiguration.class);

	@Test
	void theApplicationsIdempotencyStoreIsWhatTheServiceAndTheSweeperRun() {
		this.runner.withUserConfiguration(UserStore.class)
			.withPropertyValues("ductor.idempotency.sweeper.interval=50ms")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CountingStore store = context.getBean(CountingStore.class);
				assertThat(context.getBean(IdempotencyStore.class)).isSameAs(store);
				ReserveOutcome outcome = context.getBean(IdempotencyService.class)
					.reserve("", "orders", "replaced-store-" + UUID.randomUUID(), "fingerprint");
				assertThat(outcome).isInstanceOf(ReserveOutcome.Reserved.class);
				assertThat(store.reserved).hasValue(1);
				await().atMost(Duration.ofSeconds(20)).until(() -> store.sweeps.get() >= 1);
			});
	}

	@Test
	void theApplicationsSweeperIsWhatTheSweeperWorkerRuns() {
		this.runner.withUserConfiguration(UserSweeper.class)
			.withPropertyValues("ductor.idempotency.sweeper.interval=50ms")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CountingSweeper sweeper = context.getBean(CountingSweeper.class);
				assertThat(context.getBean(IdempotencySweeper.class)).isSameAs(sweeper);
				await().atMost(Duration.ofSeconds(20)).until(() -> sweeper.rounds.get() >= 2);
			});
	}

	static class CountingStore extends IdempotencyStore {

		final AtomicInteger reserved = new AtomicInteger();

		final AtomicInteger sweeps = new AtomicInteger();

		CountingStore(DataSource dataSource) {
			super(dataSource);
		}

		@Override
		Found reserveNew(IdempotentRequest request, UUID token, Duration pendingTtl, long lockKey) {
			this.reserved.incrementAndGet();
			return super.reserveNew(request, token, pendingTtl, lockKey);
		}

		@Override
		int sweep(int batchSize) {
			this.sweeps.incrementAndGet();
			return super.sweep(batchSize);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserStore {

		@Bean
		CountingStore userIdempotencyStore(DuctorDatabase database) {
			return new CountingStore(database.dataSource());
		}

	}

	static class CountingSweeper extends IdempotencySweeper {

		final AtomicInteger rounds = new AtomicInteger();

		CountingSweeper(IdempotencyStore store) {
			super(store, 10, DuctorObserver.NOOP);
		}

		@Override
		public boolean runOnce() {
			this.rounds.incrementAndGet();
			return super.runOnce();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserSweeper {

		@Bean
		CountingSweeper userSweeper(IdempotencyStore store) {
			return new CountingSweeper(store);
		}

	}

}
