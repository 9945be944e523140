package io.ductor.json.internal;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import io.ductor.json.JsonConversionException;

/**
 * Converts the values Ductor stores as {@code jsonb} (run state, tick input) with the
 * application's {@link JsonMapper}, turning Jackson's failures into a
 * {@link JsonConversionException} that says what was being converted.
 */
public class JsonCodec {

	private final JsonMapper mapper;

	public JsonCodec(JsonMapper mapper) {
		this.mapper = mapper;
	}

	/**
	 * @return the mapper this codec reads and writes with
	 */
	public JsonMapper mapper() {
		return this.mapper;
	}

	/**
	 * Write {@code value} as JSON.
	 * @param value the value, may be {@code null} (written as JSON {@code null})
	 * @param what what the value is, for the error message ("run state")
	 * @return the JSON text
	 */
	public String write(Object value, String what) {
		try {
			return this.mapper.writeValueAsString(value);
		}
		catch (JacksonException ex) {
			throw new JsonConversionException("Cannot write " + what + " of type " + value.getClass().getName()
					+ " as JSON: " + ex.getOriginalMessage(), ex);
		}
	}

	/**
	 * Read JSON text into {@code type}.
	 * @param json the JSON text
	 * @param type the target type
	 * @param what what the value is, for the error message
	 * @param <T> the target type
	 * @return the value, {@code null} for JSON {@code null}
	 */
	public <T> T read(String json, Class<T> type, String what) {
		try {
			return this.mapper.readValue(json, type);
		}
		catch (JacksonException ex) {
			throw new JsonConversionException(
					"Cannot read " + what + " as " + type.getName() + ": " + ex.getOriginalMessage(), ex);
		}
	}

}
