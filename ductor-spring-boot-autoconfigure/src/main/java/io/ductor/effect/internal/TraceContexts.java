package io.ductor.effect.internal;

import java.util.LinkedHashMap;
import java.util.Map;

import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The {@code trace_context} column: the propagated fields of a trace context as a JSON
 * object of strings, {@code null} when there are none.
 */
public final class TraceContexts {

	private static final Log logger = LogFactory.getLog(TraceContexts.class);

	private static final TypeReference<Map<String, String>> FIELDS = new TypeReference<>() {
	};

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private TraceContexts() {
	}

	/**
	 * @return the column's value, or {@code null} for no fields
	 */
	public static String encode(Map<String, String> fields) {
		if (fields == null) {
			return null;
		}
		Map<String, String> present = new LinkedHashMap<>();
		fields.forEach((key, value) -> {
			if (key != null && value != null) {
				present.put(key, value);
			}
		});
		return present.isEmpty() ? null : JSON.writeValueAsString(present);
	}

	/**
	 * @return the fields stored in the column; empty for {@code null} or a value that
	 * cannot be read
	 */
	public static Map<String, String> decode(String column) {
		if (column == null) {
			return Map.of();
		}
		try {
			Map<String, String> fields = JSON.readValue(column, FIELDS);
			return (fields != null) ? fields : Map.of();
		}
		catch (JacksonException | ClassCastException ex) {
			// a trace is worth less than the attempt: run it in a fresh trace
			logger.debug("Ignoring an unreadable trace_context: " + ex.getMessage());
			return Map.of();
		}
	}

}
