package io.ductor.reliability;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import io.ductor.test.TcpProxy;

/**
 * A single-node KRaft broker in the test JVM behind a {@link TcpProxy}: the broker
 * advertises the proxy's address, so every client (the applications in JVMs of their own
 * too) connects through it, and the test can drop, refuse and mute their connections. A
 * restarted embedded broker would be a new, empty cluster, so the faults are the proxy's.
 */
final class KafkaBroker implements AutoCloseable {

	private final TcpProxy proxy;

	private final EmbeddedKafkaKraftBroker broker;

	KafkaBroker() {
		try {
			this.proxy = new TcpProxy();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
		// not spring.kafka.bootstrap-servers, which would reach the applications' JVMs
		broker.brokerListProperty("ductor.test.kafka.brokers");
		broker.brokerProperty("advertised.listeners", "EXTERNAL://127.0.0.1:" + this.proxy.port());
		broker.brokerProperty("auto.create.topics.enable", "false");
		broker.brokerProperty("offsets.topic.replication.factor", "1");
		broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
		broker.afterPropertiesSet();
		this.broker = broker;
		String servers = broker.getBrokersAsString();
		this.proxy.target(Integer.parseInt(servers.substring(servers.lastIndexOf(':') + 1)));
		this.proxy.accepting();
	}

	/** Close every client connection; new ones are accepted at once. */
	void drop() {
		this.proxy.dropAll();
	}

	/** Close every client connection and refuse new ones until {@link #reconnect()}. */
	void refuse() {
		this.proxy.refuse();
	}

	void reconnect() {
		this.proxy.accepting();
	}

	/**
	 * Let requests through but swallow the broker's answers, until {@link #answer()}: the
	 * broker writes the records, the producers never hear of it.
	 */
	void muteAnswers() {
		this.proxy.mute();
	}

	/** Answer again, on new connections (the swallowed answers broke the old ones). */
	void answer() {
		this.proxy.unmute();
	}

	/** The address clients use: the proxy's. */
	String bootstrapServers() {
		return "127.0.0.1:" + this.proxy.port();
	}

	void createTopic(String name, int partitions) {
		this.broker.addTopics(new NewTopic(name, partitions, (short) 1));
	}

	/**
	 * Every record of {@code topic}, read from the beginning to the end offsets of its
	 * partitions as they are now, by a consumer of a group of its own.
	 */
	List<ConsumerRecord<String, String>> readAll(String topic, Duration timeout) {
		List<ConsumerRecord<String, String>> records = new ArrayList<>();
		long deadline = System.nanoTime() + timeout.toNanos();
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
				ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(), ConsumerConfig.GROUP_ID_CONFIG,
				"judge-" + UUID.randomUUID(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
				ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
				StringDeserializer.class, ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
			List<TopicPartition> partitions = consumer.partitionsFor(topic)
				.stream()
				.map((info) -> new TopicPartition(topic, info.partition()))
				.toList();
			consumer.assign(partitions);
			consumer.seekToBeginning(partitions);
			Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
			while (partitions.stream().anyMatch((partition) -> consumer.position(partition) < end.get(partition))) {
				if (System.nanoTime() > deadline) {
					throw new AssertionError("Could not read " + topic + " to its end within " + timeout);
				}
				consumer.poll(Duration.ofMillis(200)).forEach(records::add);
			}
		}
		return records;
	}

	@Override
	public void close() {
		this.proxy.refuse();
		this.broker.destroy();
		try {
			this.proxy.close();
		}
		catch (IOException ex) {
			// closing
		}
	}

}
