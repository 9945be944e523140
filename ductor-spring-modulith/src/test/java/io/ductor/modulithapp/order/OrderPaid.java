package io.ductor.modulithapp.order;

/**
 * An order was paid.
 *
 * @param id the order id
 * @param amount how much, as one of the kinds of {@link Amount}
 */
public record OrderPaid(String id, Amount amount) {

	/** An amount of money. */
	public interface Amount {

		long cents();

	}

	/**
	 * An amount in cents.
	 *
	 * @param cents the cents
	 */
	public record Cents(long cents) implements Amount {
	}

}
