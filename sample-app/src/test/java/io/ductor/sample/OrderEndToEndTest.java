package io.ductor.sample;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import tools.jackson.databind.JsonNode;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.sample.fault.Fault;
import io.ductor.sample.mail.MailServer;
import io.ductor.sample.payment.PaymentGateway;
import io.ductor.sample.stock.StockRoom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The shop end to end, through real HTTP on a real PostgreSQL: orders complete, replays
 * place nothing, gateway failures charge once, and an uncertain receipt waits for a
 * decision.
 */
class OrderEndToEndTest extends ShopTestSupport {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	PaymentGateway gateway;

	MailServer mail;

	ShopClient shop;

	JdbcClient jdbc;

	@BeforeEach
	void setUp() {
		this.shop = new ShopClient(port());
		this.jdbc = jdbc();
		this.gateway = bean(PaymentGateway.class);
		this.mail = bean(MailServer.class);
		this.gateway.faults().clear();
		this.mail.faults().clear();
		bean(StockRoom.class).shippingFaults().clear();
	}

	@Test
	void placedOrderCompletesWithOneChargeOneReceiptAndEveryEffectCompleted() {
		HttpResponse<String> response = this.shop.placeOrder(newKey(), ShopClient.order("alice", "book-1", 2));

		assertThat(response.statusCode()).isEqualTo(201);
		String id = ShopClient.json(response).get("id").asString();
		assertThat(response.headers().firstValue("Location")).hasValue("/orders/" + id);
		awaitRunStatus(id, "completed");

		JsonNode order = this.shop.order(id);
		assertThat(order.get("status").asString()).isEqualTo("completed");
		assertThat(order.get("stage").asString()).isEqualTo("PAID");
		assertThat(order.get("transitions").findValuesAsString("stamp")).containsExactly("place", "stock:reserve:" + id,
				"payment:charge:" + id);
		assertThat(order.get("effects").findValuesAsString("name")).containsExactly("stock.reserve", "payment.charge",
				"receipt.send");
		awaitEffectsSettled(id);
		assertThat(effectStatuses(id)).containsOnly("completed").hasSize(3);
		assertThat(count("SELECT count(*) FROM sample_payment WHERE order_id = ? AND amount_cents = 9000", id)).isOne();
		assertThat(
				count("SELECT count(*) FROM sample_stock_reservation WHERE order_id = ? AND outcome = 'reserved'", id))
			.isOne();
		assertThat(count("SELECT count(*) FROM sample_receipt WHERE order_id = ?", id)).isOne();
	}

	@Test
	void everyEffectOfAnOrderCarriesTheTraceOfTheRequestThatPlacedIt() {
		String traceId = UUID.randomUUID().toString().replace("-", "");
		HttpResponse<String> response = this.shop.placeOrder(newKey(), ShopClient.order("carol", "book-1", 1),
				"00-" + traceId + "-00f067aa0ba902b7-01");
		assertThat(response.statusCode()).isEqualTo(201);
		String id = ShopClient.json(response).get("id").asString();
		awaitRunStatus(id, "completed");
		awaitEffectsSettled(id);
		// recorded by three ticks: the request's, then two that ran inside effects on
		// drainer threads
		assertThat(this.jdbc
			.sql("SELECT trace_context->>'traceparent' FROM eec_effect_intent WHERE run_id = ? ORDER BY id")
			.param(id)
			.query(String.class)
			.list()).hasSize(3).allSatisfy((traceparent) -> assertThat(traceparent).startsWith("00-" + traceId + "-"));
	}

