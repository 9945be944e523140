package io.ductor.modulithmachine.desk;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Takes orders: a row and an event, in one transaction. */
@Service
public class Desk {

	private final JdbcClient jdbc;

	private final ApplicationEventPublisher events;

	Desk(JdbcClient jdbc, ApplicationEventPublisher events) {
		this.jdbc = jdbc;
		this.events = events;
	}

	@Transactional
	public void take(String id) {
		this.jdbc.sql("INSERT INTO desk_order (id) VALUES (?)").param(id).update();
		this.events.publishEvent(new Taken(id));
	}

	@Transactional
	public void takeThenFail(String id) {
		take(id);
		throw new IllegalStateException("the order is rolled back");
	}

}
