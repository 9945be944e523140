package io.ductor.sample.order;

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
 * The order's durable effects. Called from a tick, each method only records an intent in the
 * tick's transaction; Ductor's drainer runs the body after the commit, at least once, with the
 * same idempotency key on every attempt.
 */
@Component
public class OrderEffects {

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

	/**
	 * Reserve stock. The stock room lives in the shop's database, so the reservation and the tick
	 * folding its outcome into the order commit in one transaction.
	 * @param orderId the order
	 * @param sku the product
	 * @param quantity how many
	 */
	@DurableEffect(name = "stock.reserve", key = "'reserve:' + #orderId")
	public void reserveStock(String orderId, String sku, int quantity) {
		String key = EffectContext.current().idempotencyKey();
		this.transactions.executeWithoutResult((status) -> this.flow.getObject()
			.stockAnswered(orderId, key, this.stock.reserve(key, orderId, sku, quantity)));
	}

	/**
	 * Charge the order at the payment gateway, forwarding the intent's idempotency key, then fold
	 * the answer into the order. A failed attempt (the gateway was down, or its answer was lost) is
	 * retried with the same key, and the gateway answers the charge it already made.
	 * @param orderId the order
	 * @param amountCents the amount
	 */
	@DurableEffect(name = "payment.charge", key = "'charge:' + #orderId", maxAttempts = 20)
	public void charge(String orderId, long amountCents) {
		String key = EffectContext.current().idempotencyKey();
		Charge charge = this.gateway.charge(key, orderId, amountCents);
		this.flow.getObject().paymentAnswered(orderId, key, charge);
	}

	/**
	 * Mail the receipt. The mail server cannot deduplicate, so an attempt whose outcome is unknown
	 * is never retried blindly: {@link io.ductor.sample.mail.ReceiptReconciler} asks the server's
	 * sent log first, and when even that cannot tell, the intent waits in {@code needs_decision}.
	 * @param orderId the order
	 * @param recipient the customer
	 * @param text the receipt
	 */
	@DurableEffect(name = "receipt.send", key = "'receipt:' + #orderId", receiver = Receiver.NOT_IDEMPOTENT)
	public void sendReceipt(String orderId, String recipient, String text) {
		this.mail.send(EffectContext.current().idempotencyKey(), orderId, recipient, text);
	}

}
