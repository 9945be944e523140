package io.ductor.sample.feed;

import java.time.OffsetDateTime;

/**
 * One line of the order feed, as {@code GET /feed} shows it.
 *
 * @param orderId the order the event announced
 * @param messageKey the event's {@code ductor-idempotency-key}
 * @param summary what was ordered
 * @param partition the Kafka partition the event was read from
 * @param offset its offset there
 * @param receivedAt when the listener applied it
 */
public record FeedEntry(String orderId, String messageKey, String summary, int partition, long offset,
		OffsetDateTime receivedAt) {
}
