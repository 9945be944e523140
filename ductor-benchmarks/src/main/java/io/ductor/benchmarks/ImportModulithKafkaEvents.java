package io.ductor.benchmarks;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Imports the auto-configurations of a JDBC application with Spring Modulith's event
 * publication registry and its externalization to Kafka, listed in
 * {@code META-INF/spring/io.ductor.benchmarks.ImportModulithKafkaEvents.imports}
 * (Modulith's own auto-configurations are not public classes).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ImportAutoConfiguration
@interface ImportModulithKafkaEvents {

}
