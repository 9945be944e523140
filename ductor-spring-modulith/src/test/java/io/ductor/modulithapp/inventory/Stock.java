package io.ductor.modulithapp.inventory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Component;

import io.ductor.effect.EffectContext;
import io.ductor.modulithapp.order.OrderPlaced;

/**
 * Reserves stock for a placed order, keyed by the publication's stable key. Orders named
 * {@code flaky-*} fail their first two calls; {@code poison-*} fail until their order is
 * cured.
 */
@Component
public class Stock {

	private final JdbcClient jdbc;

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	private final java.util.Set<String> cured = ConcurrentHashMap.newKeySet();

	private final Map<String, java.util.concurrent.CountDownLatch> held = new ConcurrentHashMap<>();

	Stock(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	@ApplicationModuleListener
	public void on(OrderPlaced event) throws InterruptedException {
		int call = this.calls.computeIfAbsent(event.id(), (id) -> new AtomicInteger()).incrementAndGet();
		// not a wait: a listener that takes a little time, as real work does
		Thread.sleep(20);
		if (event.id().startsWith("slow")) {
			// held until released, so that a test can act while this call runs
			hold(event.id()).await(60, java.util.concurrent.TimeUnit.SECONDS);
		}
		if (event.id().startsWith("flaky") && call <= 2) {
			throw new IllegalStateException("the warehouse is busy (call " + call + ")");
		}
		if (event.id().startsWith("poison") && !this.cured.contains(event.id())) {
			throw new IllegalStateException("no such product");
		}
		String key = EffectContext.find().map(EffectContext::idempotencyKey).orElse("not-run-by-ductor");
		this.jdbc.sql("INSERT INTO stock_reservation (order_id, publication_key) VALUES (?, ?)")
			.params(event.id(), key)
			.update();
	}

	public int calls(String orderId) {
		AtomicInteger count = this.calls.get(orderId);
		return (count != null) ? count.get() : 0;
	}

	public void release(String orderId) {
		hold(orderId).countDown();
	}

	private java.util.concurrent.CountDownLatch hold(String orderId) {
		return this.held.computeIfAbsent(orderId, (id) -> new java.util.concurrent.CountDownLatch(1));
	}

	public void cure(String orderId) {
		this.cured.add(orderId);
	}

}
