package io.ductor.sample.order;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import javax.sql.DataSource;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import io.ductor.effect.EffectOperations;
import io.ductor.run.Run;
import io.ductor.run.RunTransition;
import io.ductor.run.TickService;
import io.ductor.sample.effect.EffectView;

/**
 * Reads orders for display: the shop's own rows, the run through {@link TickService}, the
 * effects through {@link EffectOperations#findByRun(String)}.
 */
@Component
class OrderViews {

	private final JdbcClient jdbc;

	private final TickService ticks;

	private final EffectOperations operations;

	private final JsonMapper json;

	OrderViews(DataSource dataSource, TickService ticks, EffectOperations operations, JsonMapper json) {
		this.jdbc = JdbcClient.create(dataSource);
		this.ticks = ticks;
		this.operations = operations;
		this.json = json;
	}

	Optional<OrderView> find(String id) {
		return this.jdbc.sql("""
				SELECT id, idempotency_key, customer, sku, quantity, amount_cents, created_at
				FROM sample_order WHERE id = ?""").param(id).query(this::order).optional().map(this::complete);
	}

	List<OrderView> latest(int limit) {
		return this.jdbc.sql("""
				SELECT id, idempotency_key, customer, sku, quantity, amount_cents, created_at
				FROM sample_order ORDER BY created_at DESC, id LIMIT ?""")
			.param(limit)
			.query(this::order)
			.list()
			.stream()
			.map(this::complete)
			.toList();
	}

	private OrderView order(java.sql.ResultSet rs, int row) throws java.sql.SQLException {
		return new OrderView(rs.getString("id"), rs.getString("idempotency_key"), rs.getString("customer"),
				rs.getString("sku"), rs.getInt("quantity"), rs.getLong("amount_cents"),
				rs.getObject("created_at", OffsetDateTime.class), null, null, null, 0, List.of(), List.of(), null, 0,
				null, 0, 0);
	}

	private OrderView complete(OrderView order) {
		Run<OrderState> run = this.ticks.find(order.id(), OrderState.class).orElseThrow();
		List<OrderView.Transition> transitions = this.ticks.transitions(order.id())
			.stream()
			.map(this::transition)
			.toList();
		List<EffectView> effects = this.operations.findByRun(order.id()).stream().map(EffectView::of).toList();
		List<String> requests = this.jdbc.sql("""
				SELECT outcome || CASE WHEN answer_lost THEN ' (answer lost)' ELSE '' END
				FROM sample_payment_request WHERE order_id = ? ORDER BY id""")
			.param(order.id())
			.query(String.class)
			.list();
		int charges = this.jdbc.sql("SELECT count(*) FROM sample_payment WHERE order_id = ?")
			.param(order.id())
			.query(Integer.class)
			.single();
		int receipts = this.jdbc.sql("SELECT count(*) FROM sample_receipt WHERE order_id = ?")
			.param(order.id())
			.query(Integer.class)
			.single();
		long refunded = this.jdbc.sql("SELECT COALESCE(sum(amount_cents), 0) FROM sample_refund WHERE order_id = ?")
			.param(order.id())
			.query(Long.class)
			.single();
		int released = this.jdbc.sql("SELECT COALESCE(sum(quantity), 0) FROM sample_stock_release WHERE order_id = ?")
			.param(order.id())
			.query(Integer.class)
			.single();
		return new OrderView(order.id(), order.idempotencyKey(), order.customer(), order.sku(), order.quantity(),
				order.amountCents(), order.createdAt(), run.status().name().toLowerCase(Locale.ROOT),
				run.state().stage().name(), run.failureReason(), run.recordVersion(), transitions, effects,
				new OrderView.Gateway(charges, requests), receipts, run.compensation().name().toLowerCase(Locale.ROOT),
				refunded, released);
	}

	private OrderView.Transition transition(RunTransition transition) {
		JsonNode input = (transition.inputJson() != null) ? this.json.readTree(transition.inputJson()) : null;
		return new OrderView.Transition(transition.seq(), transition.stamp(), input,
				transition.runStatus().name().toLowerCase(Locale.ROOT), transition.createdAt());
	}

}
