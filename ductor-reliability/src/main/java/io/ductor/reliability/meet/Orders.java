package io.ductor.reliability.meet;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Places orders: a row per key and, for a new one, its three effects in the same
 * transaction. Placing a key again changes nothing.
 */
@Service
public class Orders {

	private final JdbcClient jdbc;

	private final Receivers receivers;

	private final String instance;

	Orders(JdbcClient jdbc, Receivers receivers, @Value("${meet.instance}") String instance) {
		this.jdbc = jdbc;
		this.receivers = receivers;
		this.instance = instance;
	}

	/**
	 * @param holdMillis how long the transaction stays open after recording
	 * @param rollBack whether it then rolls back
	 * @return whether the order is new
	 */
	@Transactional
	public boolean place(String key, long holdMillis, boolean rollBack) {
		boolean created = this.jdbc
			.sql("INSERT INTO meet_order (order_key, instance) VALUES (?, ?) ON CONFLICT DO NOTHING")
			.params(key, this.instance)
			.update() == 1;
		if (created) {
			this.receivers.limited(key);
			this.receivers.unlimited(key);
			this.receivers.once(key);
		}
		if (holdMillis > 0) {
			try {
				Thread.sleep(holdMillis);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("interrupted", ex);
			}
		}
		if (rollBack) {
			throw new RolledBack(key);
		}
		return created;
	}

	/** The order's transaction rolled back on purpose. */
	static class RolledBack extends RuntimeException {

		RolledBack(String key) {
			super("order " + key + " rolled back on purpose");
		}

	}

}
