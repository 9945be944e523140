package io.ductor.modulithapp.inventory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Component;

import io.ductor.modulithapp.order.OrderPaid;

/** Books the payment of an order. */
@Component
public class Billing {

	private final Map<String, Long> booked = new ConcurrentHashMap<>();

	@ApplicationModuleListener
	public void on(OrderPaid event) {
		this.booked.put(event.id(), event.amount().cents());
	}

	public Long booked(String orderId) {
		return this.booked.get(orderId);
	}

}
