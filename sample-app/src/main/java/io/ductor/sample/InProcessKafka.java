package io.ductor.sample;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.kafka.common.utils.Exit;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * A single-node Kafka broker (KRaft) in this JVM, stopped by {@link #destroy()}. Kafka's
 * test kit deletes the broker's directories from JVM shutdown hooks of its own, which on
 * {@code SIGTERM} run beside the application context's shutdown and pull the directories
 * from under the running broker (it then logs storage errors); those hooks are kept here
 * instead and run after the broker stopped.
 */
final class InProcessKafka implements DisposableBean {

	private final List<Runnable> cleanups = new CopyOnWriteArrayList<>();

	private final EmbeddedKafkaKraftBroker broker;

	InProcessKafka(String brokerListProperty) {
		EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
		broker.brokerListProperty(brokerListProperty);
		broker.brokerProperty("offsets.topic.replication.factor", "1");
		broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
		synchronized (InProcessKafka.class) {
			Exit.setShutdownHookAdder((name, hook) -> this.cleanups.add(hook));
			try {
				broker.afterPropertiesSet();
			}
			finally {
				Exit.resetShutdownHookAdder();
			}
		}
		this.broker = broker;
	}

	/**
	 * @return the broker's address, {@code host:port}
	 */
	String bootstrapServers() {
		return this.broker.getBrokersAsString();
	}

	@Override
	public void destroy() {
		try {
			this.broker.destroy();
		}
		finally {
			this.cleanups.forEach(Runnable::run);
		}
	}

}
