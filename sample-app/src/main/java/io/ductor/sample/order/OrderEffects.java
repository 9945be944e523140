package io.ductor.sample.order;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.effect.Receiver;
import io.ductor.sample.mail.MailServer;
import io.ductor.sample.payment.Charge;
import io.ductor.sample.payment.PaymentGateway;
import io.ductor.sample.stock.StockRoom;

/**
 * The order's durable effects. Called from a tick, each method only records an intent in
 * the tick's transaction; Ductor's drainer runs the body after the commit, at least once,
 * with the same idempotency key on every attempt.
 */
@Component
public class OrderEffects {

	private static final Logger logger = LoggerFactory.getLogger(OrderEffects.class);

	private final ObjectProvider<OrderFlow> flow;

	private final StockRoom stock;

	private final PaymentGateway gateway;

	private final MailServer mail;

	private final TransactionTemplate transactions;

	OrderEffects(ObjectProvider<OrderFlow> flow, StockRoom stock, PaymentGateway gateway, MailServer mail,
			PlatformTransactionManager transactionManager) {
		this.flow = flow;
		this.stock = stock;
		this.gateway = gateway;
		this.mail = mail;
		this.transactions = new TransactionTemplate(transactionManager);
	}

	// tag::reconcile-compensations[]
	/**
	 * Reserve stock. The stock room lives in the shop's database, so the reservation and
	 * the tick folding its outcome into the order commit in one transaction.
	 * @param orderId the order
	 * @param sku the product
	 * @param quantity how many
	 */
	@DurableEffect(name = "stock.reserve", key = "'reserve:' + #orderId", compensation = "stock.release")
	public void reserveStock(String orderId, String sku, int quantity) {
		String key = EffectContext.current().idempotencyKey();
		logger.info("Reserving {} x {} for order {}", quantity, sku, orderId);
		this.transactions.executeWithoutResult((status) -> this.flow.getObject()
			.stockAnswered(orderId, key, this.stock.reserve(key, orderId, sku, quantity)));
	}

	/**
	 * Give the reserved stock back: the compensation of {@code stock.reserve}, recorded
	 * by Ductor with the same arguments when the order's run fails after the reservation
	 * may have been made. Its key is {@code compensate:reserve:<orderId>}; the stock room
	 * applies it at most once.
	 * @param orderId the order
	 * @param sku the product
	 * @param quantity how many were reserved
	 */
	@DurableEffect(name = "stock.release")
	public void releaseStock(String orderId, String sku, int quantity) {
		this.stock.release(EffectContext.current().idempotencyKey(), "reserve:" + orderId, orderId);
	}

	/**
	 * Charge the order at the payment gateway, forwarding the intent's idempotency key,
	 * then fold the answer into the order. A failed attempt (the gateway was down, or its
	 * answer was lost) is retried with the same key, and the gateway answers the charge
	 * it already made.
	 * @param orderId the order
	 * @param amountCents the amount
	 */
	@DurableEffect(name = "payment.charge", key = "'charge:' + #orderId", maxAttempts = 20,
			compensation = "payment.refund")
	public void charge(String orderId, long amountCents) {
		String key = EffectContext.current().idempotencyKey();
		logger.info("Charging order {}", orderId);
		Charge charge = this.gateway.charge(key, orderId, amountCents);
		this.flow.getObject().paymentAnswered(orderId, key, charge);
	}

	/**
	 * Refund the charge: the compensation of {@code payment.charge}, recorded by Ductor
	 * when the order's run fails after the charge may have been made. Its key,
	 * {@code compensate:charge:<orderId>}, goes to the gateway, which refunds at most
	 * once per key (and refunds nothing for a charge it never made).
	 * @param orderId the order
	 * @param amountCents the amount charged
	 */
	@DurableEffect(name = "payment.refund", maxAttempts = 20)
	public void refund(String orderId, long amountCents) {
		this.gateway.refund(EffectContext.current().idempotencyKey(), "charge:" + orderId, orderId);
	}
	// end::reconcile-compensations[]

	/**
	 * Mail the receipt. The mail server cannot deduplicate, so an attempt whose outcome
	 * is unknown is never retried blindly:
	 * {@link io.ductor.sample.mail.ReceiptReconciler} asks the server's sent log first,
	 * and when even that cannot tell, the intent waits in {@code needs_decision}.
	 * @param orderId the order
	 * @param recipient the customer
	 * @param text the receipt
	 */
	@DurableEffect(name = "receipt.send", key = "'receipt:' + #orderId", receiver = Receiver.NOT_IDEMPOTENT)
	public void sendReceipt(String orderId, String recipient, String text) {
		logger.info("Mailing the receipt of order {}", orderId);
		this.mail.send(EffectContext.current().idempotencyKey(), orderId, recipient, text);
	}

}
