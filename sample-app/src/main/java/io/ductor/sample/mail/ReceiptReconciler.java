package io.ductor.sample.mail;

import org.springframework.stereotype.Component;

import io.ductor.effect.EffectReconciler;
import io.ductor.effect.ReconcileOutcome;

// tag::reconcile-receipt-reconciler[]
/**
 * Settles a receipt whose confirmation was lost by asking the mail server's sent log, so
 * that "confirmation lost" resolves itself: a receipt that went out is completed without
 * being sent again, one that did not is sent again with the same key. When the log cannot
 * be read, Ductor asks again later, and after
 * {@code ductor.effects.reconciliation.max-rounds} rounds the receipt waits for a person
 * in {@code needs_decision}.
 */
@Component
public class ReceiptReconciler {

	private final MailServer mail;

	ReceiptReconciler(MailServer mail) {
		this.mail = mail;
	}

	/**
	 * @param key the receipt's idempotency key, which is also the message id the mail
	 * server got
	 * @param orderId the order (the effect's first argument)
	 * @param recipient the customer
	 * @param text the receipt
	 * @return whether the mail server sent it
	 */
	@EffectReconciler("receipt.send")
	public ReconcileOutcome receiptSent(String key, String orderId, String recipient, String text) {
		return this.mail.wasSent(key, orderId) ? ReconcileOutcome.APPLIED : ReconcileOutcome.NOT_APPLIED;
	}

}
// end::reconcile-receipt-reconciler[]
