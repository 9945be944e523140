package io.ductor.sample.order;

import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.server.ResponseStatusException;

import io.ductor.kafka.DurableKafka;
import io.ductor.run.TickService;
import io.ductor.sample.order.OrderState.Stage;
import io.ductor.sample.payment.Charge;
import io.ductor.sample.stock.StockRoom;

/**
 * An order's life as a Ductor run (type {@value #RUN_TYPE}, id = order id). Every step is
 * a tick: it changes the run's state exactly once per stamp and schedules the next
 * durable effect in the same transaction.
 *
 * <pre>
 * place            PLACED          schedules stock.reserve, and publishes OrderPlaced on Kafka
 * stock:&lt;key&gt;      STOCK_RESERVED  schedules payment.charge   (or OUT_OF_STOCK: the run fails)
 * payment:&lt;key&gt;    PAID            schedules receipt.send, completes the run
 *                  (or SHIPPING_FAILED: the shelf is empty at shipping, the run fails, and Ductor
 *                  records payment.refund, then stock.release, the compensations the charge and
 *                  the reservation declared)
 * </pre>
 *
 * The answers of the stock room and the gateway are folded back by ticks stamped with the
 * attempt's idempotency key: an answer delivered twice (a retried effect, a redelivery
 * after a crash) finds its stamp applied and changes nothing.
 */
@Service
public class OrderFlow {

	/** The run type of orders. */
	public static final String RUN_TYPE = "order";

	private final TickService ticks;

	private final OrderEffects effects;

	private final JdbcClient jdbc;

	private final StockRoom stock;

	private final DurableKafka kafka;

	OrderFlow(TickService ticks, OrderEffects effects, DataSource dataSource, StockRoom stock, DurableKafka kafka) {
		this.ticks = ticks;
		this.effects = effects;
		this.jdbc = JdbcClient.create(dataSource);
		this.stock = stock;
		this.kafka = kafka;
	}

	/**
	 * Place an order: its row, its run, its first tick and its {@link OrderPlaced} event
	 * commit together, or none of them do. Ductor's relay sends the event to Kafka after
	 * the commit, keyed by the order id.
	 * @param idempotencyKey the key the client sent (kept for display)
	 * @param request what is ordered
	 * @return the new order's id, which is also its run id
	 */
	@Transactional
	public String place(String idempotencyKey, PlaceOrderRequest request) {
		validate(request);
		Long price = this.jdbc.sql("SELECT price_cents FROM sample_product WHERE sku = ?")
			.param(request.sku())
			.query(Long.class)
			.optional()
			.orElseThrow(() -> new ResponseStatusException(HttpStatus.UNPROCESSABLE_CONTENT,
					"Unknown sku '" + request.sku() + "'"));
		String id = UUID.randomUUID().toString();
		long amount = price * request.quantity();
		this.jdbc.sql("""
				INSERT INTO sample_order (id, idempotency_key, customer, sku, quantity, amount_cents)
				VALUES (?, ?, ?, ?, ?, ?)""")
			.params(id, idempotencyKey, request.customer(), request.sku(), request.quantity(), amount)
			.update();
		this.ticks.start(RUN_TYPE, id,
				OrderState.placed(request.customer(), request.sku(), request.quantity(), amount));
		this.ticks.tick(id, "place", request, OrderState.class, (state, tick) -> {
			this.effects.reserveStock(id, state.sku(), state.quantity());
			return state;
		});
		this.kafka.send(OrderPlaced.TOPIC, id,
				new OrderPlaced(id, request.customer(), request.sku(), request.quantity(), amount));
		return id;
	}

	/**
	 * Fold the stock room's answer into the order, once per attempt key.
	 * @param orderId the order
	 * @param attemptKey the idempotency key of the stock reservation
	 * @param reserved whether the stock was reserved
	 */
	void stockAnswered(String orderId, String attemptKey, boolean reserved) {
		this.ticks.tick(orderId, "stock:" + attemptKey, Map.of("reserved", reserved), OrderState.class,
				(state, tick) -> {
					if (!reserved) {
						tick.fail("out of stock: " + state.quantity() + " x " + state.sku());
						return state.with(Stage.OUT_OF_STOCK);
					}
					this.effects.charge(orderId, state.amountCents());
					return state.with(Stage.STOCK_RESERVED);
				});
	}

	/**
	 * Fold the gateway's answer into the order, once per attempt key.
	 * @param orderId the order
	 * @param attemptKey the idempotency key the gateway charged
	 * @param charge the gateway's answer
	 */
	void paymentAnswered(String orderId, String attemptKey, Charge charge) {
		boolean onTheShelf = this.stock.onTheShelf();
		// tag::reconcile-fail-the-run[]
		this.ticks.tick(orderId, "payment:" + attemptKey, charge, OrderState.class, (state, tick) -> {
			if (!onTheShelf) {
				// Ductor records the undo of the charge and of the reservation in this
				// tick's transaction
				tick.fail("out of stock at shipping: " + state.quantity() + " x " + state.sku()
						+ "; the charge is refunded and the stock released");
				return state.paid(charge.id()).with(Stage.SHIPPING_FAILED);
			}
			this.effects.sendReceipt(orderId, state.customer(),
					"Thank you, " + state.customer() + "! Order " + orderId + ": " + state.quantity() + " x "
							+ state.sku() + ", charged " + Money.format(state.amountCents()) + " (" + charge.id()
							+ ").");
			tick.complete();
			return state.paid(charge.id());
		});
		// end::reconcile-fail-the-run[]
	}

	private static void validate(PlaceOrderRequest request) {
		if (request.customer() == null || request.customer().isBlank() || request.customer().length() > 100) {
			throw badRequest("customer must be 1 to 100 characters");
		}
		if (request.sku() == null || request.sku().isBlank()) {
			throw badRequest("sku is required");
		}
		if (request.quantity() == null || request.quantity() < 1 || request.quantity() > 100) {
			throw badRequest("quantity must be between 1 and 100");
		}
	}

	private static ResponseStatusException badRequest(String reason) {
		return new ResponseStatusException(HttpStatus.BAD_REQUEST, reason);
	}

}
