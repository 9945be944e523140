package io.ductor.kafka.docs;

import org.apache.kafka.clients.consumer.ConsumerRecord;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import io.ductor.kafka.DurableKafka;
import io.ductor.messaging.IdempotentListener;
import io.ductor.messaging.MissingKeyPolicy;

/** The examples of {@code docs/messaging.md} and the README. */
final class MessagingGuide {

	private MessagingGuide() {
	}

	record OrderPlaced(String orderId, long totalCents) {
	}

	// tag::kafka-publish[]
	@Service
	class Orders {

		private final JdbcClient jdbc;

		private final DurableKafka kafka;

		Orders(JdbcClient jdbc, DurableKafka kafka) {
			this.jdbc = jdbc;
			this.kafka = kafka;
		}

		@Transactional
		public void place(String orderId, long totalCents) {
			this.jdbc.sql("INSERT INTO orders (id, total_cents) VALUES (?, ?)").params(orderId, totalCents).update();
			// recorded in this transaction; sent after the commit, keyed by the order
			this.kafka.send("orders.placed", orderId, new OrderPlaced(orderId, totalCents));
		}

	}
	// end::kafka-publish[]

	// tag::kafka-inbox[]
	@Service
	class Shipping {

		private final JdbcClient jdbc;

		Shipping(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		@KafkaListener(topics = "orders.placed", groupId = "shipping")
		@IdempotentListener
		public void onOrderPlaced(ConsumerRecord<String, String> record) {
			// runs once per message, in the transaction that records it as applied
			this.jdbc.sql("INSERT INTO shipments (order_id) VALUES (?)").param(record.key()).update();
		}

	}
	// end::kafka-inbox[]

	@Service
	class Legacy {

		// tag::inbox-key-from-payload[]
		@KafkaListener(topics = "legacy.orders", groupId = "shipping")
		@IdempotentListener(missingKey = MissingKeyPolicy.KEY_FROM_PAYLOAD, key = "'legacy-order:' + #payload")
		public void onLegacyOrder(String orderId) {
			// a message without the ductor-idempotency-key header is keyed by its payload
		}
		// end::inbox-key-from-payload[]

	}

}
