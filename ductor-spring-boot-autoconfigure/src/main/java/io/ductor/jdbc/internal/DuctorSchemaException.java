package io.ductor.jdbc.internal;

import io.ductor.DuctorException;
import io.ductor.jdbc.SchemaMode;

/**
 * Ductor's schema could not be brought up to date or checked at start-up: the database
 * could not be reached, a migration failed, or (in {@code validate} mode) the tables are
 * not up to date. Not an API for applications: catch {@link DuctorException}.
 */
public class DuctorSchemaException extends DuctorException {

	private final SchemaMode mode;

	public DuctorSchemaException(SchemaMode mode, String message, Throwable cause) {
		super(message, cause);
		this.mode = mode;
	}

	/**
	 * @return the schema mode that failed
	 */
	public SchemaMode mode() {
		return this.mode;
	}

}
