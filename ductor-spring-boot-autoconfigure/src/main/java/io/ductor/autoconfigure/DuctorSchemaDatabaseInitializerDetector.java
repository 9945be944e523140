package io.ductor.autoconfigure;

import java.util.Set;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;
import org.springframework.boot.sql.init.dependency.DatabaseInitializerDetector;
import org.springframework.core.Ordered;

import io.ductor.jdbc.internal.DuctorSchema;

/**
 * Tells Spring Boot that {@link DuctorSchema} initializes the database, the way Boot's
 * own detector does for Flyway: beans that depend on database initialization are created
 * after it. Ordered last, so Ductor's migrations run after every other initializer (the
 * application's Flyway or Liquibase migrations, its SQL scripts).
 */
class DuctorSchemaDatabaseInitializerDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

	@Override
	protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
		return Set.of(DuctorSchema.class);
	}

	/**
	 * After the other {@link DatabaseInitializerDetector}s: Boot makes the initializers
	 * of a later detector depend on those of the earlier ones.
	 */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
