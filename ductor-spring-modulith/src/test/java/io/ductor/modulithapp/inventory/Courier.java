package io.ductor.modulithapp.inventory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.modulith.events.ApplicationModuleListener;

import io.ductor.modulithapp.order.OrderDispatched;

/**
 * A courier, of which the application has two beans ({@link Couriers}): each takes every
 * dispatched order once. Calls are counted per courier name, in one book shared by all
 * couriers.
 */
public class Courier {

	private static final Map<String, List<String>> CALLS = new ConcurrentHashMap<>();

	private final String name;

	Courier(String name) {
		this.name = name;
	}

	@ApplicationModuleListener
	public void on(OrderDispatched event) {
		CALLS.computeIfAbsent(event.id(), (id) -> new CopyOnWriteArrayList<>()).add(this.name);
	}

	/**
	 * @param orderId an order
	 * @return the names of the couriers called for it, one per call
	 */
	public static List<String> calls(String orderId) {
		return CALLS.getOrDefault(orderId, List.of());
	}

}
