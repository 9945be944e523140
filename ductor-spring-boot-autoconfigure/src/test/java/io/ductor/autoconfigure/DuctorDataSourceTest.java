package io.ductor.autoconfigure;

import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.internal.DuctorConfigurationException;
import io.ductor.jdbc.DuctorDataSource;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application with two databases: Ductor keeps its tables in the one marked
 * {@link DuctorDataSource} (or the primary one) and runs its transactions on the
 * application's transaction manager of that database; with two and no choice, start-up
 * fails naming them.
 */
class DuctorDataSourceTest {

	@RegisterExtension
	static final PostgresExtension orders = new PostgresExtension();

	@RegisterExtension
	static final PostgresExtension outbox = new PostgresExtension();

	@RegisterExtension
	static final PostgresExtension primary = new PostgresExtension();

	final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JacksonAutoConfiguration.class, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorIdempotencyAutoConfiguration.class))
		.withPropertyValues("ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false",
				"ductor.idempotency.sweeper.enabled=false", "ductor.retention.enabled=false");

	@Test
	void ductorKeepsItsTablesAndItsTransactionsInTheDataSourceMarkedForIt() {
		this.runner.withUserConfiguration(TwoDatabases.class, Mailer.class)
			.withPropertyValues("app.outbox.datasource.jdbc-url=" + outbox.jdbcUrl(),
					"app.outbox.datasource.username=" + outbox.username(),
					"app.outbox.datasource.password=" + ((outbox.password() != null) ? outbox.password() : ""),
					"app.outbox.datasource.maximum-pool-size=4")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(tables(orders.dataSource())).as("Ductor's tables in the orders database").isZero();
				assertThat(tables(outbox.dataSource())).as("Ductor's tables in its own database").isPositive();

				String key = UUID.randomUUID().toString();
				context.getBean(IdempotencyService.class)
					.executeInTransaction(new IdempotentRequest("", "parcels", key, "fp"), String.class, () -> "sent");
				assertThat(count(outbox.dataSource(), "eec_routing_idempotency")).isOne();

				context.getBean(TickService.class).start("parcel", "parcel-" + key, Map.of("step", 0));
				assertThat(count(outbox.dataSource(), "eec_run")).isOne();

				CountingTransactionManager outboxTransactions = context.getBean("outboxTransactions",
						CountingTransactionManager.class);
				int before = outboxTransactions.begun;
				new TransactionTemplate(outboxTransactions)
					.executeWithoutResult((status) -> context.getBean(EffectOutbox.class)
						.schedule(EffectRequest.of("mail", "parcel " + key).withKey("mail-" + key)));
				assertThat(count(outbox.dataSource(), "eec_effect_intent")).isOne();
				assertThat(outboxTransactions.begun).isGreaterThan(before);
			});
	}

	@Test
	void withoutAMarkDuctorUsesThePrimaryDataSource() {
		this.runner.withUserConfiguration(PrimaryOrders.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(tables(primary.dataSource())).isPositive();
		});
	}

	@Test
	void twoDataSourcesAndNoChoiceFailStartUpNamingThem() {
		this.runner.withUserConfiguration(Unmarked.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(DuctorConfigurationException.class)
				.hasMessageContaining("ordersDatabase")
				.hasMessageContaining("outboxDatabase");
			assertThat(((DuctorConfigurationException) rootCause(context.getStartupFailure())).action())
				.contains("@io.ductor.jdbc.DuctorDataSource");
		});
	}

	@Test
	void twoDataSourcesMarkedForDuctorFailStartUpNamingThem() {
		this.runner.withUserConfiguration(BothMarked.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(DuctorConfigurationException.class)
				.hasMessageContaining("Several DataSource beans are marked @DuctorDataSource")
				.hasMessageContaining("ordersDatabase")
				.hasMessageContaining("outboxDatabase");
		});
	}

	static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	static long tables(DataSource dataSource) {
		return JdbcClient.create(dataSource)
			.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'eec\\_%' AND schemaname = current_schema()")
			.query(Long.class)
			.single();
	}

	static long count(DataSource dataSource, String table) {
		return JdbcClient.create(dataSource).sql("SELECT count(*) FROM " + table).query(Long.class).single();
	}

	@Configuration(proxyBeanMethods = false)
	static class TwoDatabases {

		@Bean
		DataSource ordersDatabase() {
			return orders.newDataSource(4);
		}

		// tag::ductor-data-source[]
		@Bean
		@DuctorDataSource
		@ConfigurationProperties("app.outbox.datasource")
		DataSource outboxDatabase() {
			return DataSourceBuilder.create().build();
		}
		// end::ductor-data-source[]

		@Bean
		CountingTransactionManager ordersTransactions() {
			return new CountingTransactionManager(orders.dataSource());
		}

		@Bean
		CountingTransactionManager outboxTransactions(@DuctorDataSource DataSource dataSource) {
			return new CountingTransactionManager(dataSource);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PrimaryOrders {

		@Bean
		@Primary
		DataSource ordersDatabase() {
			return primary.newDataSource(4);
		}

		@Bean
		DataSource outboxDatabase() {
			return outbox.newDataSource(4);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Unmarked {

		@Bean
		DataSource ordersDatabase() {
			return orders.newDataSource(4);
		}

		@Bean
		DataSource outboxDatabase() {
			return outbox.newDataSource(4);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BothMarked {

		@Bean
		@DuctorDataSource
		DataSource ordersDatabase() {
			return orders.newDataSource(4);
		}

		@Bean
		@DuctorDataSource
		DataSource outboxDatabase() {
			return outbox.newDataSource(4);
		}

	}

	static class Mailer {

		@io.ductor.effect.DurableEffect(name = "mail")
		public void mail(String text) {
		}

	}

	static class CountingTransactionManager extends DataSourceTransactionManager {

		volatile int begun;

		CountingTransactionManager(DataSource dataSource) {
			super(dataSource);
		}

		@Override
		protected void doBegin(Object transaction, org.springframework.transaction.TransactionDefinition definition) {
			this.begun++;
			super.doBegin(transaction, definition);
		}

	}

}
