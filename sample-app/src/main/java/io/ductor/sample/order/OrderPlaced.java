package io.ductor.sample.order;

/**
 * The event the shop publishes on {@value #TOPIC} when an order is placed, keyed by the
 * order id.
 *
 * @param orderId the order
 * @param customer who ordered
 * @param sku what
 * @param quantity how many
 * @param amountCents the price, in cents
 */
public record OrderPlaced(String orderId, String customer, String sku, int quantity, long amountCents) {

	/** The topic of the event. */
	public static final String TOPIC = "shop.orders.placed";

}
