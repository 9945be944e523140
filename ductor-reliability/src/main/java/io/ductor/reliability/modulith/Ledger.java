package io.ductor.reliability.modulith;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Books each order once, keyed by the publication. The entry commits before the listener
 * returns (in a transaction of its own), and the listener then goes on working: a kill in
 * that moment leaves a booked order whose publication is delivered again, and only the
 * stable key keeps it from being booked twice.
 */
@Component
class Ledger {

	private final JdbcClient jdbc;

	private final CallLog calls;

	private final TransactionTemplate booking;

	Ledger(JdbcClient jdbc, CallLog calls, PlatformTransactionManager transactions) {
		this.jdbc = jdbc;
		this.calls = calls;
		this.booking = new TransactionTemplate(transactions);
		this.booking.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
	}

	@ApplicationModuleListener
	public void on(OrderPlaced event) throws InterruptedException {
		String key = this.calls.record("ledger", event);
		this.booking.executeWithoutResult((status) -> this.jdbc
			.sql("INSERT INTO ledger_entry (publication_key, seq) VALUES (?, ?) ON CONFLICT DO NOTHING")
			.params(key, event.seq())
			.update());
		// work after the booking committed, that a kill can interrupt
		Thread.sleep(15 + event.seq() % 30);
	}

}