	@Test
	void sameRequestReplayedReturnsTheSameOrderAndPlacesNothing() {
		String key = newKey();
		String body = ShopClient.order("bob", "mug-1", 1);

		HttpResponse<String> first = this.shop.placeOrder(key, body);
		HttpResponse<String> replay = this.shop.placeOrder(key, body);

		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		String id = ShopClient.json(first).get("id").asString();
		assertThat(ShopClient.json(replay).get("id").asString()).isEqualTo(id);
		assertThat(count("SELECT count(*) FROM sample_order WHERE idempotency_key = ?", key)).isOne();
		assertThat(count("SELECT count(*) FROM eec_run WHERE id = ?", id)).isOne();

		HttpResponse<String> reused = this.shop.placeOrder(key, ShopClient.order("bob", "mug-1", 3));
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(this.shop.placeOrder(null, body).statusCode()).isEqualTo(400);
		assertThat(count("SELECT count(*) FROM sample_order WHERE customer = 'bob'")).isOne();
		awaitRunStatus(id, "completed");
		awaitEffectsSettled(id);
		assertThat(count("SELECT count(*) FROM sample_payment WHERE order_id = ?", id)).isOne();
	}

	@Test
	void concurrentCopiesOfOneRequestPlaceOneOrderAndAllGetItsAnswer() throws Exception {
		String key = newKey();
		String body = ShopClient.order("judy", "book-1", 1);
		List<Future<HttpResponse<String>>> copies = new ArrayList<>();
		ExecutorService clients = Executors.newFixedThreadPool(6);
		try {
			for (int i = 0; i < 6; i++) {
				copies.add(clients.submit(() -> this.shop.placeOrder(key, body)));
			}
			Set<String> ids = new HashSet<>();
			for (Future<HttpResponse<String>> copy : copies) {
				HttpResponse<String> response = copy.get(30, TimeUnit.SECONDS);
				assertThat(response.statusCode()).isEqualTo(201);
				ids.add(ShopClient.json(response).get("id").asString());
			}
			assertThat(ids).hasSize(1);
			assertThat(count("SELECT count(*) FROM sample_order WHERE idempotency_key = ?", key)).isOne();
			String id = ids.iterator().next();
			awaitRunStatus(id, "completed");
			awaitEffectsSettled(id);
			assertThat(count("SELECT count(*) FROM sample_payment WHERE order_id = ?", id)).isOne();
		}
		finally {
			clients.shutdownNow();
		}
	}

	@Test
	void gatewayFailuresAreRetriedWithTheSameKeyAndChargeOnce() {
		this.gateway.faults().inject(Fault.BEFORE_APPLY);
		this.gateway.faults().inject(Fault.AFTER_APPLY);

		String id = place(ShopClient.order("carol", "book-2", 1));
		awaitRunStatus(id, "completed");

		List<Map<String, Object>> requests = this.jdbc.sql(
				"SELECT idempotency_key, outcome, answer_lost FROM sample_payment_request WHERE order_id = ? ORDER BY id")
			.param(id)
			.query()
			.listOfRows();
		assertThat(requests).extracting((row) -> row.get("outcome"))
			.containsExactly("unavailable", "charged", "replayed");
		assertThat(requests).extracting((row) -> row.get("answer_lost")).containsExactly(false, true, false);
		assertThat(requests).extracting((row) -> row.get("idempotency_key")).containsOnly("charge:" + id);
		assertThat(count("SELECT count(*) FROM sample_payment WHERE order_id = ?", id)).isOne();
		assertThat(count("SELECT attempts FROM eec_effect_intent WHERE idempotency_key = ?", "charge:" + id))
			.isEqualTo(3);
		JsonNode order = this.shop.order(id);
		assertThat(order.get("gateway").get("charges").asInt()).isOne();
		assertThat(order.get("transitions").get(2).get("input").get("replayed").asBoolean()).isTrue();
		awaitEffectsSettled(id);
	}

