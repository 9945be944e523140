/**
 * The code of the messaging guide's Kafka examples, compiled here.
 */
@NullMarked
package io.ductor.kafka.docs;

import org.jspecify.annotations.NullMarked;
