/**
 * Auto-configuration of Ductor's Kafka outbox and inbox, and its {@code ductor.kafka.*}
 * properties.
 */
@NullMarked
package io.ductor.kafka.autoconfigure;

import org.jspecify.annotations.NullMarked;
