package io.ductor.jdbc.internal;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.awaitility.Awaitility.await;

/**
 * Waits on what a {@link PostgresNotificationListener} has done instead of sleeping: its
 * handlers of one channel run one after the other in the order they subscribed, so once a
 * probe subscribed after them has heard a notification, they have handled it.
 */
public final class ListenerProbe implements AutoCloseable {

	private final List<String> heard = new CopyOnWriteArrayList<>();

	private final PostgresNotificationListener.Subscription subscription;

	private final String channel;

	private ListenerProbe(PostgresNotificationListener listener, String channel) {
		this.channel = channel;
		this.subscription = listener.subscribe(channel, this.heard::add);
	}

	/**
	 * Subscribe a probe to {@code channel} after the listener's other handlers, and wait
	 * until the listener listens on it: a notification sent on it comes back.
	 * @param listener the listener
	 * @param dataSource where to send the test notification from
	 * @param channel the channel
	 * @return the probe, to close at the end
	 */
	public static ListenerProbe listening(PostgresNotificationListener listener, DataSource dataSource,
			String channel) {
		ListenerProbe probe = new ListenerProbe(listener, channel);
		String payload = "probe-" + UUID.randomUUID();
		JdbcClient jdbc = JdbcClient.create(dataSource);
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
			jdbc.sql("SELECT pg_notify(?, ?)").param(channel).param(payload).query().singleRow();
			return probe.heard.contains(payload);
		});
		return probe;
	}

	/**
	 * Wait until the listener's handlers of this channel have handled a notification
	 * whose payload matches.
	 * @param payload what to wait for
	 */
	public void awaitHeard(Predicate<String> payload) {
		await().atMost(Duration.ofSeconds(30)).until(() -> this.heard.stream().anyMatch(payload));
	}

	/**
	 * @return the payloads heard on the channel so far, probes included
	 */
	public List<String> heard() {
		return List.copyOf(this.heard);
	}

	@Override
	public void close() {
		this.subscription.close();
	}

	@Override
	public String toString() {
		return "probe of " + this.channel;
	}

}
