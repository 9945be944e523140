package io.ductor.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import org.springframework.context.SmartLifecycle;

import io.ductor.worker.internal.Backoff;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.PeriodicWorker;

/**
 * Receives PostgreSQL notifications ({@code LISTEN}/{@code NOTIFY}) on one dedicated
 * connection and hands them to the handlers subscribed to their channel.
 * <p>
 * The connection is taken from the application's {@link DataSource} when the listener
 * starts and kept for as long as it runs, on a thread of its own. When the connection is
 * lost the thread reconnects by itself, listens again and tells every handler
 * ({@link NotificationHandler#connected()}), because notifications sent meanwhile are
 * gone: a handler must treat a notification as a hint to look, never as the only way to
 * learn something.
 * <p>
 * Waiting for notifications never notices a dead connection: a backend that was killed is
 * seen at the next read, but a connection left half-open by a failover, a dropped NAT
 * entry or a stopped proxy just stays silent. So every validation interval the listener
 * runs a cheap query on its connection with a network timeout of the same length; a query
 * that fails or gets no answer in time closes the connection and the listener reconnects.
 */
public class PostgresNotificationListener implements SmartLifecycle {

	/** Channel names Ductor accepts: plain, unquoted PostgreSQL identifiers. */
	private static final Pattern CHANNEL = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

	private static final Log logger = LogFactory.getLog(PostgresNotificationListener.class);

	/** How long one receive call waits, unless configured otherwise: half a second. */
	public static final Duration DEFAULT_RECEIVE_TIMEOUT = Duration.ofMillis(500);

	/** The longest pause between reconnection attempts, unless configured otherwise. */
	public static final Duration DEFAULT_MAX_RECONNECT_DELAY = Duration.ofSeconds(5);

	/** How often the connection is checked, unless configured otherwise. */
	public static final Duration DEFAULT_VALIDATION_INTERVAL = Duration.ofSeconds(5);

	private final DataSource dataSource;

	private final Duration receiveTimeout;

	private final Backoff reconnectBackoff;

	private final Duration validationInterval;

	private final Map<String, List<NotificationHandler>> handlers = new ConcurrentHashMap<>();

	private final DuctorThreads threads;

	private volatile Thread thread;

	private volatile boolean connected;

	/**
	 * Create a listener ({@link #DEFAULT_RECEIVE_TIMEOUT},
	 * {@link #DEFAULT_MAX_RECONNECT_DELAY} and {@link #DEFAULT_VALIDATION_INTERVAL} are
	 * Ductor's timings).
	 * @param dataSource where the listening connection comes from
	 * @param receiveTimeout how long one receive call waits; also how quickly new
	 * subscriptions take effect and how long {@link #stop()} may take
	 * @param maxReconnectDelay the longest pause between reconnection attempts
	 * @param validationInterval how often the connection is checked with a query, and how
	 * long that query may wait for its answer: a dead connection is noticed within twice
	 * this
	 * @param threads where its thread comes from, and the deadline of its stop
	 */
	public PostgresNotificationListener(DataSource dataSource, Duration receiveTimeout, Duration maxReconnectDelay,
			Duration validationInterval, DuctorThreads threads) {
		if (validationInterval.isNegative() || validationInterval.isZero()) {
			throw new IllegalArgumentException("validationInterval must be positive but was " + validationInterval);
		}
		this.dataSource = dataSource;
		this.threads = threads;
		this.receiveTimeout = receiveTimeout;
		this.validationInterval = validationInterval;
		// jittered, so instances that lost the database together do not reconnect in
		// lockstep
		this.reconnectBackoff = new Backoff(min(Duration.ofMillis(100), maxReconnectDelay), maxReconnectDelay, 2.0);
	}

	/**
	 * Hand every notification on {@code channel} to {@code handler}, on the listener's
	 * thread. Handlers must return quickly.
	 * @param channel the channel, a lower-case identifier of at most 63 characters
	 * @param handler what to call
	 * @return a handle that ends the subscription when closed
	 */
	public Subscription subscribe(String channel, NotificationHandler handler) {
		if (channel == null || !CHANNEL.matcher(channel).matches()) {
			throw new IllegalArgumentException("channel must be a lower-case identifier ([a-z_][a-z0-9_]*, at most 63"
					+ " characters) but was '" + channel + "'");
		}
		this.handlers.computeIfAbsent(channel, (name) -> new CopyOnWriteArrayList<>()).add(handler);
		return () -> this.handlers.computeIfPresent(channel, (name, list) -> {
			list.remove(handler);
			return list.isEmpty() ? null : list;
		});
	}

	/**
	 * @return whether the listening connection is currently open and listening
	 */
	public boolean isConnected() {
		return this.connected;
	}

	@Override
	public synchronized void start() {
		if (this.thread != null) {
			return;
		}
		Thread thread = this.threads.newThread("notifications", this::listen);
		this.thread = thread;
		thread.start();
	}

