package io.ductor.internal;

import java.util.Locale;

/**
 * How the public enums are stored in Ductor's tables: as their names in lower case
 * ({@code needs_decision}, {@code run_once}, ...).
 */
public final class DbValues {

	private DbValues() {
	}

	/**
	 * @param value a constant
	 * @return the value stored for it
	 */
	public static String of(Enum<?> value) {
		return value.name().toLowerCase(Locale.ROOT);
	}

	/**
	 * The constant stored as {@code value}.
	 * @param type the enum
	 * @param value a stored value
	 * @param <E> the enum
	 * @return the constant
	 * @throws IllegalArgumentException when {@code type} has no such constant
	 */
	public static <E extends Enum<E>> E parse(Class<E> type, String value) {
		try {
			return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Unknown " + type.getSimpleName() + " '" + value + "'", ex);
		}
	}

}