	@Test
	void receiptWithALostConfirmationIsFoundInTheSentLogAndCompletedWithoutBeingResent() {
		this.mail.faults().inject(Fault.AFTER_APPLY);

		String id = place(ShopClient.order("dave", "book-1", 1));
		awaitRunStatus(id, "completed");
		await().atMost(PATIENCE).until(() -> "completed".equals(effectStatus("receipt:" + id)));
		assertThat(count("SELECT count(*) FROM sample_receipt WHERE order_id = ?", id)).isOne();
		assertThat(count("SELECT attempts FROM eec_effect_intent WHERE idempotency_key = ?", "receipt:" + id)).isOne();
		assertThat(count(
				"SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ? AND reconcile_outcome = 'APPLIED'",
				"receipt:" + id))
			.isOne();
	}

	@Test
	void receiptWithALostConfirmationAndAnUnreadableSentLogWaitsForADecisionAndIsNeverResentAutomatically() {
		this.mail.faults().inject(Fault.AFTER_APPLY_LOG_DOWN);

		String id = place(ShopClient.order("dave", "book-1", 1));
		awaitRunStatus(id, "completed");
		await().atMost(PATIENCE).until(() -> "needs_decision".equals(effectStatus("receipt:" + id)));
		assertThat(count("SELECT count(*) FROM sample_receipt WHERE order_id = ?", id)).isOne();

		long intentId = count("SELECT id FROM eec_effect_intent WHERE idempotency_key = ?", "receipt:" + id);
		HttpResponse<String> resolved = this.shop.post("/effects/" + intentId + "/resolution",
				"{\"resolution\": \"MARK_DONE\"}");
		assertThat(resolved.statusCode()).isEqualTo(200);
		assertThat(ShopClient.json(resolved).get("status").asString()).isEqualTo("completed");
		assertThat(effectStatus("receipt:" + id)).isEqualTo("completed");
		assertThat(count("SELECT count(*) FROM sample_receipt WHERE order_id = ?", id)).isOne();
		assertThat(this.shop.post("/effects/" + intentId + "/resolution", "{\"resolution\": \"RETRY\"}").statusCode())
			.isEqualTo(409);
	}

	@Test
	void refusedReceiptIsRetriedAutomaticallyAndSentOnce() {
		this.mail.faults().inject(Fault.BEFORE_APPLY);

		String id = place(ShopClient.order("erin", "mug-1", 2));
		awaitRunStatus(id, "completed");
		await().atMost(PATIENCE).until(() -> "completed".equals(effectStatus("receipt:" + id)));
		assertThat(count("SELECT attempts FROM eec_effect_intent WHERE idempotency_key = ?", "receipt:" + id))
			.isEqualTo(2);
		assertThat(count("SELECT count(*) FROM sample_receipt WHERE order_id = ?", id)).isOne();
	}

	@Test
	void orderBeyondTheStockFailsItsRunAndChargesNothing() {
		String id = place(ShopClient.order("frank", "poster-1", 4));
		awaitRunStatus(id, "failed");

		JsonNode order = this.shop.order(id);
		assertThat(order.get("stage").asString()).isEqualTo("OUT_OF_STOCK");
		assertThat(order.get("failureReason").asString()).contains("out of stock");
		assertThat(count("SELECT count(*) FROM sample_payment_request WHERE order_id = ?", id)).isZero();
		// the reservation ran, so its compensation runs too; it finds nothing reserved
		// and gives nothing back
		await().atMost(PATIENCE).until(() -> "completed".equals(effectStatus("compensate:reserve:" + id)));
		assertThat(effectStatuses(id)).containsExactly("completed", "completed");
		assertThat(count("SELECT quantity FROM sample_stock_release WHERE order_id = ?", id)).isZero();
		assertThat(count("SELECT available FROM sample_product WHERE sku = 'poster-1'")).isEqualTo(3);
	}

