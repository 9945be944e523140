package io.ductor.jdbc.internal;

import java.util.List;

import javax.sql.DataSource;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.output.ValidateResult;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.InitializingBean;

import io.ductor.jdbc.SchemaMode;

/**
 * Brings Ductor's tables up to date at start-up with a private Flyway instance that has
 * its own history table, so the application's own Flyway migrations (and Boot's
 * {@code Flyway} bean) are left untouched.
 */
public class DuctorSchema implements InitializingBean {

	/** Where Ductor's migrations live on the classpath. */
	public static final String LOCATION = "classpath:db/ductor/migration";

	/** Ductor's own Flyway history table. */
	public static final String HISTORY_TABLE = "ductor_schema_history";

	private static final Log logger = LogFactory.getLog(DuctorSchema.class);

	private final DataSource dataSource;

	private final SchemaMode mode;

	public DuctorSchema(DataSource dataSource, SchemaMode mode) {
		this.dataSource = dataSource;
		this.mode = mode;
	}

	@Override
	public void afterPropertiesSet() {
		switch (this.mode) {
			case MIGRATE -> migrate();
			case VALIDATE -> validate();
			case NONE -> logger.debug("ductor.schema.mode=none: Ductor's tables are managed outside the application");
		}
	}

	private void migrate() {
		try {
			int applied = flyway().migrate().migrationsExecuted;
			if (applied > 0) {
				logger.info("Applied " + applied + " Ductor schema migration(s)");
			}
		}
		catch (FlywayException ex) {
			throw new DuctorSchemaException(this.mode,
					"Ductor could not migrate its tables (ductor.schema.mode=migrate): " + ex.getMessage(), ex);
		}
	}

	private void validate() {
		ValidateResult result;
		try {
			result = flyway().validateWithResult();
		}
		catch (FlywayException ex) {
			throw new DuctorSchemaException(this.mode,
					"Ductor could not validate its tables (ductor.schema.mode=validate): " + ex.getMessage(), ex);
		}
		if (!result.validationSuccessful) {
			throw new DuctorSchemaException(this.mode,
					"Ductor's tables are not up to date and ductor.schema.mode=validate: " + describe(result)
							+ ". Apply the migrations in " + LOCATION + " (history table " + HISTORY_TABLE
							+ ") or set ductor.schema.mode=migrate.",
					null);
		}
	}

	/**
	 * The migrations that failed validation, by version, and the first problem: Flyway
	 * writes a paragraph per migration.
	 */
	private static String describe(ValidateResult result) {
		if (result.invalidMigrations == null || result.invalidMigrations.isEmpty()) {
			return result.getAllErrorMessages();
		}
		List<String> versions = result.invalidMigrations.stream()
			.map((migration) -> (migration.version != null && !migration.version.isEmpty()) ? migration.version
					: migration.description)
			.toList();
		String first = result.invalidMigrations.get(0).errorDetails.errorMessage;
		return "migration(s) " + String.join(", ", versions) + " of " + LOCATION + " failed validation (the first: "
				+ ((first != null) ? first.lines().findFirst().orElse("").strip() : "no reason given") + ")";
	}

	private Flyway flyway() {
		return Flyway.configure(DuctorSchema.class.getClassLoader())
			.dataSource(this.dataSource)
			.locations(LOCATION)
			.table(HISTORY_TABLE)
			// the application's schema usually holds tables already; Ductor's history
			// starts empty
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.load();
	}

}
