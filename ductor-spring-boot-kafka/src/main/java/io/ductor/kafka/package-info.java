/**
 * Ductor as the transactional outbox for Apache Kafka:
 * {@link io.ductor.kafka.DurableKafka} records a message in the caller's transaction and
 * Ductor's relay sends it after the commit, acknowledged by the broker, in order per
 * record key.
 */
@NullMarked
package io.ductor.kafka;

import org.jspecify.annotations.NullMarked;
