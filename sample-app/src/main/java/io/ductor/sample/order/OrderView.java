package io.ductor.sample.order;

import java.time.OffsetDateTime;
import java.util.List;

import tools.jackson.databind.JsonNode;

import io.ductor.sample.effect.EffectView;

/**
 * An order as {@code GET /orders/{id}} shows it: the order, its run, the run's
 * transitions, its effects and what the receivers recorded.
 *
 * @param id the order id, also the run id
 * @param idempotencyKey the key the order was placed with
 * @param customer who ordered
 * @param sku what
 * @param quantity how many
 * @param amountCents the price, in cents
 * @param createdAt when it was placed
 * @param status the run's status: {@code active}, {@code completed} or {@code failed}
 * @param stage how far the order got
 * @param failureReason why the run failed, or {@code null}
 * @param recordVersion the run's version
 * @param transitions the run's applied ticks, in order
 * @param effects the effects the run's ticks recorded, oldest first
 * @param gateway what the payment gateway recorded for this order
 * @param receiptsSent how many receipt mails the mail server sent for this order
 * @param compensation how far the undo of a failed order got: {@code none},
 * {@code compensating} (Ductor recorded the refund and the release when the run failed,
 * and they are running, one after the other) or {@code compensated}
 * @param refundedCents what the gateway refunded for this order
 * @param itemsReleased how many reserved items the stock room took back
 */
public record OrderView(String id, String idempotencyKey, String customer, String sku, int quantity, long amountCents,
		OffsetDateTime createdAt, String status, String stage, String failureReason, long recordVersion,
		List<Transition> transitions, List<EffectView> effects, Gateway gateway, int receiptsSent, String compensation,
		long refundedCents, int itemsReleased) {

	/**
	 * One applied tick.
	 *
	 * @param seq its place in the run's history
	 * @param stamp its stamp
	 * @param input what it folded in
	 * @param status the run's status after it
	 * @param at when it committed
	 */
	public record Transition(long seq, String stamp, JsonNode input, String status, OffsetDateTime at) {
	}

	/**
	 * The gateway's records of an order.
	 *
	 * @param charges how many charges it made (never more than one)
	 * @param requests every request it received, oldest first: {@code unavailable},
	 * {@code charged} or {@code replayed}, with {@code (answer lost)} when the answer
	 * never came back
	 */
	public record Gateway(int charges, List<String> requests) {
	}

}
