package io.ductor.effect;

import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes an effect's arguments as a JSON array using the method's generic parameter types, proves
 * they read back, and reads them again for dispatch.
 */
class EffectPayloads {

	private final JsonMapper mapper;

	private final long maxPayloadBytes;

	EffectPayloads(JsonMapper mapper, long maxPayloadBytes) {
		this.mapper = mapper;
		this.maxPayloadBytes = maxPayloadBytes;
	}

	/**
	 * The arguments as a JSON array, checked to read back into the parameter types and to
	 * serialize to the same JSON again.
	 */
	String write(EffectDefinition effect, Object[] args) {
		List<JavaType> types = effect.parameterTypes();
		if (args.length != types.size()) {
			throw new DurableEffectException("Effect '" + effect.name() + "' takes " + types.size()
					+ " argument(s) but was given " + args.length);
		}
		String json;
		try {
			json = write(types, args);
		}
		catch (JacksonException ex) {
			throw new DurableEffectException("Cannot store the arguments of effect '" + effect.name()
					+ "' as JSON: " + ex.getOriginalMessage(), ex);
		}
		long size = json.getBytes(StandardCharsets.UTF_8).length;
		if (size > this.maxPayloadBytes) {
			throw new DurableEffectException("The arguments of effect '" + effect.name() + "' take " + size
					+ " bytes as JSON, more than ductor.effects.max-payload-size (" + this.maxPayloadBytes
					+ " bytes); store large data elsewhere and pass a reference");
		}
		Object[] readBack = read(effect, json);
		try {
			String again = write(types, readBack);
			if (!again.equals(json)) {
				throw new DurableEffectException("The arguments of effect '" + effect.name()
						+ "' do not survive a JSON round trip: stored " + abbreviate(json) + " but read back "
						+ abbreviate(again) + "; use types Jackson reads back as written");
			}
		}
		catch (JacksonException ex) {
			throw new DurableEffectException("The arguments of effect '" + effect.name()
					+ "' do not survive a JSON round trip: " + ex.getOriginalMessage(), ex);
		}
		return json;
	}

	/** Each argument written with its parameter's type, into one array, in one pass. */
	private String write(List<JavaType> types, Object[] args) {
		StringWriter out = new StringWriter();
		try (JsonGenerator generator = this.mapper.createGenerator(out)) {
			generator.writeStartArray();
			for (int i = 0; i < args.length; i++) {
				this.mapper.writerFor(types.get(i)).writeValue(generator, args[i]);
			}
			generator.writeEndArray();
		}
		return out.toString();
	}

	/** The stored JSON array read back into the parameter types. */
	Object[] read(EffectDefinition effect, String json) {
		List<JavaType> types = effect.parameterTypes();
		try {
			JsonNode array = this.mapper.readTree(json);
			if (!array.isArray() || array.size() != types.size()) {
				throw new DurableEffectException("The stored arguments of effect '" + effect.name() + "' are "
						+ abbreviate(json) + " but the method takes " + types.size() + " argument(s)");
			}
			Object[] args = new Object[types.size()];
			for (int i = 0; i < args.length; i++) {
				args[i] = this.mapper.treeToValue(array.get(i), types.get(i));
			}
			return args;
		}
		catch (JacksonException ex) {
			throw new DurableEffectException("Cannot read the stored arguments of effect '" + effect.name()
					+ "' into " + types + ": " + ex.getOriginalMessage(), ex);
		}
	}

	/** SHA-256 over the effect name and its arguments: what binds an idempotency key to its payload. */
	static String fingerprint(String effectName, String payloadJson) {
		try {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			digest.update(effectName.getBytes(StandardCharsets.UTF_8));
			digest.update((byte) 0);
			digest.update(payloadJson.getBytes(StandardCharsets.UTF_8));
			return HexFormat.of().formatHex(digest.digest());
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String abbreviate(String json) {
		return (json.length() <= 200) ? json : json.substring(0, 200) + "…";
	}

}
