package io.ductor.internal;

/**
 * Validation of the identifiers callers hand to Ductor: run ids, run types, stamps. An
 * identifier is between 1 and {@value #MAX_LENGTH} characters, is not blank, and has no
 * control characters and no unpaired UTF-16 surrogates.
 */
public final class Ids {

	/** The longest identifier Ductor accepts, in characters. */
	public static final int MAX_LENGTH = 200;

	private Ids() {
	}

	/**
	 * Return {@code value} when it is a valid identifier.
	 * @param what the parameter name, used in the error message
	 * @param value the identifier to check
	 * @return {@code value}
	 * @throws IllegalArgumentException naming {@code what} and the problem
	 */
	public static String require(String what, String value) {
		if (value == null) {
			throw new IllegalArgumentException(what + " must not be null");
		}
		if (value.isBlank()) {
			throw new IllegalArgumentException(what + " must not be blank");
		}
		if (value.length() > MAX_LENGTH) {
			throw new IllegalArgumentException(what + " must be at most " + MAX_LENGTH + " characters but has "
					+ value.length() + " (starts with '" + value.substring(0, 20) + "')");
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (Character.isISOControl(c)) {
				throw new IllegalArgumentException(
						what + " must not contain control characters, found U+%04X at index %d".formatted((int) c, i));
			}
			if (Character.isHighSurrogate(c) && i + 1 < value.length()
					&& Character.isLowSurrogate(value.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				// the driver would send it as '?', so two different ids would become one
				throw new IllegalArgumentException(
						what + " must be valid Unicode, found an unpaired surrogate U+%04X at index %d"
							.formatted((int) c, i));
			}
		}
		return value;
	}

}
