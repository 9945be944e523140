package io.ductor.console.internal;

import java.io.StringWriter;
import java.util.Set;

import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.json.JsonMapper;

import io.ductor.actuate.internal.PayloadMask;

/**
 * Replaces the value of every object field with one of the hidden names, at any depth of
 * an intent's arguments, by {@value #HIDDEN}. Arguments that are not JSON are hidden
 * whole.
 * <p>
 * The arguments are copied token by token, never read into numbers: every other value is
 * shown exactly as stored ({@code 1234567890.123456789} stays what it is, where a
 * {@code double} would make it {@code 1.2345678901234567E9}).
 */
public class HiddenFieldsMask implements PayloadMask {

	/** What a hidden value is shown as. */
	public static final String HIDDEN = "[hidden]";

	private final Set<String> names;

	private final JsonMapper json = JsonMapper.builder().build();

	public HiddenFieldsMask(Set<String> names) {
		this.names = Set.copyOf(names);
	}

	@Override
	public String mask(String payloadJson) {
		if (payloadJson == null) {
			return null;
		}
		StringWriter masked = new StringWriter(payloadJson.length());
		try (JsonParser parser = this.json.createParser(payloadJson);
				JsonGenerator generator = this.json.createGenerator(masked)) {
			for (JsonToken token = parser.nextToken(); token != null; token = parser.nextToken()) {
				copy(token, parser, generator);
			}
		}
		catch (RuntimeException ex) {
			return "\"" + HIDDEN + "\"";
		}
		return masked.toString();
	}

	private void copy(JsonToken token, JsonParser parser, JsonGenerator generator) {
		switch (token) {
			case START_OBJECT -> generator.writeStartObject();
			case END_OBJECT -> generator.writeEndObject();
			case START_ARRAY -> generator.writeStartArray();
			case END_ARRAY -> generator.writeEndArray();
			case PROPERTY_NAME -> {
				generator.writeName(parser.currentName());
				if (this.names.contains(parser.currentName())) {
					parser.nextToken();
					parser.skipChildren();
					generator.writeString(HIDDEN);
				}
			}
			case VALUE_STRING -> generator.writeString(parser.getString());
			// the number as written, never parsed
			case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> generator.writeNumber(parser.getString());
			case VALUE_TRUE -> generator.writeBoolean(true);
			case VALUE_FALSE -> generator.writeBoolean(false);
			case VALUE_NULL -> generator.writeNull();
			default -> throw new IllegalStateException("Unexpected token " + token + " in stored arguments");
		}
	}

}
