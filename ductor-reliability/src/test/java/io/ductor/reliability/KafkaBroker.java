package io.ductor.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.StringDeserializer;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

import org.springframework.util.FileSystemUtils;

import io.ductor.test.TcpProxy;

/**
 * A single-node KRaft broker in the test JVM behind a {@link TcpProxy}: the broker
 * advertises the proxy's address, so every client (the applications in JVMs of their own
 * too) connects through it, and the test can drop, refuse and mute their connections, and
 * restart the broker. The broker is Kafka's {@link KafkaClusterTestKit} (what Spring
 * Kafka's {@code EmbeddedKafkaKraftBroker} runs), built on a base directory and a cluster
 * id of its own and kept on close, so that a restart comes back with the same cluster,
 * metadata log and topic logs behind the same address (the proxy's; the broker's own port
 * is new).
 */
final class KafkaBroker implements AutoCloseable {

	private final TcpProxy proxy;

	private final Path directory;

	private final String clusterId = Uuid.randomUuid().toString();

	private KafkaClusterTestKit broker;

	KafkaBroker() {
		try {
			this.proxy = new TcpProxy();
			this.directory = Files.createTempDirectory("ductor-kafka-");
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		this.broker = start(true);
	}

	private KafkaClusterTestKit start(boolean format) {
		try {
			TestKitNodes nodes = new TestKitNodes.Builder().setCombined(true)
				.setNumBrokerNodes(1)
				.setNumControllerNodes(1)
				.setClusterId(this.clusterId)
				.setBaseDirectory(this.directory)
				.build();
			KafkaClusterTestKit broker = new KafkaClusterTestKit.Builder(nodes).setDeleteOnClose(false)
				.setConfigProp("advertised.listeners", "EXTERNAL://127.0.0.1:" + this.proxy.port())
				.setConfigProp("auto.create.topics.enable", "false")
				.setConfigProp("offsets.topic.replication.factor", "1")
				.setConfigProp("transaction.state.log.replication.factor", "1")
				.setConfigProp("transaction.state.log.min.isr", "1")
				.setConfigProp("group.initial.rebalance.delay.ms", "0")
				.build();
			if (format) {
				broker.format();
			}
			broker.startup();
			broker.waitForReadyBrokers();
			String servers = broker.bootstrapServers();
			this.proxy.target(Integer.parseInt(servers.substring(servers.lastIndexOf(':') + 1)));
			this.proxy.accepting();
			return broker;
		}
		catch (Exception ex) {
			throw new IllegalStateException("The broker did not start", ex);
		}
	}

	/**
	 * Stop the broker (every client connection closed, new ones refused) and start it
	 * again on the same directories: the same cluster with its records, offsets and
	 * producer state, behind the same address.
	 */
	void restart() {
		this.proxy.refuse();
		closeBroker();
		this.broker = start(false);
	}

	private void closeBroker() {
		try {
			this.broker.close();
		}
		catch (Exception ex) {
			throw new IllegalStateException("The broker did not stop", ex);
		}
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
		try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()))) {
			admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Topic " + name + " not created", ex);
		}
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
		closeBroker();
		try {
			this.proxy.close();
			FileSystemUtils.deleteRecursively(this.directory);
		}
		catch (IOException ex) {
			// closing
		}
	}

}
