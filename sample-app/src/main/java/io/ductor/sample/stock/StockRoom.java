package io.ductor.sample.stock;

import java.time.Duration;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

import io.ductor.sample.fault.Fault;
import io.ductor.sample.fault.FaultPlan;
import io.ductor.sample.fault.SimulationProperties;

/**
 * The shop's stock room, a receiver living in the shop's own database. It makes
 * deduplication authoritative at its own boundary: the reservation row (keyed by the
 * idempotency key) and the stock it takes commit in one transaction, and a repeated key
 * returns the saved outcome.
 */
@Component
public class StockRoom {

	private final JdbcClient jdbc;

	private final FaultPlan shipping = new FaultPlan(new SimulationProperties.Receiver(0, Duration.ZERO));

	StockRoom(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/**
	 * The warehouse's faults at shipping: any fault queued here ({@code POST /faults}
	 * with target {@code warehouse}) makes the next order found unshippable after it was
	 * charged, because the shelf turned out empty.
	 * @return the shipping faults
	 */
	public FaultPlan shippingFaults() {
		return this.shipping;
	}

	/**
	 * Whether the reserved items are on the shelf when the order ships.
	 * @return {@code false} when a queued fault says the shelf is empty
	 */
	public boolean onTheShelf() {
		return this.shipping.next() == Fault.NONE;
	}

	/**
	 * Reserve stock for an order, at most once per key. Joins the caller's transaction,
	 * so that the caller can commit the answer (a tick folding it into the order's run)
	 * with it.
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
			int taken = this.jdbc
				.sql("UPDATE sample_product SET available = available - ? WHERE sku = ? AND available >= ?")
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

	/**
	 * Give back the stock a reservation took, at most once per key: the release row and
	 * the stock it returns commit in one transaction. Releasing a reservation that took
	 * nothing (out of stock, or never made) returns nothing, and is recorded all the
	 * same.
	 * @param idempotencyKey the release's key
	 * @param reservationKey the key of the reservation to undo
	 * @param orderId the order
	 * @return how many items went back to the shelf
	 */
	@Transactional
	public int release(String idempotencyKey, String reservationKey, String orderId) {
		Integer quantity = this.jdbc.sql("""
				SELECT quantity FROM sample_stock_reservation WHERE idempotency_key = ? AND outcome = 'reserved'""")
			.param(reservationKey)
			.query(Integer.class)
			.optional()
			.orElse(0);
		int inserted = this.jdbc.sql("""
				INSERT INTO sample_stock_release (idempotency_key, reservation_key, order_id, quantity)
				VALUES (?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING""")
			.params(idempotencyKey, reservationKey, orderId, quantity)
			.update();
		if (inserted == 1 && quantity > 0) {
			this.jdbc.sql("""
					UPDATE sample_product SET available = available + ?
					WHERE sku = (SELECT sku FROM sample_stock_reservation WHERE idempotency_key = ?)""")
				.params(quantity, reservationKey)
				.update();
		}
		return this.jdbc.sql("SELECT quantity FROM sample_stock_release WHERE idempotency_key = ?")
			.param(idempotencyKey)
			.query(Integer.class)
			.single();
	}

}
