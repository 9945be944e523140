/**
 * An application externalizing Modulith events through Ductor's Kafka and RabbitMQ
 * relays.
 */
package io.ductor.modulithrelay;
