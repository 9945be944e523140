package io.ductor.run;

import java.util.Locale;

/**
 * Where a run is in its life. Only {@link #ACTIVE} runs accept ticks.
 */
public enum RunStatus {

	/** Ticks advance the run. */
	ACTIVE,

	/** A step finished the run successfully; later ticks change nothing. */
	COMPLETED,

	/** A step finished the run as failed; later ticks change nothing. */
	FAILED;

	/**
	 * Whether the run is finished.
	 * @return {@code true} for {@link #COMPLETED} and {@link #FAILED}
	 */
	public boolean isTerminal() {
		return this != ACTIVE;
	}

	/**
	 * @return the status as stored in the runs table
	 */
	public String dbValue() {
		return name().toLowerCase(Locale.ROOT);
	}

	/**
	 * The status stored as {@code value}.
	 * @param value a {@link #dbValue()}
	 * @return the status
	 */
	public static RunStatus fromDb(String value) {
		return valueOf(value.toUpperCase(Locale.ROOT));
	}

}
