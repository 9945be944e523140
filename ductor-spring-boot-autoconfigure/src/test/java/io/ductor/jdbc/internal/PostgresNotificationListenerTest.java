package io.ductor.jdbc.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.jdbc.internal.PostgresNotificationListener.NotificationHandler;
import io.ductor.jdbc.internal.PostgresNotificationListener.Subscription;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabases;
import io.ductor.worker.internal.DuctorThreads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class PostgresNotificationListenerTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	HikariDataSource listenerPool;

	PostgresNotificationListener listener;

	JdbcClient sender;

	final BlockingQueue<String> received = new LinkedBlockingQueue<>();

	final AtomicInteger connects = new AtomicInteger();

	@BeforeEach
	void start() {
		this.listenerPool = postgres.newDataSource(2);
		this.listener = new PostgresNotificationListener(this.listenerPool, Duration.ofMillis(100),
				Duration.ofMillis(200), PostgresNotificationListener.DEFAULT_VALIDATION_INTERVAL,
				DuctorThreads.platform());
		this.sender = JdbcClient.create(postgres.dataSource());
	}

	@AfterEach
	void stop() {
		this.listener.stop();
	}

	@Test
	void deliversNotificationsOfSubscribedChannelsOnly() throws Exception {
		this.listener.subscribe("ductor_test", handler());
		this.listener.start();
		String first = sendUntilReceived("ductor_test", "hello");
		assertThat(first).isEqualTo("hello");
		notify("other_channel", "not for us");
		notify("ductor_test", "second");
		assertThat(receivedUntil("second")).doesNotContain("not for us");
	}

	@Test
	void reconnectsByItselfAfterItsConnectionIsKilledAndSaysSo() throws Exception {
		this.listener.subscribe("ductor_test", handler());
		this.listener.start();
		sendUntilReceived("ductor_test", "before");
		assertThat(this.connects).hasValue(1);

		assertThat(TestDatabases.terminateConnections(postgres.database(), this.listenerPool.getPoolName()))
			.isPositive();

		assertThat(sendUntilReceived("ductor_test", "after")).isEqualTo("after");
		assertThat(this.connects).hasValueGreaterThanOrEqualTo(2);
		assertThat(this.listener.isConnected()).isTrue();
	}

	@Test
	void reconnectsByItselfWhenItsConnectionGoesSilentWithoutClosing() throws Exception {
		Matcher url = Pattern.compile("jdbc:postgresql://([^:/]+):(\\d+)/(.*)").matcher(postgres.jdbcUrl());
		assertThat(url.matches()).as(postgres.jdbcUrl()).isTrue();
		try (SilencingProxy proxy = new SilencingProxy(url.group(1), Integer.parseInt(url.group(2)));
				HikariDataSource throughProxy = new HikariDataSource()) {
			throughProxy.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + proxy.port() + "/" + url.group(3));
			throughProxy.setUsername(postgres.username());
			throughProxy.setPassword(postgres.password());
			throughProxy.setMaximumPoolSize(1);
			throughProxy.setValidationTimeout(1000);
			PostgresNotificationListener listener = new PostgresNotificationListener(throughProxy,
					Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(500), DuctorThreads.platform());
			try {
				listener.subscribe("ductor_test", handler());
				listener.start();
				sendUntilReceived("ductor_test", "before");
				assertThat(this.connects).hasValue(1);

				// the listening connection stays open but nothing reaches either end any
				// more
				proxy.silenceOpenConnections();

				assertThat(sendUntilReceived("ductor_test", "after")).isEqualTo("after");
				assertThat(this.connects).hasValueGreaterThanOrEqualTo(2);
			}
			finally {
				listener.stop();
			}
		}
	}

	@Test
	void subscriptionsMadeWhileRunningTakeEffectAndClosedOnesStop() throws Exception {
		this.listener.start();
		Subscription subscription = this.listener.subscribe("late_channel", handler());
		sendUntilReceived("late_channel", "late");
		subscription.close();
		// wait until the listener has dropped the channel: a marker on a second channel
		// arrives after it
		this.listener.subscribe("marker", handler());
		sendUntilReceived("marker", "marker");
		notify("late_channel", "ignored");
		notify("marker", "end");
		assertThat(receivedUntil("end")).doesNotContain("ignored");
	}

	@Test
	void rejectsChannelNamesThatAreNotPlainIdentifiers() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.listener.subscribe("Robert'); DROP", handler()))
			.withMessageContaining("channel must be a lower-case identifier");
	}

	private NotificationHandler handler() {
		return new NotificationHandler() {

			@Override
			public void notified(String payload) {
				PostgresNotificationListenerTest.this.received.add(payload);
			}

			@Override
			public void connected() {
				PostgresNotificationListenerTest.this.connects.incrementAndGet();
			}

		};
	}

	/**
	 * Notifications sent before the listener (re)connected are lost by design: send until
	 * one arrives.
	 */
	private String sendUntilReceived(String channel, String payload) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
		while (System.nanoTime() < deadline) {
			notify(channel, payload);
			String got = this.received.poll(100, TimeUnit.MILLISECONDS);
			if (got != null) {
				this.received.clear();
				return got;
			}
		}
		throw new AssertionError("no notification on " + channel + " within 20 s");
	}

	/**
	 * @return every payload received up to and including {@code last}
	 */
	private List<String> receivedUntil(String last) throws InterruptedException {
		List<String> payloads = new ArrayList<>();
		while (payloads.isEmpty() || !payloads.get(payloads.size() - 1).equals(last)) {
			String payload = this.received.poll(10, TimeUnit.SECONDS);
			assertThat(payload).as("payloads after " + payloads).isNotNull();
			payloads.add(payload);
		}
		return payloads;
	}

	private void notify(String channel, String payload) {
		this.sender.sql("SELECT pg_notify(?, ?)").params(channel, payload).query((rs) -> {
		});
	}

}
