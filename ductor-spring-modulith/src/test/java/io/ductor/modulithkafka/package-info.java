/** An application externalizing Modulith events through Ductor's Kafka relay. */
package io.ductor.modulithkafka;
