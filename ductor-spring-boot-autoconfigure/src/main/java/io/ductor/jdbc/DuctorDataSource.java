package io.ductor.jdbc;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.beans.factory.annotation.Qualifier;

/**
 * Marks the {@code DataSource} that holds Ductor's tables in an application with several
 * ({@code @Bean @DuctorDataSource DataSource ordersDatabase() {…}}), as
 * {@code @FlywayDataSource} does for Flyway. Without it Ductor uses the application's
 * only {@code DataSource}, or its {@code @Primary} one; with several and neither,
 * start-up fails naming them. Ductor's transactions then run on the application's
 * transaction manager of that {@code DataSource}, if there is one, so that effects
 * recorded in the application's {@code @Transactional} work on it commit with that work.
 */
@Target({ ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.TYPE, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Qualifier
public @interface DuctorDataSource {

}
