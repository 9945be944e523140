package io.ductor.effect;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * An ordered effect called in a {@code REQUIRES_NEW} transaction inside one that recorded
 * an intent of the same ordering key: the inner writer waits for the outer one to commit,
 * which waits for the inner one on the same thread. The call must end (with an error
 * naming the problem, or by recording), never wait forever holding two connections.
 */
class OrderingKeyRequiresNewTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), TestEffects.Config.class,
				"ductor.effects.reconciler.interval=1h", "ductor.retention.interval=1h");
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void aRequiresNewTransactionRecordingTheOrderingKeyItsSuspendedTransactionHoldsEnds() throws Exception {
		TestEffects effects = context.getBean(TestEffects.class);
		PlatformTransactionManager transactions = context.getBean(PlatformTransactionManager.class);
		TransactionTemplate tx = new TransactionTemplate(transactions);
		TransactionTemplate requiresNew = new TransactionTemplate(transactions);
		requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		String stream = "stream-" + UUID.randomUUID();
		CompletableFuture<Throwable> ended = CompletableFuture.supplyAsync(() -> {
			try {
				tx.executeWithoutResult((status) -> {
					effects.ordered(stream, 1);
					requiresNew.executeWithoutResult((inner) -> effects.ordered(stream, 2));
				});
				return null;
			}
			catch (Throwable ex) {
				return ex;
			}
		});
		Throwable outcome;
		try {
			outcome = ended.get(10, TimeUnit.SECONDS);
		}
		catch (TimeoutException ex) {
			// set the thread free: end the inner transaction's wait
			JdbcClient.create(postgres.dataSource())
				.sql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
				.query()
				.listOfRows();
			ended.get(30, TimeUnit.SECONDS);
			fail("the REQUIRES_NEW transaction waited 10 s for the ordering key its own suspended transaction holds");
			return;
		}
		if (outcome != null) {
			assertThat(outcome).isInstanceOf(DurableEffectException.class).hasMessageContaining(stream);
		}
		JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
		assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE ordering_key = ?")
			.param(stream)
			.query(Long.class)
			.single()).isEqualTo((outcome != null) ? 0L : 2L);
	}

	@Test
	void aNestedTransactionRecordsTheOrderingKeyItsOuterTransactionHolds() {
		TestEffects effects = context.getBean(TestEffects.class);
		PlatformTransactionManager transactions = context.getBean(PlatformTransactionManager.class);
		TransactionTemplate nested = new TransactionTemplate(transactions);
		nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
		String stream = "stream-" + UUID.randomUUID();
		new TransactionTemplate(transactions).executeWithoutResult((status) -> {
			effects.ordered(stream, 1);
			nested.executeWithoutResult((savepoint) -> effects.ordered(stream, 2));
		});
		// and a later transaction of the same thread records it again
		new TransactionTemplate(transactions).executeWithoutResult((status) -> effects.ordered(stream, 3));
		JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
		assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE ordering_key = ?")
			.param(stream)
			.query(Long.class)
			.single()).isEqualTo(3L);
	}

}
