package io.ductor.autoconfigure;

import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;

import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.jdbc.BrokerTransactionManager;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An application whose only (or primary) transaction manager is not its database's, a
 * message broker's: Ductor's own transactions still hold a connection of the database, so
 * a one-transaction decision and a tick still commit with their writes or not at all.
 * With the application's database transaction manager, Ductor uses that one.
 */
class OtherTransactionManagerTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(DataSourceAutoConfiguration.class,
			DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
			JacksonAutoConfiguration.class, DuctorAutoConfiguration.class, DuctorIdempotencyAutoConfiguration.class);

	final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(CONFIGURATIONS)
		.withPropertyValues("spring.datasource.url=" + postgres.jdbcUrl(),
				"spring.datasource.username=" + postgres.username(),
				"spring.datasource.password=" + (postgres.password() != null ? postgres.password() : ""),
				"spring.datasource.hikari.maximum-pool-size=4", "ductor.effects.drainer.enabled=false",
				"ductor.effects.reconciler.enabled=false", "ductor.idempotency.sweeper.enabled=false",
				"ductor.retention.enabled=false");

	@BeforeAll
	static void tables() {
		JdbcClient.create(postgres.dataSource()).sql("CREATE TABLE parcel (id text PRIMARY KEY)").update();
	}

	@Test
	void aOneTransactionDecisionAndATickRollBackWithTheirWritesUnderABrokersTransactionManager() {
		this.runner.withUserConfiguration(BrokerOnly.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(PlatformTransactionManager.class)).isInstanceOf(BrokerTransactionManager.class);
			JdbcTemplate jdbc = new JdbcTemplate(context.getBean(javax.sql.DataSource.class));

			IdempotencyService idempotency = context.getBean(IdempotencyService.class);
			String key = UUID.randomUUID().toString();
			IdempotentRequest request = new IdempotentRequest("", "parcels", key, "fp");
			assertThatThrownBy(() -> idempotency.executeInTransaction(request, String.class, () -> {
				jdbc.update("INSERT INTO parcel VALUES (?)", key);
				throw new IllegalStateException("the label printer jammed");
			})).hasMessageContaining("jammed");
			assertThat(parcels(jdbc, key)).as("the decision's write").isZero();
			assertThat(jdbc.queryForObject("SELECT count(*) FROM eec_routing_idempotency WHERE idempotency_key = ?",
					Long.class, key))
				.as("the reservation")
				.isZero();
			// the retry runs at once and decides
			assertThat(idempotency.executeInTransaction(request, String.class, () -> {
				jdbc.update("INSERT INTO parcel VALUES (?)", key);
				return "labelled";
			}).value()).isEqualTo("labelled");
			assertThat(parcels(jdbc, key)).isOne();

			TickService ticks = context.getBean(TickService.class);
			String run = "parcel-run-" + key;
			ticks.start("parcel", run, Map.of("step", 0));
			assertThatThrownBy(() -> ticks.tick(run, "label", Map.class, (state, tick) -> {
				jdbc.update("INSERT INTO parcel VALUES (?)", run);
				throw new IllegalStateException("the label printer jammed");
			})).hasMessageContaining("jammed");
			assertThat(parcels(jdbc, run)).as("the tick's write").isZero();
		});
	}

	@Test
	void theApplicationsDatabaseTransactionManagerIsTheOneDuctorUses() {
		this.runner.withUserConfiguration(DatabaseAndBroker.class).run((context) -> {
			assertThat(context).hasNotFailed();
			IdempotencyService idempotency = context.getBean(IdempotencyService.class);
			CountingTransactionManager database = context.getBean(CountingTransactionManager.class);
			int before = database.begun;
			idempotency.executeInTransaction(new IdempotentRequest("", "parcels", UUID.randomUUID().toString(), "fp"),
					String.class, () -> "labelled");
			assertThat(database.begun).isGreaterThan(before);
		});
	}

	@Test
	void aTransactionManagerExposingTheDatabaseToJdbcAsJpasDoesIsTheOneDuctorUses() {
		this.runner.withUserConfiguration(JpaLike.class).run((context) -> {
			assertThat(context).hasNotFailed();
			JpaLikeTransactionManager jpa = context.getBean(JpaLikeTransactionManager.class);
			int before = jpa.begun;
			context.getBean(IdempotencyService.class)
				.executeInTransaction(new IdempotentRequest("", "parcels", UUID.randomUUID().toString(), "fp"),
						String.class, () -> "labelled");
			assertThat(jpa.begun).isGreaterThan(before);
		});
	}

	static long parcels(JdbcTemplate jdbc, String id) {
		return jdbc.queryForObject("SELECT count(*) FROM parcel WHERE id = ?", Long.class, id);
	}

	@Configuration(proxyBeanMethods = false)
	static class BrokerOnly {

		@Bean
		BrokerTransactionManager brokerTransactionManager() {
			return new BrokerTransactionManager();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DatabaseAndBroker {

		@Bean
		@org.springframework.context.annotation.Primary
		CountingTransactionManager transactionManager(javax.sql.DataSource dataSource) {
			return new CountingTransactionManager(dataSource);
		}

		@Bean
		BrokerTransactionManager brokerTransactionManager() {
			return new BrokerTransactionManager();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class JpaLike {

		@Bean
		JpaLikeTransactionManager transactionManager(javax.sql.DataSource dataSource) {
			return new JpaLikeTransactionManager(dataSource);
		}

	}

	/**
	 * Manages another resource but exposes its transactions' connection of the
	 * {@code DataSource} to JDBC code, as {@code JpaTransactionManager} does: a
	 * {@code DataSourceTransactionManager} of Ductor's own beside it would refuse its
	 * transactions ("Pre-bound JDBC Connection found!"), so it is the one to use.
	 */
	static final class JpaLikeTransactionManager extends DataSourceTransactionManager {

		volatile int begun;

		JpaLikeTransactionManager(javax.sql.DataSource dataSource) {
			super(dataSource);
		}

		/** Its resource is another one; {@link #getDataSource()} exposes the database. */
		@Override
		public Object getResourceFactory() {
			return "an entity manager factory";
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
			this.begun++;
			super.doBegin(transaction, definition);
		}

	}

	/** The application's own database transaction manager, counting its transactions. */
	static final class CountingTransactionManager extends DataSourceTransactionManager {

		volatile int begun;

		CountingTransactionManager(javax.sql.DataSource dataSource) {
			super(dataSource);
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
			this.begun++;
			super.doBegin(transaction, definition);
		}

	}

}
