/**
 * The sample shop: the order feed, fed by the "order placed" events the shop publishes
 * through Ductor's Kafka outbox and consumes through its inbox.
 */
@NullMarked
package io.ductor.sample.feed;

import org.jspecify.annotations.NullMarked;
