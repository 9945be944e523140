package io.ductor.effect.internal;

import java.util.HashMap;
import java.util.Map;

import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The {@code trace_context} column: the propagated fields of a trace context as a JSON
 * object of strings, {@code null} when there are none. Written and read by hand, once per
 * recording and once per attempt: a flat object of a few short strings needs no object
 * mapper. A value this reader does not expect goes to Jackson.
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
		if (fields == null || fields.isEmpty()) {
			return null;
		}
		StringBuilder json = new StringBuilder(96 * fields.size());
		json.append('{');
		boolean first = true;
		for (Map.Entry<String, String> field : fields.entrySet()) {
			if (field.getKey() == null || field.getValue() == null) {
				continue;
			}
			if (!first) {
				json.append(',');
			}
			first = false;
			string(json, field.getKey());
			json.append(':');
			string(json, field.getValue());
		}
		return first ? null : json.append('}').toString();
	}

	/**
	 * @return the fields stored in the column; empty for {@code null} or a value that
	 * cannot be read
	 */
	public static Map<String, String> decode(String column) {
		if (column == null) {
			return Map.of();
		}
		Map<String, String> fields = new Reader(column).object();
		return (fields != null) ? fields : decodeWithJackson(column);
	}

	private static Map<String, String> decodeWithJackson(String column) {
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

	private static void string(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					if (c < 0x20) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

	/**
	 * Reads a flat JSON object of string values, as PostgreSQL prints a {@code jsonb}
	 * value; gives {@code null} for anything else (nested values, numbers, escapes other
	 * than the simple ones).
	 */
	private static final class Reader {

		private final String text;

		private int at;

		Reader(String text) {
			this.text = text;
		}

		Map<String, String> object() {
			skipSpace();
			if (!take('{')) {
				return null;
			}
			Map<String, String> fields = new HashMap<>(4);
			skipSpace();
			if (take('}')) {
				return end() ? fields : null;
			}
			while (true) {
				skipSpace();
				String key = string();
				skipSpace();
				if (key == null || !take(':')) {
					return null;
				}
				skipSpace();
				String value = string();
				if (value == null) {
					return null;
				}
				fields.put(key, value);
				skipSpace();
				if (take('}')) {
					return end() ? fields : null;
				}
				if (!take(',')) {
					return null;
				}
			}
		}

		private String string() {
			if (!take('"')) {
				return null;
			}
			StringBuilder value = null;
			int start = this.at;
			while (this.at < this.text.length()) {
				char c = this.text.charAt(this.at++);
				if (c == '"') {
					return (value == null) ? this.text.substring(start, this.at - 1) : value.toString();
				}
				if (c == '\\') {
					if (value == null) {
						value = new StringBuilder(this.text.length()).append(this.text, start, this.at - 1);
					}
					if (this.at >= this.text.length()) {
						return null;
					}
					char escaped = this.text.charAt(this.at++);
					switch (escaped) {
						case '"', '\\', '/' -> value.append(escaped);
						case 'n' -> value.append('\n');
						case 'r' -> value.append('\r');
						case 't' -> value.append('\t');
						default -> {
							return null;
						}
					}
				}
				else if (value != null) {
					value.append(c);
				}
			}
			return null;
		}

		private boolean end() {
			skipSpace();
			return this.at == this.text.length();
		}

		private boolean take(char c) {
			if (this.at < this.text.length() && this.text.charAt(this.at) == c) {
				this.at++;
				return true;
			}
			return false;
		}

		private void skipSpace() {
			while (this.at < this.text.length() && Character.isWhitespace(this.text.charAt(this.at))) {
				this.at++;
			}
		}

	}

}
