package io.ductor.jdbc.internal;

import java.io.IOException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.util.ClassUtils;

/**
 * Warns once at start-up when the application has Flyway migrations in Spring Boot's
 * default location ({@code classpath:db/migration}) but nothing runs them: Spring Boot's
 * Flyway auto-configuration is not on the class path (Ductor's starter brings
 * {@code flyway-core} for its own migrations, not {@code spring-boot-flyway}) and the
 * application defines no {@code Flyway} bean of its own. It does not fail: the
 * application may apply its schema some other way.
 */
public final class ApplicationMigrationsCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(ApplicationMigrationsCheck.class);

	static final String FLYWAY_AUTO_CONFIGURATION = "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration";

	static final String FLYWAY = "org.flywaydb.core.Flyway";

	static final String LOCATION = "classpath*:db/migration/**/*.sql";

	private final ListableBeanFactory beans;

	private final ClassLoader classLoader;

	public ApplicationMigrationsCheck(ListableBeanFactory beans, ClassLoader classLoader) {
		this.beans = beans;
		this.classLoader = classLoader;
	}

	@Override
	public void afterSingletonsInstantiated() {
		String problem = problem();
		if (problem != null) {
			logger.warn(problem);
		}
	}

	/**
	 * @return the warning, or {@code null} when there is nothing to say
	 */
	@Nullable String problem() {
		if (ClassUtils.isPresent(FLYWAY_AUTO_CONFIGURATION, this.classLoader) || hasFlywayBean()) {
			return null;
		}
		Resource[] migrations;
		try {
			migrations = new PathMatchingResourcePatternResolver(this.classLoader).getResources(LOCATION);
		}
		catch (IOException ex) {
			return null;
		}
		if (migrations.length == 0) {
			return null;
		}
		return "The application has " + migrations.length + " Flyway migration(s) in classpath:db/migration (such"
				+ " as " + migrations[0].getFilename() + ") but nothing runs them: Spring Boot's Flyway"
				+ " auto-configuration is not on the class path. Ductor's starter brings flyway-core for Ductor's"
				+ " own migrations only; add org.springframework.boot:spring-boot-starter-flyway to run the"
				+ " application's (see Ductor's docs/operations.md, \"Database and schema\").";
	}

	private boolean hasFlywayBean() {
		try {
			return this.beans.getBeanNamesForType(ClassUtils.forName(FLYWAY, this.classLoader), true, false).length > 0;
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

}
