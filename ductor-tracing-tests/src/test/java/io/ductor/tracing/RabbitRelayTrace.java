package io.ductor.tracing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;

import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import io.ductor.messaging.IdempotentListener;
import io.ductor.test.RabbitBroker;
import io.ductor.test.TestDatabase;

/**
 * An application that publishes through Ductor's RabbitMQ relay and consumes its own
 * messages with {@link IdempotentListener}, with the template's and the listener's
 * observations on as docs/messaging.md says, noting the {@code traceparent} each message
 * carries and the trace its listener runs in. Started on its own, like
 * {@link KafkaRelayTrace}.
 */
@EnableAutoConfiguration
class RabbitRelayTrace {

	static final String ROUTING_KEY = "order.placed";

	/** What the listener saw: the message's {@code traceparent} and its trace. */
	record Seen(String traceparent, String traceId) {
	}

	static ConfigurableApplicationContext start(TestDatabase database, String exchange, String queue) {
		return new SpringApplicationBuilder(RabbitRelayTrace.class).web(WebApplicationType.NONE)
			.properties(database.springProperties())
			.properties(RabbitBroker.springProperties())
			.properties("traced.exchange=" + exchange, "traced.queue=" + queue,
					"spring.rabbitmq.template.observation-enabled=true",
					"spring.rabbitmq.listener.simple.observation-enabled=true",
					"management.tracing.sampling.probability=1.0", "management.otlp.metrics.export.enabled=false",
					"ductor.effects.drainer.poll-interval=100ms", "spring.main.banner-mode=off")
			.run();
	}

	@Bean
	Declarables tracedDestination(@Value("${traced.exchange}") String exchange,
			@Value("${traced.queue}") String queue) {
		DirectExchange direct = new DirectExchange(exchange, false, true);
		Queue bound = new Queue(queue, false, false, true);
		Binding binding = BindingBuilder.bind(bound).to(direct).with(ROUTING_KEY);
		return new Declarables(direct, bound, binding);
	}

	@Bean
	Listener tracedRabbitListener(Tracer tracer) {
		return new Listener(tracer);
	}

	/** The consumer: applies each message once and notes its trace. */
	static class Listener {

		private final List<Seen> seen = new CopyOnWriteArrayList<>();

		private final Tracer tracer;

		Listener(Tracer tracer) {
			this.tracer = tracer;
		}

		@RabbitListener(queues = "${traced.queue}")
		@IdempotentListener
		public void on(Message message) {
			Object traceparent = message.getMessageProperties().getHeader("traceparent");
			Span span = this.tracer.currentSpan();
			this.seen.add(new Seen((traceparent != null) ? traceparent.toString() : "none",
					(span != null) ? span.context().traceId() : "no span"));
		}

		List<Seen> seen() {
			return List.copyOf(this.seen);
		}

	}

}
