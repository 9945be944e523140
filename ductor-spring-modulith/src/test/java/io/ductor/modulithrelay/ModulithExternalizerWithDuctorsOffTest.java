package io.ductor.modulithrelay;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.modulith.internal.RelayEventExternalizer;
import io.ductor.modulithrelay.ExternalizingApp.OrderCompleted;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/modulith.md: "{@code ductor.modulith.externalization.enabled=false} turns Ductor's
 * externalization off (Modulith's externalizers then run as listeners, after the commit,
 * as publications Ductor stores)". With Ductor's relay off, Modulith's own Kafka
 * externalizer ({@code spring-modulith-events-kafka}) must send a committed
 * {@code @Externalized} event, keyed as routed.
 */
class ModulithExternalizerWithDuctorsOffTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static EmbeddedKafkaKraftBroker broker;

	static ConfigurableApplicationContext context;

	@BeforeAll
	static void start() {
		broker = new EmbeddedKafkaKraftBroker(1, 3);
		broker.brokerProperty("auto.create.topics.enable", "true");
		broker.brokerProperty("offsets.topic.replication.factor", "1");
		broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
		broker.afterPropertiesSet();
		broker.addTopics(new NewTopic("orders.completed", 3, (short) 1));
		ExternalizedThroughKafkaTest.broker = broker;
		List<String> properties = new ArrayList<>(List.of(postgres.database().springProperties()));
		properties.addAll(List.of("spring.main.banner-mode=off", "logging.level.org.apache.kafka=warn",
				"spring.kafka.bootstrap-servers=" + broker.getBrokersAsString(),
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.backoff.initial=100ms",
				"ductor.effects.backoff.max=1s", "ductor.kafka.send-timeout=5s", "ductor.amqp.enabled=false",
				"ductor.modulith.externalization.enabled=false"));
		context = new SpringApplicationBuilder(ExternalizingApp.class).web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run();
	}

	@AfterAll
	static void stop() {
		if (context != null) {
			context.close();
		}
		broker.destroy();
		ExternalizedThroughKafkaTest.broker = null;
	}

	@Test
	void modulithsOwnKafkaExternalizerSendsTheCommittedEventWhenDuctorsIsTurnedOff() {
		assertThat(context.getBeansOfType(RelayEventExternalizer.class)).isEmpty();
		String order = "order-" + UUID.randomUUID();
		new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
			.executeWithoutResult((status) -> context.publishEvent(new OrderCompleted(order, 7)));
		List<ConsumerRecord<String, String>> records = ExternalizedThroughKafkaTest.readUntil("orders.completed",
				(r) -> r.value() != null && r.value().contains(order));
		ConsumerRecord<String, String> record = ExternalizedThroughKafkaTest.last(records);
		assertThat(record.key()).isEqualTo(order);
		assertThat(ExternalizedThroughKafkaTest.json(record)).isEqualTo(Map.of("orderId", order, "seq", 7));
	}

}
