package io.ductor.sample.modulith.order;

import java.util.UUID;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Completes orders: the order's row and its event, in one transaction. */
@Service
public class Orders {

	private final JdbcClient jdbc;

	private final ApplicationEventPublisher events;

	Orders(JdbcClient jdbc, ApplicationEventPublisher events) {
		this.jdbc = jdbc;
		this.events = events;
	}

	/**
	 * Completes an order of {@code quantity} items of {@code sku}.
	 * @param sku the product
	 * @param quantity how many
	 * @return the order's id
	 */
	// tag::publish[]
	@Transactional
	public String complete(String sku, int quantity) {
		String orderId = UUID.randomUUID().toString();
		this.jdbc.sql("INSERT INTO sample_order (id, sku, quantity) VALUES (?, ?, ?)")
			.params(orderId, sku, quantity)
			.update();
		// one Ductor intent per listener (and one relay message), recorded in this
		// transaction
		this.events.publishEvent(new OrderCompleted(orderId, sku, quantity));
		return orderId;
	}
	// end::publish[]

}
