package io.ductor.modulith.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.Externalized;
import org.springframework.modulith.events.config.EventExternalizationAutoConfiguration;
import org.springframework.modulith.events.config.EventPublicationAutoConfiguration;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.amqp.DurableRabbit;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.kafka.DurableKafka;
import io.ductor.modulith.autoconfigure.DuctorModulithAutoConfiguration;
import io.ductor.modulith.autoconfigure.DuctorModulithExternalizationAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A relay bean of the application's named as Ductor's Kafka or RabbitMQ relay replaces
 * Ductor's, and the externalizer records externalized events through it, against
 * PostgreSQL.
 */
class ReplaceableRelayTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorModulithAutoConfiguration.class, EventPublicationAutoConfiguration.class,
				EventExternalizationAutoConfiguration.class, DuctorModulithExternalizationAutoConfiguration.class))
		.withPropertyValues(postgres.database().springProperties())
		.withPropertyValues("ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false")
		.withBean(EventExternalizationConfiguration.class,
				() -> EventExternalizationConfiguration.externalizing()
					.select(EventExternalizationConfiguration.annotatedAsExternalized())
					.build());

	@Test
	void theApplicationsRabbitRelayReplacesDuctorsAndRecordsTheEvents() {
		RecordingRelay relay = new RecordingRelay();
		this.runner.withBean(DurableRabbit.class, () -> (message) -> "ductors")
			.withBean("ductorModulithRabbitRelay", EventRelay.class, () -> relay)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBeansOfType(EventRelay.class)).containsOnlyKeys("ductorModulithRabbitRelay")
					.containsValue(relay);
				publish(context.getBean(TransactionTemplate.class), context);
				assertThat(relay.targets).containsExactly("parcels");
			});
	}

	@Test
	void theApplicationsKafkaRelayReplacesDuctorsAndRecordsTheEvents() {
		RecordingRelay relay = new RecordingRelay();
		this.runner.withBean(DurableKafka.class, NoKafka::new)
			.withBean("ductorModulithKafkaRelay", EventRelay.class, () -> relay)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBeansOfType(EventRelay.class)).containsOnlyKeys("ductorModulithKafkaRelay")
					.containsValue(relay);
				publish(context.getBean(TransactionTemplate.class), context);
				assertThat(relay.targets).containsExactly("parcels");
			});
	}

	private static void publish(TransactionTemplate transactions,
			org.springframework.context.ApplicationEventPublisher publisher) {
		transactions.executeWithoutResult((status) -> publisher.publishEvent(new ParcelSent("p-1")));
	}

	@Externalized("parcels")
	record ParcelSent(String id) {
	}

	static class NoKafka implements DurableKafka {

		@Override
		public String send(String topic, @Nullable String key, Object payload, Map<String, String> headers) {
			return "ductors";
		}

		@Override
		public String send(String idempotencyKey, String topic, @Nullable String key, Object payload,
				Map<String, String> headers) {
			return idempotencyKey;
		}

	}

	static class RecordingRelay implements EventRelay {

		final List<String> targets = new CopyOnWriteArrayList<>();

		@Override
		public String record(String target, @Nullable String key, Object payload, Map<String, String> headers) {
			this.targets.add(target);
			return "users";
		}

	}

}
