package io.ductor.sample.modulith.inventory;

import java.util.List;
import java.util.Map;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Service;

import io.ductor.effect.EffectContext;
import io.ductor.sample.modulith.order.OrderCompleted;

/**
 * Takes the stock of completed orders out. Ductor's drainer runs the listener after the
 * order's commit, retries it with backoff when it throws, and gives it the publication's
 * stable key: the movement is keyed by it, so a redelivered publication moves nothing
 * twice.
 */
@Service
public class Inventory {

	private final JdbcClient jdbc;

	Inventory(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	// tag::listener[]
	@ApplicationModuleListener
	public void on(OrderCompleted event) {
		String publication = EffectContext.current().idempotencyKey();
		this.jdbc.sql("""
				INSERT INTO stock_movement (publication_key, order_id, sku, quantity) VALUES (?, ?, ?, ?)
				ON CONFLICT (publication_key) DO NOTHING""")
			.params(publication, event.orderId(), event.sku(), -event.quantity())
			.update();
	}
	// end::listener[]

	/**
	 * @param sku a product
	 * @return the movements of that product, oldest first
	 */
	public List<Map<String, Object>> movements(String sku) {
		return this.jdbc.sql("SELECT order_id, quantity FROM stock_movement WHERE sku = ? ORDER BY id")
			.param(sku)
			.query()
			.listOfRows();
	}

}