	@Test
	void orderThatFailsAtShippingAfterTheChargeIsRefundedAndItsStockReleasedThroughCompensations() {
		long before = count("SELECT available FROM sample_product WHERE sku = 'book-2'");
		bean(StockRoom.class).shippingFaults().inject(Fault.BEFORE_APPLY);

		String id = place(ShopClient.order("hank", "book-2", 3));
		awaitRunStatus(id, "failed");
		await().atMost(PATIENCE).until(() -> "compensated".equals(this.shop.order(id).get("compensation").asString()));

		JsonNode order = this.shop.order(id);
		assertThat(order.get("stage").asString()).isEqualTo("SHIPPING_FAILED");
		assertThat(order.get("failureReason").asString()).contains("out of stock at shipping");
		// the refund first (the charge's tick came last), then the release, each keyed by
		// what it undoes
		assertThat(order.get("effects").findValuesAsString("idempotencyKey")).containsExactly("reserve:" + id,
				"charge:" + id, "compensate:charge:" + id, "compensate:reserve:" + id);
		assertThat(order.get("effects").findValuesAsString("name")).containsExactly("stock.reserve", "payment.charge",
				"payment.refund", "stock.release");
		assertThat(effectStatuses(id)).containsOnly("completed");
		assertThat(order.get("refundedCents").asLong()).isEqualTo(3 * 3900);
		assertThat(order.get("itemsReleased").asInt()).isEqualTo(3);
		assertThat(count("SELECT count(*) FROM sample_payment WHERE order_id = ?", id)).isOne();
		assertThat(count("SELECT count(*) FROM sample_refund WHERE order_id = ?", id)).isOne();
		assertThat(count("SELECT count(*) FROM sample_receipt WHERE order_id = ?", id)).isZero();
		assertThat(count("SELECT available FROM sample_product WHERE sku = 'book-2'")).isEqualTo(before);
		assertThat(this.jdbc.sql("""
				SELECT (SELECT created_at FROM sample_stock_release WHERE order_id = ?)
				    >= (SELECT created_at FROM sample_refund WHERE order_id = ?)""")
			.params(id, id)
			.query(Boolean.class)
			.single()).isTrue();
	}

	@Test
	void badOrdersAreRefusedAsProblems() {
		HttpResponse<String> unknown = this.shop.placeOrder(newKey(), ShopClient.order("gina", "no-such-sku", 1));
		HttpResponse<String> zero = this.shop.placeOrder(newKey(), ShopClient.order("gina", "book-1", 0));

		assertThat(unknown.statusCode()).isEqualTo(422);
		assertThat(zero.statusCode()).isEqualTo(400);
		assertThat(zero.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(count("SELECT count(*) FROM sample_order WHERE customer = 'gina'")).isZero();
		assertThat(this.shop.get("/orders/no-such-order").statusCode()).isEqualTo(404);
	}

	/** Places an order with a fresh key and returns its id. */
	private String place(String body) {
		HttpResponse<String> response = this.shop.placeOrder(newKey(), body);
		assertThat(response.statusCode()).isEqualTo(201);
		return ShopClient.json(response).get("id").asString();
	}

	private static String newKey() {
		return "test-" + UUID.randomUUID();
	}

	private void awaitRunStatus(String id, String status) {
		await().atMost(PATIENCE)
			.pollInterval(Duration.ofMillis(100))
			.until(() -> status.equals(
					this.jdbc.sql("SELECT status FROM eec_run WHERE id = ?").param(id).query(String.class).single()));
	}

	/**
	 * Waits until no effect of the order is pending or in flight, so no test leaves work
	 * behind.
	 */
	private void awaitEffectsSettled(String id) {
		await().atMost(PATIENCE)
			.until(() -> effectStatuses(id).stream().noneMatch((s) -> s.equals("pending") || s.equals("in_flight")));
	}

	private List<String> effectStatuses(String id) {
		return this.jdbc.sql("SELECT status FROM eec_effect_intent WHERE run_id = ? ORDER BY id")
			.param(id)
			.query(String.class)
			.list();
	}

	private String effectStatus(String key) {
		return this.jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(String.class)
			.single();
	}

	private long count(String sql, Object... params) {
		return this.jdbc.sql(sql).params(params).query(Long.class).single();
	}

}
