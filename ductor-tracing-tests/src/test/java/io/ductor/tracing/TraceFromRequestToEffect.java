package io.ductor.tracing;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.amqp.DurableRabbit;
import io.ductor.kafka.DurableKafka;
import io.ductor.test.PostgresExtension;
import io.ductor.test.RabbitBroker;
import io.ductor.test.TestDatabases;
import io.ductor.test.docs.DocSnippets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What both tracers must do with the dependencies {@code docs/tracing.md} names: a
 * request that records an effect and the effect's attempt share one trace id, and the
 * intent stores the request's trace context; a message sent through Ductor's Kafka relay
 * carries the trace of the transaction that recorded it, and the consumer's
 * {@code @IdempotentListener} runs in that trace.
 */
@SpringBootTest(classes = TracedShop.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.tracing.sampling.probability=1.0", "management.otlp.metrics.export.enabled=false" })
abstract class TraceFromRequestToEffect {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", postgres::jdbcUrl);
		registry.add("spring.datasource.username", postgres::username);
		registry.add("spring.datasource.password", () -> (postgres.password() != null) ? postgres.password() : "");
	}

	@LocalServerPort
	int port;

	@Autowired
	TracedShop.Confirmations confirmations;

	@Autowired
	Tracer tracer;

	@Autowired
	DataSource dataSource;

	/**
	 * @return the index of the page's dependency block of this tracer
	 */
	abstract int dependencyBlock();

	/**
	 * @return the simple name of the tracer class this tracer's module makes
	 */
	abstract String tracerClass();

	@Test
	void thePagesDependenciesAreThisModules() {
		List<DocSnippets.Snippet> snippets = DocSnippets.between(Path.of("../docs/tracing.md"), "tracing-dependencies");
		assertThat(snippets).extracting(DocSnippets.Snippet::language).containsExactly("xml", "xml");
		DocSnippets.assertRuns(snippets.get(dependencyBlock()), Path.of("pom.xml"));
	}

	@Test
	void aMessageRelayedToKafkaCarriesTheRecordingTransactionsTraceToTheListener() {
		EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
		broker.brokerListProperty("ductor.tracing.kafka.brokers");
		broker.brokerProperty("offsets.topic.replication.factor", "1");
		broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
		broker.afterPropertiesSet();
		try (ConfigurableApplicationContext app = KafkaRelayTrace.start(TestDatabases.create(), broker)) {
			Tracer tracer = app.getBean(Tracer.class);
			DurableKafka kafka = app.getBean(DurableKafka.class);
			TransactionTemplate transactions = app.getBean(TransactionTemplate.class);
			Span span = tracer.nextSpan().name("place order").start();
			String traceId = span.context().traceId();
			try (Tracer.SpanInScope scope = tracer.withSpan(span)) {
				transactions.executeWithoutResult(
						(status) -> kafka.send(KafkaRelayTrace.TOPIC, "o-1", KafkaRelayTrace.payload("o-1")));
			}
			finally {
				span.end();
			}
			KafkaRelayTrace.Listener listener = app.getBean(KafkaRelayTrace.Listener.class);
			await().atMost(Duration.ofSeconds(60)).until(() -> !listener.seen().isEmpty());
			KafkaRelayTrace.Seen seen = listener.seen().get(0);
			assertThat(seen.key()).isEqualTo("o-1");
			assertThat(seen.traceparent()).as("the record's traceparent header")
				.matches("00-" + traceId + "-[0-9a-f]{16}-0[01]");
			assertThat(seen.traceId()).as("the trace the listener's body runs in").isEqualTo(traceId);
		}
		finally {
			broker.destroy();
		}
	}

	@Test
	void aMessageRelayedToRabbitMqCarriesTheRecordingTransactionsTraceToTheListener() {
		RabbitBroker.assumeAvailable();
		String exchange = RabbitBroker.uniqueName("exchange");
		try (ConfigurableApplicationContext app = RabbitRelayTrace.start(TestDatabases.create(), exchange,
				RabbitBroker.uniqueName("queue"))) {
			Tracer tracer = app.getBean(Tracer.class);
			DurableRabbit rabbit = app.getBean(DurableRabbit.class);
			TransactionTemplate transactions = app.getBean(TransactionTemplate.class);
			Span span = tracer.nextSpan().name("place order").start();
			String traceId = span.context().traceId();
			try (Tracer.SpanInScope scope = tracer.withSpan(span)) {
				transactions.executeWithoutResult((status) -> rabbit.send(exchange, RabbitRelayTrace.ROUTING_KEY,
						KafkaRelayTrace.payload("o-2")));
			}
			finally {
				span.end();
			}
			RabbitRelayTrace.Listener listener = app.getBean(RabbitRelayTrace.Listener.class);
			await().atMost(Duration.ofSeconds(60)).until(() -> !listener.seen().isEmpty());
			RabbitRelayTrace.Seen seen = listener.seen().get(0);
			assertThat(seen.traceparent()).as("the message's traceparent header")
				.matches("00-" + traceId + "-[0-9a-f]{16}-0[01]");
			assertThat(seen.traceId()).as("the trace the listener's body runs in").isEqualTo(traceId);
		}
	}

	@Test
	void aRequestAndTheEffectItRecordsShareOneTraceId() throws Exception {
		assertThat(this.tracer.getClass().getSimpleName()).isEqualTo(tracerClass());
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/orders/o-1"))
				.POST(HttpRequest.BodyPublishers.noBody())
				.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(200);
		String requestTraceId = response.body();
		assertThat(requestTraceId).matches("[0-9a-f]{32}");
		await().atMost(Duration.ofSeconds(30)).until(() -> !this.confirmations.traceIds().isEmpty());
		assertThat(this.confirmations.traceIds()).containsExactly(requestTraceId);
		String stored = JdbcClient.create(this.dataSource)
			.sql("SELECT trace_context::text FROM eec_effect_intent WHERE effect_name = 'order.confirm'")
			.query(String.class)
			.single();
		assertThat(stored).contains("traceparent").contains(requestTraceId);
	}

}
