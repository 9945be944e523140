package io.ductor.sample.order;

/**
 * The state of an order's run, stored as JSON in {@code eec_run.state}.
 *
 * @param customer who ordered
 * @param sku what
 * @param quantity how many
 * @param amountCents the price, in cents
 * @param stage how far the order got
 * @param chargeId the gateway's charge, once paid
 */
public record OrderState(String customer, String sku, int quantity, long amountCents, Stage stage, String chargeId) {

	/** How far an order got. */
	public enum Stage {

		/** Placed; the stock room was asked to reserve it. */
		PLACED,

		/** Stock reserved; the gateway was asked to charge it. */
		STOCK_RESERVED,

		/** Out of stock: the run failed and nothing was charged. */
		OUT_OF_STOCK,

		/** Charged; the receipt was handed to the mailer and the run completed. */
		PAID,

		/**
		 * Charged, but the shelf was empty at shipping: the run failed, and its
		 * compensations refund the charge and release the stock, in that order.
		 */
		SHIPPING_FAILED

	}

	static OrderState placed(String customer, String sku, int quantity, long amountCents) {
		return new OrderState(customer, sku, quantity, amountCents, Stage.PLACED, null);
	}

	OrderState with(Stage stage) {
		return new OrderState(this.customer, this.sku, this.quantity, this.amountCents, stage, this.chargeId);
	}

	OrderState paid(String chargeId) {
		return new OrderState(this.customer, this.sku, this.quantity, this.amountCents, Stage.PAID, chargeId);
	}

}
