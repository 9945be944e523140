package io.ductor.modulith.internal;

import org.springframework.util.ClassUtils;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Events to JSON and back, with the application's {@link JsonMapper}.
 */
public class EventCodec {

	private final JsonMapper mapper;

	private final ClassLoader classLoader;

	public EventCodec(JsonMapper mapper, ClassLoader classLoader) {
		this.mapper = mapper;
		this.classLoader = classLoader;
	}

	JsonNode write(Object event) {
		return this.mapper.valueToTree(event);
	}

	Object read(String type, JsonNode event) {
		return this.mapper.treeToValue(event, type(type));
	}

	Object read(String type, String json) {
		return this.mapper.readValue(json, type(type));
	}

	private Class<?> type(String type) {
		return ClassUtils.resolveClassName(type, this.classLoader);
	}

}
