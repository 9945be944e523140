package io.ductor.test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

/**
 * The RabbitMQ server the messaging tests use: 127.0.0.1:5672, guest/guest, shared with
 * other test runs (so every test names its exchanges and queues uniquely and deletes
 * them). Tests skip with a message when it does not answer. Its connections are dropped
 * from the broker's side with {@code rabbitmqctl close_connection}, by the connection
 * name the client gave them.
 */
public final class RabbitBroker {

	/** The broker's host. */
	public static final String HOST = "127.0.0.1";

	/** The broker's AMQP port. */
	public static final int PORT = 5672;

	private RabbitBroker() {
	}

	/**
	 * @return whether the broker accepts a TCP connection within a second
	 */
	public static boolean answers() {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(HOST, PORT), 1000);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/** Skips the calling test when the broker does not answer. */
	public static void assumeAvailable() {
		Assumptions.assumeTrue(answers(), "RabbitMQ does not answer on " + HOST + ":" + PORT
				+ " (guest/guest): the RabbitMQ tests are skipped. Start a RabbitMQ server there to run them.");
	}

	/**
	 * @param what what the name is for ("exchange", "queue")
	 * @return a name no other test uses
	 */
	public static String uniqueName(String what) {
		return "ductor-test-" + what + "-" + UUID.randomUUID().toString().substring(0, 12);
	}

	/**
	 * The {@code spring.rabbitmq.*} properties of the broker.
	 * @return the properties
	 */
	public static String[] springProperties() {
		return new String[] { "spring.rabbitmq.host=" + HOST, "spring.rabbitmq.port=" + PORT,
				"spring.rabbitmq.username=guest", "spring.rabbitmq.password=guest" };
	}

	/**
	 * @return whether {@code rabbitmqctl} can list the broker's connections here
	 */
	public static boolean canCloseConnections() {
		try {
			run("rabbitmqctl", "-q", "list_connections", "pid");
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Close, from the broker's side, every connection whose client named it
	 * {@code connectionName}.
	 * @param connectionName the client-provided connection name, unique to the test
	 * @return how many connections were closed
	 * @throws IOException when {@code rabbitmqctl} cannot be run
	 */
	public static int closeConnections(String connectionName) throws IOException {
		int closed = 0;
		for (String line : run("rabbitmqctl", "-q", "list_connections", "pid", "client_properties")) {
			if (line.contains("\"" + connectionName + "\"")) {
				String pid = line.substring(0, line.indexOf('\t')).trim();
				run("rabbitmqctl", "-q", "close_connection", pid, "dropped by a Ductor test");
				closed++;
			}
		}
		return closed;
	}

	/**
	 * The messages of a queue, ready or delivered and not yet acknowledged, as the broker
	 * counts them.
	 * @param queue the queue's name
	 * @return the count, or -1 when the queue does not exist
	 * @throws IOException when {@code rabbitmqctl} cannot be run
	 */
	public static long queueDepth(String queue) throws IOException {
		for (String line : run("rabbitmqctl", "-q", "list_queues", "name", "messages")) {
			String[] columns = line.split("\t");
			if (columns.length == 2 && columns[0].equals(queue)) {
				return Long.parseLong(columns[1].trim());
			}
		}
		return -1;
	}

	private static List<String> run(String... command) throws IOException {
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		List<String> lines = new ArrayList<>();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		try {
			if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
				process.destroyForcibly();
				throw new IOException(String.join(" ", command) + " failed: " + output);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("Interrupted", ex);
		}
		for (String line : output.split("\n")) {
			if (!line.isBlank()) {
				lines.add(line);
			}
		}
		return lines;
	}

}
