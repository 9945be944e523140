package io.ductor.console.internal;

import java.util.Set;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import io.ductor.actuate.internal.PayloadMask;

/**
 * Replaces the value of every object field with one of the hidden names, at any depth of
 * an intent's arguments, by {@value #HIDDEN}. Arguments that are not JSON are hidden
 * whole.
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
		try {
			JsonNode tree = this.json.readTree(payloadJson);
			hide(tree);
			return this.json.writeValueAsString(tree);
		}
		catch (RuntimeException ex) {
			return "\"" + HIDDEN + "\"";
		}
	}

	private void hide(JsonNode node) {
		if (node instanceof ObjectNode object) {
			for (String name : object.propertyNames()) {
				if (this.names.contains(name)) {
					object.put(name, HIDDEN);
				}
				else {
					hide(object.get(name));
				}
			}
		}
		else if (node.isArray()) {
			node.forEach(this::hide);
		}
	}

}