	@Override
	public synchronized void stop() {
		Thread thread = this.thread;
		if (thread == null) {
			return;
		}
		this.thread = null;
		// the receive call under way returns within its timeout; a reconnection pause
		// is cut short
		this.threads.stopDeadline().within(this.receiveTimeout.multipliedBy(4).plusSeconds(1)).joinOrInterrupt(thread);
	}

	@Override
	public boolean isRunning() {
		return this.thread != null;
	}

	/**
	 * Starts before the drainer and the periodic workers whose work its notifications
	 * wake, and stops after them: last in Ductor's stop.
	 */
	@Override
	public int getPhase() {
		return PeriodicWorker.PHASE - 1;
	}

	private void listen() {
		Thread self = Thread.currentThread();
		long failures = 0;
		while (this.thread == self) {
			try (Connection connection = this.dataSource.getConnection()) {
				connection.setAutoCommit(true);
				boundReads(connection);
				PGConnection postgres = connection.unwrap(PGConnection.class);
				Set<String> listening = new HashSet<>();
				syncChannels(connection, listening);
				this.connected = true;
				failures = 0;
				notifyConnected();
				long validated = System.nanoTime();
				while (this.thread == self) {
					if (System.nanoTime() - validated >= this.validationInterval.toNanos()) {
						validate(connection);
						validated = System.nanoTime();
					}
					syncChannels(connection, listening);
					PGNotification[] notifications = postgres
						.getNotifications((int) Math.max(1, this.receiveTimeout.toMillis()));
					if (notifications != null) {
						for (PGNotification notification : notifications) {
							dispatch(notification.getName(), notification.getParameter());
						}
					}
				}
			}
			catch (SQLException | RuntimeException ex) {
				this.connected = false;
				failures++;
				if (this.thread == self) {
					Duration delay = reconnectDelay(failures);
					logger.warn("Ductor's notification listener lost its connection (" + ex.getMessage()
							+ "); reconnecting in " + delay.toMillis() + " ms");
					sleep(delay);
				}
			}
			finally {
				this.connected = false;
			}
		}
	}

	/**
	 * Bounds every read on the listening connection, the validation query's included. A
	 * pool or driver that cannot set a network timeout still gets the validation query,
	 * which then notices a connection closed under it but may wait on a half-open one
	 * until TCP gives up.
	 */
	private void boundReads(Connection connection) throws SQLException {
		try {
			connection.setNetworkTimeout(Runnable::run, networkTimeoutMillis());
		}
		catch (SQLFeatureNotSupportedException ex) {
			logger.debug("The listening connection cannot set a network timeout", ex);
		}
	}

	/**
	 * The network timeout of the listening connection: the validation interval, and never
	 * shorter than a receive call, which sets its own read timeout while it waits.
	 */
	private int networkTimeoutMillis() {
		long millis = Math.max(this.validationInterval.toMillis(), this.receiveTimeout.toMillis() + 1000);
		return (int) Math.min(millis, Integer.MAX_VALUE);
	}

	/**
	 * Runs a cheap query on the listening connection: on a connection that is half-open
	 * it gets no answer, the read times out and the connection is closed.
	 */
	private static void validate(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute("SELECT 1");
		}
	}

	private void syncChannels(Connection connection, Set<String> listening) throws SQLException {
		if (listening.equals(this.handlers.keySet())) {
			return;
		}
		try (Statement statement = connection.createStatement()) {
			for (String channel : Set.copyOf(this.handlers.keySet())) {
				if (listening.add(channel)) {
					statement.execute("LISTEN " + channel);
				}
			}
			for (String channel : Set.copyOf(listening)) {
				if (!this.handlers.containsKey(channel)) {
					statement.execute("UNLISTEN " + channel);
					listening.remove(channel);
				}
			}
		}
	}

	private void dispatch(String channel, String payload) {
		for (NotificationHandler handler : this.handlers.getOrDefault(channel, List.of())) {
			try {
				handler.notified(payload);
			}
			catch (RuntimeException ex) {
				logger.warn("A handler of notification channel '" + channel + "' failed", ex);
			}
		}
	}

	private void notifyConnected() {
		this.handlers.values().forEach((list) -> list.forEach((handler) -> {
			try {
				handler.connected();
			}
			catch (RuntimeException ex) {
				logger.warn("A notification handler failed after the listener connected", ex);
			}
		}));
	}

	private Duration reconnectDelay(long failures) {
		return this.reconnectBackoff.delay((int) Math.min(failures, 64));
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	private static void sleep(Duration delay) {
		try {
			Thread.sleep(delay.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Receives the notifications of one channel.
	 */
	@FunctionalInterface
	public interface NotificationHandler {

		/**
		 * A notification arrived.
		 * @param payload its payload, empty when none was sent
		 */
		void notified(String payload);

		/**
		 * The listener (re)connected: notifications sent while it was away are lost, so
		 * look for what they would have announced.
		 */
		default void connected() {
		}

	}

	/**
	 * Ends a subscription.
	 */
	@FunctionalInterface
	public interface Subscription extends AutoCloseable {

		@Override
		void close();

	}

}
