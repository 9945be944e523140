package io.ductor.tracing;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import io.ductor.messaging.IdempotentListener;
import io.ductor.test.TestDatabase;

/**
 * An application that publishes through Ductor's Kafka relay and consumes its own
 * messages with {@link IdempotentListener}, noting the {@code traceparent} each record
 * carries and the trace its listener runs in. Not a component of {@link TracedShop}: its
 * beans are declared here, and it is started on its own.
 */
@EnableAutoConfiguration
class KafkaRelayTrace {

	static final String TOPIC = "traced.orders";

	/**
	 * What the listener saw: the record's {@code traceparent} and the trace it ran in.
	 */
	record Seen(String key, String traceparent, String traceId) {
	}

	static ConfigurableApplicationContext start(TestDatabase database, EmbeddedKafkaKraftBroker broker) {
		return new SpringApplicationBuilder(KafkaRelayTrace.class).web(WebApplicationType.NONE)
			.properties(database.springProperties())
			.properties("spring.kafka.bootstrap-servers=" + broker.getBrokersAsString(),
					"spring.kafka.consumer.auto-offset-reset=earliest",
					"spring.kafka.listener.observation-enabled=true", "management.tracing.sampling.probability=1.0",
					"management.otlp.metrics.export.enabled=false", "ductor.effects.drainer.poll-interval=100ms",
					"logging.level.org.apache.kafka=warn", "spring.main.banner-mode=off")
			.run();
	}

	@Bean
	Listener tracedListener(Tracer tracer) {
		return new Listener(tracer);
	}

	/** The consumer: applies each message once and notes its trace. */
	static class Listener {

		private final List<Seen> seen = new CopyOnWriteArrayList<>();

		private final Tracer tracer;

		Listener(Tracer tracer) {
			this.tracer = tracer;
		}

		@KafkaListener(topics = TOPIC, groupId = "traced")
		@IdempotentListener
		public void on(ConsumerRecord<String, String> record) {
			Header traceparent = record.headers().lastHeader("traceparent");
			Span span = this.tracer.currentSpan();
			this.seen.add(new Seen(record.key(),
					(traceparent != null) ? new String(traceparent.value(), StandardCharsets.UTF_8) : "none",
					(span != null) ? span.context().traceId() : "no span"));
		}

		List<Seen> seen() {
			return List.copyOf(this.seen);
		}

	}

	static Map<String, Object> payload(String id) {
		return Map.of("orderId", id);
	}

}
