package io.ductor.run.answer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Component;

/** A payment gateway that charges each idempotency key once. */
@Component
public class PaymentGateway {

	private final Map<String, Charge> charges = new ConcurrentHashMap<>();

	public Charge charge(String key, String orderId, long amountCents) {
		return this.charges.computeIfAbsent(key, (k) -> new Charge("ch-" + orderId + "-" + amountCents));
	}

	public int charges() {
		return this.charges.size();
	}

}
