package io.ductor.sample.stock;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * The shop's stock room, a receiver living in the shop's own database. It makes deduplication
 * authoritative at its own boundary: the reservation row (keyed by the idempotency key) and the
 * stock it takes commit in one transaction, and a repeated key returns the saved outcome.
 */
@Component
public class StockRoom {

	private final JdbcClient jdbc;

	StockRoom(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/**
	 * Reserve stock for an order, at most once per key. Joins the caller's transaction, so that the
	 * caller can commit the answer (a tick folding it into the order's run) with it.
	 * @param idempotencyKey the key
	 * @param orderId the order
	 * @param sku the product
	 * @param quantity how many
	 * @return {@code true} when reserved, {@code false} when out of stock
	 */
	@Transactional(propagation = Propagation.MANDATORY)
	public boolean reserve(String idempotencyKey, String orderId, String sku, int quantity) {
		int inserted = this.jdbc.sql("""
				INSERT INTO sample_stock_reservation (idempotency_key, order_id, sku, quantity, outcome)
				VALUES (?, ?, ?, ?, 'reserved') ON CONFLICT (idempotency_key) DO NOTHING""")
			.params(idempotencyKey, orderId, sku, quantity)
			.update();
		if (inserted == 1) {
			int taken = this.jdbc.sql("UPDATE sample_product SET available = available - ? WHERE sku = ? AND available >= ?")
				.params(quantity, sku, quantity)
				.update();
			if (taken == 0) {
				this.jdbc.sql("UPDATE sample_stock_reservation SET outcome = 'out_of_stock' WHERE idempotency_key = ?")
					.param(idempotencyKey)
					.update();
			}
		}
		return "reserved".equals(this.jdbc.sql("SELECT outcome FROM sample_stock_reservation WHERE idempotency_key = ?")
			.param(idempotencyKey)
			.query(String.class)
			.single());
	}

}
