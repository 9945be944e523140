package io.ductor.sample;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.ductor.kafka.DurableKafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An order placed twice with one {@code Idempotency-Key} (a client's retry) is one order,
 * and publishes one {@code OrderPlaced}: one relay intent, one line in the feed.
 */
class OrderPlacedOnceTest extends ShopTestSupport {

	@Test
	void anOrderPlacedTwiceWithOneKeyPublishesOnce() {
		ShopClient client = new ShopClient(port());
		String body = ShopClient.order("fay", "mug-1", 2);
		HttpResponse<String> first = client.placeOrder("placed-once-1", body);
		HttpResponse<String> again = client.placeOrder("placed-once-1", body);
		assertThat(first.statusCode()).isBetween(200, 299);
		assertThat(again.statusCode()).isEqualTo(first.statusCode());
		String id = ShopClient.json(first).get("id").asString();
		assertThat(ShopClient.json(again).get("id").asString()).isEqualTo(id);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> jdbc().sql("SELECT count(*) FROM sample_order_feed WHERE order_id = ?")
				.param(id)
				.query(Long.class)
				.single() == 1);
		assertThat(jdbc().sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = ? AND payload::text LIKE ?")
			.params(DurableKafka.EFFECT_NAME, "%" + id + "%")
			.query(Long.class)
			.single()).isOne();
		assertThat(jdbc().sql("SELECT count(*) FROM sample_order WHERE idempotency_key = ?")
			.param("placed-once-1")
			.query(Long.class)
			.single()).isOne();
	}

}
