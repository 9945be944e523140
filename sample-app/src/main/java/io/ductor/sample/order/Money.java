package io.ductor.sample.order;

import java.math.BigDecimal;

/** Formats amounts in cents. */
final class Money {

	private Money() {
	}

	static String format(long cents) {
		return "EUR " + BigDecimal.valueOf(cents, 2).toPlainString();
	}

}
