package io.ductor.sample;

/**
 * One Kafka broker (KRaft, in the test JVM) for the shops the tests start, given to them
 * as {@code spring.kafka.bootstrap-servers}: a shop then starts no broker of its own,
 * which would cost seconds per test class. The quick start's own broker is what
 * {@link SampleOnEmbeddedPostgresTest} and {@link SampleStopsCleanlyTest} run on.
 */
final class SampleKafka {

	private static InProcessKafka broker;

	private SampleKafka() {
	}

	/** The broker's address, starting it on first use; it stops with the JVM. */
	static synchronized String bootstrapServers() {
		if (broker == null) {
			InProcessKafka started = new InProcessKafka("sample.test.kafka.brokers");
			Runtime.getRuntime().addShutdownHook(new Thread(started::destroy, "sample-kafka-stop"));
			broker = started;
		}
		return broker.bootstrapServers();
	}

	/** {@code bootstrapServers()} as a command-line argument of the shop. */
	static String argument() {
		return "--spring.kafka.bootstrap-servers=" + bootstrapServers();
	}

}
