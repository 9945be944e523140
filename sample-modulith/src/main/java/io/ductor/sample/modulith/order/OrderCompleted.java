package io.ductor.sample.modulith.order;

import org.springframework.modulith.events.Externalized;

/**
 * An order was completed. Externalized to the Kafka topic {@code orders.completed}, keyed
 * by the order: the record key, and the ordering key of Ductor's relay.
 *
 * @param orderId the order
 * @param sku the product
 * @param quantity how many
 */
// tag::event[]
@Externalized("orders.completed::#{orderId()}")
public record OrderCompleted(String orderId, String sku, int quantity) {
}
// end::event[]
