package io.ductor.kafka;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import io.ductor.test.TcpProxy;

/**
 * A single-node KRaft broker in the test JVM on a fixed port, so that it can be stopped
 * and started again where the clients expect it.
 */
final class KafkaBroker implements AutoCloseable {

	private final TcpProxy proxy;

	private EmbeddedKafkaKraftBroker broker;

	KafkaBroker() {
		try {
			this.proxy = new TcpProxy();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		start();
	}

	/**
	 * Start a broker (a new, empty one after {@link #stop()}) that advertises the proxy's
	 * address, and point the proxy at it.
	 */
	void start() {
		EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 3);
		// not spring.kafka.bootstrap-servers, which would override the applications' own
		broker.brokerListProperty("ductor.test.kafka.brokers");
		broker.brokerProperty("advertised.listeners", "EXTERNAL://127.0.0.1:" + this.proxy.port());
		broker.brokerProperty("auto.create.topics.enable", "true");
		broker.brokerProperty("offsets.topic.replication.factor", "1");
		broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
		broker.afterPropertiesSet();
		this.broker = broker;
		String servers = broker.getBrokersAsString();
		this.proxy.target(Integer.parseInt(servers.substring(servers.lastIndexOf(':') + 1)));
		this.proxy.accepting();
	}

	/**
	 * Stop the broker: every connection to it drops and none is accepted until
	 * {@link #start()}.
	 */
	void stop() {
		this.proxy.refuse();
		this.broker.destroy();
	}

	/** Drop every client connection and refuse new ones until {@link #reconnect()}. */
	void disconnect() {
		this.proxy.refuse();
	}

	/** Let requests through but swallow the broker's answers, until {@link #answer()}. */
	void muteAnswers() {
		this.proxy.mute();
	}

	void answer() {
		this.proxy.unmute();
	}

	void reconnect() {
		this.proxy.accepting();
	}

	/** The address clients use: the proxy's. */
	String bootstrapServers() {
		return "127.0.0.1:" + this.proxy.port();
	}

	void createTopic(String name, int partitions, Map<String, String> config) {
		this.broker.addTopics(new NewTopic(name, partitions, (short) 1).configs(config));
	}

	EmbeddedKafkaKraftBroker embedded() {
		return this.broker;
	}

	@Override
	public void close() {
		stop();
		try {
			this.proxy.close();
		}
		catch (IOException ex) {
			// closing
		}
	}

	/** A consumer of one topic from its beginning, in a group of its own. */
	KafkaConsumer<String, String> consumer(String topic) {
		KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
				bootstrapServers(), ConsumerConfig.GROUP_ID_CONFIG, "test-" + UUID.randomUUID(),
				ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
				StringDeserializer.class, ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
		consumer.subscribe(List.of(topic));
		return consumer;
	}

	/**
	 * Read {@code topic} from its beginning until a record matches {@code last}.
	 * @return every record read, the matching one last
	 */
	List<ConsumerRecord<String, String>> readUntil(String topic, Predicate<ConsumerRecord<String, String>> last,
			Duration timeout) {
		List<ConsumerRecord<String, String>> records = new ArrayList<>();
		long deadline = System.nanoTime() + timeout.toNanos();
		try (KafkaConsumer<String, String> consumer = consumer(topic)) {
			while (System.nanoTime() < deadline) {
				for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
					records.add(record);
					if (last.test(record)) {
						return records;
					}
				}
			}
		}
		throw new AssertionError("No matching record on " + topic + " within " + timeout + "; read " + records);
	}

	static String header(ConsumerRecord<?, ?> record, String name) {
		Header header = record.headers().lastHeader(name);
		return (header != null) ? new String(header.value(), StandardCharsets.UTF_8) : null;
	}

}
