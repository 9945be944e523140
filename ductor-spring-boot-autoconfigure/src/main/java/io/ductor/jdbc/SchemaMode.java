package io.ductor.jdbc;

/**
 * What Ductor does with its tables at start-up.
 */
public enum SchemaMode {

	/** Apply Ductor's pending migrations (the default). */
	MIGRATE,

	/** Fail start-up unless every Ductor migration has been applied, by someone else. */
	VALIDATE,

	/** Leave the schema alone: the tables are managed outside the application. */
	NONE

}
