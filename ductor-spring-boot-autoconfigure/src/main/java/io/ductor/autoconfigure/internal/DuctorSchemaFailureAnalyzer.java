package io.ductor.autoconfigure.internal;

import java.net.ConnectException;
import java.net.UnknownHostException;
import java.sql.SQLException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.internal.DuctorSchemaException;

/**
 * Reports a start-up that failed while Ductor brought its tables up to date or checked
 * them: the database could not be reached (refused, unknown host, wrong password, no such
 * database), a migration failed, or the tables are not up to date in {@code validate}
 * mode.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class DuctorSchemaFailureAnalyzer extends AbstractFailureAnalyzer<DuctorSchemaException> {

	private final Environment environment;

	DuctorSchemaFailureAnalyzer(Environment environment) {
		this.environment = environment;
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, DuctorSchemaException cause) {
		String url = url();
		String where = (url != null) ? " at " + url : "";
		SQLException sql = findCause(cause, SQLException.class);
		String state = (sql != null && sql.getSQLState() != null) ? sql.getSQLState() : "";
		String reason = deepestMessage(cause);
		if (state.startsWith("08") || findCause(cause, ConnectException.class) != null
				|| findCause(cause, UnknownHostException.class) != null) {
			return new FailureAnalysis("Ductor could not reach its database" + where + ": " + reason,
					"Start PostgreSQL (14 or newer) or point spring.datasource.url at one that accepts connections."
							+ " For development without a server, run the application with an embedded PostgreSQL:"
							+ " see DuctorDevDatabase in docs/testing.md.",
					cause);
		}
		if (state.startsWith("28")) {
			return new FailureAnalysis("Ductor's database" + where + " refused the user: " + reason,
					"Correct spring.datasource.username and spring.datasource.password.", cause);
		}
		if (state.equals("3D000")) {
			return new FailureAnalysis("Ductor's database" + where + " does not exist: " + reason,
					"Create the database, or correct the database name in spring.datasource.url.", cause);
		}
		if (cause.mode() == SchemaMode.VALIDATE) {
			return new FailureAnalysis(cause.getMessage(),
					"Apply Ductor's migrations (" + DuctorSchema.LOCATION + ", history table "
							+ DuctorSchema.HISTORY_TABLE + ") before starting, or set ductor.schema.mode=migrate so"
							+ " that the application applies them at start-up. See docs/operations.md.",
					cause);
		}
		return new FailureAnalysis(cause.getMessage(),
				"Ductor migrates its tables with a Flyway history of its own (" + DuctorSchema.HISTORY_TABLE
						+ "), after the application's own migrations. Check that the database user may create"
						+ " tables, functions and indexes in its schema, and that no table of the application has"
						+ " the name of one of Ductor's (eec_*). To manage the schema outside the application, set"
						+ " ductor.schema.mode=validate or none. See docs/operations.md.",
				cause);
	}

	private String url() {
		return (this.environment != null) ? this.environment.getProperty("spring.datasource.url") : null;
	}

	private static String deepestMessage(Throwable failure) {
		String message = failure.getMessage();
		for (Throwable cause = failure.getCause(); cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && !cause.getMessage().isBlank()) {
				message = cause.getMessage();
			}
		}
		return message.strip();
	}

}
