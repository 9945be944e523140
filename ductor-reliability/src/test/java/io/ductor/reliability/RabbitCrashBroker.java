package io.ductor.reliability;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;

import io.ductor.test.RabbitBroker;
import io.ductor.test.TcpProxy;

/**
 * The RabbitMQ server of the machine (127.0.0.1:5672, guest/guest, shared with other
 * runs, never restarted or reconfigured) behind a {@link TcpProxy}: the applications
 * connect through the proxy, so the test can drop, refuse and mute their connections. The
 * crash's topology is its own and uniquely named: a topic exchange, the consumer's queue
 * and an audit queue both bound with {@code #}; the audit queue is never consumed, so it
 * keeps a copy of every message the broker routed, duplicates included. Closing deletes
 * the exchange and both queues.
 */
final class RabbitCrashBroker implements AutoCloseable {

	final String exchange = RabbitBroker.uniqueName("crash-exchange");

	final String queue = RabbitBroker.uniqueName("crash-queue");

	final String audit = RabbitBroker.uniqueName("crash-audit");

	private final TcpProxy proxy;

	private final Connection connection;

	private final Channel channel;

	RabbitCrashBroker() throws IOException, TimeoutException {
		this.proxy = new TcpProxy();
		this.proxy.target(RabbitBroker.PORT);
		this.proxy.accepting();
		ConnectionFactory factory = new ConnectionFactory();
		factory.setHost(RabbitBroker.HOST);
		factory.setPort(RabbitBroker.PORT);
		factory.setUsername("guest");
		factory.setPassword("guest");
		// the test's own connection reaches the broker directly, never through the proxy
		this.connection = factory.newConnection("ductor-reliability-rabbit-crash");
		this.channel = this.connection.createChannel();
		this.channel.exchangeDeclare(this.exchange, "topic", false, false, null);
		for (String name : List.of(this.queue, this.audit)) {
			this.channel.queueDeclare(name, false, false, false, null);
			this.channel.queueBind(name, this.exchange, "#");
		}
	}

	/** Close every application connection; new ones are accepted at once. */
	void drop() {
		this.proxy.dropAll();
	}

	/**
	 * Close every application connection and refuse new ones until {@link #reconnect()}.
	 */
	void refuse() {
		this.proxy.refuse();
	}

	void reconnect() {
		this.proxy.accepting();
	}

	/**
	 * Let the applications' frames through but swallow the broker's, until
	 * {@link #answer()}: published messages are routed, their confirms lost.
	 */
	void muteAnswers() {
		this.proxy.mute();
	}

	/** Answer again, on new connections (the swallowed frames broke the old ones). */
	void answer() {
		this.proxy.unmute();
	}

	/**
	 * The {@code spring.rabbitmq.*} properties of the applications: the proxy's address.
	 */
	List<String> springProperties() {
		return List.of("spring.rabbitmq.host=" + RabbitBroker.HOST, "spring.rabbitmq.port=" + this.proxy.port(),
				"spring.rabbitmq.username=guest", "spring.rabbitmq.password=guest");
	}

	/**
	 * The messages of {@code queue} ready for delivery (not those delivered,
	 * unacknowledged).
	 */
	long ready(String queue) throws IOException {
		return this.channel.messageCount(queue);
	}

	/** Every message of the audit queue, in the order the broker routed them; removed. */
	List<GetResponse> drainAudit() throws IOException {
		List<GetResponse> messages = new ArrayList<>();
		for (GetResponse message = this.channel.basicGet(this.audit, true); message != null; message = this.channel
			.basicGet(this.audit, true)) {
			messages.add(message);
		}
		return messages;
	}

	@Override
	public void close() throws IOException, TimeoutException {
		this.proxy.refuse();
		try {
			this.channel.queueDelete(this.queue);
			this.channel.queueDelete(this.audit);
			this.channel.exchangeDelete(this.exchange);
			this.connection.close();
		}
		finally {
			this.proxy.close();
		}
	}

}
