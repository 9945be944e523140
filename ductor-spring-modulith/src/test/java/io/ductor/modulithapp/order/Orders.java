package io.ductor.modulithapp.order;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Places orders: a row and an event, in one transaction. */
@Service
public class Orders {

	private final JdbcClient jdbc;

	private final ApplicationEventPublisher events;

	Orders(JdbcClient jdbc, ApplicationEventPublisher events) {
		this.jdbc = jdbc;
		this.events = events;
	}

	@Transactional
	public void place(String id) {
		this.jdbc.sql("INSERT INTO orders (id) VALUES (?)").param(id).update();
		this.events.publishEvent(new OrderPlaced(id));
	}

	@Transactional
	public void ship(String id) {
		this.events.publishEvent(new OrderShipped(id));
	}

	@Transactional
	public void dispatch(String id) {
		this.events.publishEvent(new OrderDispatched(id));
	}

	@Transactional
	public void pay(String id, long cents) {
		this.events.publishEvent(new OrderPaid(id, new OrderPaid.Cents(cents)));
	}

	@Transactional
	public void placeThenFail(String id) {
		place(id);
		throw new IllegalStateException("the order is rolled back");
	}

}
