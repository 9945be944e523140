package io.ductor.reliability.modulith;

import java.util.concurrent.atomic.AtomicBoolean;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Places an order every {@code crash.interval-ms} on a thread of its own while
 * {@code crash.publish} is on: the order's row and its event in one transaction; every
 * tenth order's transaction is rolled back after the event was published.
 */
@Component
class OrderDesk implements DisposableBean {

	private final JdbcClient jdbc;

	private final ApplicationEventPublisher events;

	private final TransactionTemplate tx;

	private final boolean publish;

	private final long intervalMs;

	private final AtomicBoolean running = new AtomicBoolean(true);

	OrderDesk(JdbcClient jdbc, ApplicationEventPublisher events, PlatformTransactionManager transactions,
			@Value("${crash.publish:true}") boolean publish, @Value("${crash.interval-ms:20}") long intervalMs) {
		this.jdbc = jdbc;
		this.events = events;
		this.tx = new TransactionTemplate(transactions);
		this.publish = publish;
		this.intervalMs = intervalMs;
	}

	@EventListener(ApplicationReadyEvent.class)
	void start() {
		if (!this.publish) {
			return;
		}
		Thread thread = new Thread(this::placeOrders, "order-desk");
		thread.setDaemon(true);
		thread.start();
	}

	private void placeOrders() {
		while (this.running.get()) {
			try {
				this.tx.executeWithoutResult((status) -> {
					long seq = this.jdbc.sql("SELECT nextval('crash_order_seq')").query(Long.class).single();
					this.jdbc.sql("INSERT INTO crash_order (seq) VALUES (?)").param(seq).update();
					this.events.publishEvent(new OrderPlaced(seq));
					if (seq % 10 == 0) {
						status.setRollbackOnly();
					}
				});
				Thread.sleep(this.intervalMs);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (RuntimeException ex) {
				// the database went away for a moment; the next order tries again
			}
		}
	}

	@Override
	public void destroy() {
		this.running.set(false);
	}

}
