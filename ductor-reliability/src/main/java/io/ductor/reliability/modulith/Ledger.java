package io.ductor.reliability.modulith;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Component;

/**
 * Books each order once: the entry is keyed by the publication, in the listener's own
 * transaction, so a publication delivered again books nothing twice.
 */
@Component
class Ledger {

	private final JdbcClient jdbc;

	private final CallLog calls;

	Ledger(JdbcClient jdbc, CallLog calls) {
		this.jdbc = jdbc;
		this.calls = calls;
	}

	@ApplicationModuleListener
	public void on(OrderPlaced event) throws InterruptedException {
		String key = this.calls.record("ledger", event);
		// work that a kill can interrupt
		Thread.sleep(15 + event.seq() % 30);
		this.jdbc.sql("INSERT INTO ledger_entry (publication_key, seq) VALUES (?, ?) ON CONFLICT DO NOTHING")
			.params(key, event.seq())
			.update();
	}

}
