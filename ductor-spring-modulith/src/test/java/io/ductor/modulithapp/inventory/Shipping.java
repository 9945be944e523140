package io.ductor.modulithapp.inventory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.context.event.EventListener;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.ductor.effect.EffectContext;
import io.ductor.modulithapp.order.OrderShipped;

/**
 * Three listeners of one event: two module listeners (the first fails while the order is
 * named {@code broken-*} and not mended) and a plain {@code @EventListener}, which runs
 * on the publishing thread inside the publishing transaction.
 */
@Component
public class Shipping {

	private final Map<String, List<String>> labelKeys = new ConcurrentHashMap<>();

	private final Map<String, List<String>> noticeKeys = new ConcurrentHashMap<>();

	private final Map<String, List<Boolean>> plainCalls = new ConcurrentHashMap<>();

	private final java.util.Set<String> mended = ConcurrentHashMap.newKeySet();

	@ApplicationModuleListener
	public void printLabel(OrderShipped event) {
		this.labelKeys.computeIfAbsent(event.id(), (id) -> new CopyOnWriteArrayList<>()).add(key());
		if (event.id().startsWith("broken") && !this.mended.contains(event.id())) {
			throw new IllegalStateException("the label printer is jammed");
		}
	}

	@ApplicationModuleListener
	public void notifyCustomer(OrderShipped event) {
		this.noticeKeys.computeIfAbsent(event.id(), (id) -> new CopyOnWriteArrayList<>()).add(key());
	}

	@EventListener
	public void count(OrderShipped event) {
		this.plainCalls.computeIfAbsent(event.id(), (id) -> new CopyOnWriteArrayList<>())
			.add(TransactionSynchronizationManager.isActualTransactionActive());
	}

	public List<String> labelKeys(String id) {
		return this.labelKeys.getOrDefault(id, List.of());
	}

	public List<String> noticeKeys(String id) {
		return this.noticeKeys.getOrDefault(id, List.of());
	}

	public List<Boolean> plainCalls(String id) {
		return this.plainCalls.getOrDefault(id, List.of());
	}

	public void mend(String id) {
		this.mended.add(id);
	}

	private static String key() {
		return EffectContext.find().map(EffectContext::idempotencyKey).orElse("not-run-by-ductor");
	}

}
