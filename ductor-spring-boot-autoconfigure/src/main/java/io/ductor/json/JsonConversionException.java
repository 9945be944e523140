package io.ductor.json;

import io.ductor.DuctorException;

/**
 * A value could not be written to JSON or read back into its Java type.
 */
public class JsonConversionException extends DuctorException {

	public JsonConversionException(String message, Throwable cause) {
		super(message, cause);
	}

}
