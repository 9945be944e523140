package io.ductor.effect.internal;

import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.ClassUtils;

import io.ductor.effect.DurableEffectException;

/**
 * Writes an effect's arguments as a JSON array using the method's generic parameter
 * types, proves they read back, and reads them again for dispatch.
 * <p>
 * What can be prepared once per effect is, on its first use: a writer and a reader per
 * parameter (for strings, booleans and integers the generator itself, once the mapper is
 * shown to write sample values the same way), and the name every fingerprint starts with.
 * When every parameter is of a type that survives JSON by construction ({@code String},
 * {@code boolean}, the integral primitives and their wrappers) and the application's
 * mapper is shown, once, to write and read sample values of those types unchanged (a
 * custom serializer or deserializer would not be), the per-call round-trip check is
 * skipped; for every other effect each call writes, reads back and writes again, as
 * before.
 */
public class EffectPayloads {

	/**
	 * Types whose values JSON carries unchanged, if the mapper treats them as Jackson
	 * does by default.
	 */
	private static final Set<Class<?>> EXACT_TYPES = Set.of(String.class, boolean.class, Boolean.class, byte.class,
			Byte.class, short.class, Short.class, int.class, Integer.class, long.class, Long.class);

	/**
	 * One SHA-256 per thread, reset by every digest: a fingerprint allocates only its
	 * result.
	 */
	private static final ThreadLocal<MessageDigest> sha256 = ThreadLocal.withInitial(EffectPayloads::sha256);

	private final JsonMapper mapper;

	private final long maxPayloadBytes;

	private final Map<String, Arguments> arguments = new ConcurrentHashMap<>();

	public EffectPayloads(JsonMapper mapper, long maxPayloadBytes) {
		this.mapper = mapper;
		this.maxPayloadBytes = maxPayloadBytes;
	}

	/** The stored form of one call's arguments: the JSON and its fingerprint. */
	record Payload(String json, String fingerprint) {
	}

	/**
	 * The arguments as a JSON array, checked to read back into the parameter types and to
	 * serialize to the same JSON again.
	 */
	String write(EffectDefinition effect, Object[] args) {
		return encode(effect, args).json();
	}

	/**
	 * The arguments as a JSON array (checked as {@link #write} does) and their
	 * fingerprint.
	 * @param effect the effect
	 * @param args the call's arguments
	 * @return the payload
	 */
	Payload encode(EffectDefinition effect, Object[] args) {
		Arguments prepared = arguments(effect);
		if (args.length != prepared.writers.length) {
			throw new DurableEffectException("Effect '" + effect.name() + "' takes " + prepared.writers.length
					+ " argument(s) but was given " + args.length);
		}
		String json;
		try {
			json = prepared.write(args);
		}
		catch (JacksonException ex) {
			throw new DurableEffectException(
					"Cannot store the arguments of effect '" + effect.name() + "' as JSON: " + ex.getOriginalMessage(),
					ex);
		}
		byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
		if (bytes.length > this.maxPayloadBytes) {
			throw new DurableEffectException("The arguments of effect '" + effect.name() + "' take " + bytes.length
					+ " bytes as JSON, more than ductor.effects.max-payload-size (" + this.maxPayloadBytes
					+ " bytes); store large data elsewhere and pass a reference");
		}
		if (!prepared.exact) {
			checkRoundTrip(effect, prepared, json);
		}
		return new Payload(json, prepared.fingerprint(bytes));
	}

	private void checkRoundTrip(EffectDefinition effect, Arguments prepared, String json) {
		Object[] readBack = readThroughTree(effect, json);
		try {
			String again = prepared.write(readBack);
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
	}

	/** The stored JSON array read back into the parameter types. */
	Object[] read(EffectDefinition effect, String json) {
		Arguments prepared = arguments(effect);
		if (prepared.exact) {
			Object[] args = prepared.readStreaming(json);
			if (args != null) {
				return args;
			}
			// not what was written: let the general path say what is wrong with it
		}
		return readThroughTree(effect, json);
	}

	private Object[] readThroughTree(EffectDefinition effect, String json) {
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
			throw new DurableEffectException("Cannot read the stored arguments of effect '" + effect.name() + "' into "
					+ types + ": " + ex.getOriginalMessage(), ex);
		}
	}

	/**
	 * Arguments written as text (in properties), one per parameter: a {@code String} (or
	 * {@code CharSequence}) parameter takes the text as it is, any other parameter reads
	 * it as JSON ({@code 42}, {@code true}, {@code {"sku": "book-1"}}).
	 * @throws IllegalArgumentException when the count is wrong or a text does not read
	 * into its type
	 */
	Object[] fromText(EffectDefinition effect, List<String> texts) {
		List<JavaType> types = effect.parameterTypes();
		if (texts.size() != types.size()) {
			throw new IllegalArgumentException("effect '" + effect.name() + "' takes " + types.size()
					+ " argument(s) but " + texts.size() + " are given");
		}
		Object[] args = new Object[types.size()];
		for (int i = 0; i < args.length; i++) {
			JavaType type = types.get(i);
			String text = texts.get(i);
			if (type.getRawClass() == String.class || type.getRawClass() == CharSequence.class) {
				args[i] = text;
				continue;
			}
			try {
				args[i] = this.mapper.readValue(text, type);
			}
			catch (JacksonException ex) {
				throw new IllegalArgumentException("argument " + i + " ('" + text + "') is not JSON of type "
						+ type.toCanonical() + ": " + ex.getOriginalMessage(), ex);
			}
		}
		return args;
	}

	/**
	 * @return whether calls of {@code effect} skip the per-call round-trip check
	 */
	boolean isExact(EffectDefinition effect) {
		return arguments(effect).exact;
	}

	private Arguments arguments(EffectDefinition effect) {
		Arguments prepared = this.arguments.get(effect.name());
		if (prepared == null || prepared.effect != effect) {
			prepared = new Arguments(effect, this.mapper);
			this.arguments.put(effect.name(), prepared);
		}
		return prepared;
	}

	/**
	 * SHA-256 over the effect name and its arguments: what binds an idempotency key to
	 * its payload.
	 */
	static String fingerprint(String effectName, String payloadJson) {
		MessageDigest digest = sha256();
		digest.update(effectName.getBytes(StandardCharsets.UTF_8));
		digest.update((byte) 0);
		digest.update(payloadJson.getBytes(StandardCharsets.UTF_8));
		return HexFormat.of().formatHex(digest.digest());
	}

	private static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String abbreviate(String json) {
		return (json.length() <= 200) ? json : json.substring(0, 200) + "…";
	}

	/** What one effect's payloads need, prepared on its first call. */
	private static final class Arguments {

		private final EffectDefinition effect;

		private final JsonMapper mapper;

		private final ObjectWriter[] writers;

		private final ObjectReader[] readers;

		/**
		 * Whether every parameter's values are shown to survive JSON unchanged: no check
		 * per call.
		 */
		private final boolean exact;

		/** The effect's name in UTF-8, where every fingerprint starts. */
		private final byte[] name;

		/**
		 * Per parameter, the class whose values (and {@code null}) are written with the
		 * generator directly, as the mapper was shown to write them; {@code null} where
		 * the parameter's writer runs.
		 */
		private final Class<?>[] direct;

		Arguments(EffectDefinition effect, JsonMapper mapper) {
			this.effect = effect;
			this.mapper = mapper;
			List<JavaType> types = effect.parameterTypes();
			this.writers = new ObjectWriter[types.size()];
			this.readers = new ObjectReader[types.size()];
			for (int i = 0; i < this.writers.length; i++) {
				this.writers[i] = mapper.writerFor(types.get(i));
				this.readers[i] = mapper.readerFor(types.get(i));
			}
			this.exact = types.stream().allMatch((type) -> survivesUnchanged(mapper, type));
			this.direct = new Class<?>[types.size()];
			for (int i = 0; i < this.direct.length; i++) {
				JavaType type = types.get(i);
				if (EXACT_TYPES.contains(type.getRawClass()) && writesAsGenerator(mapper, type)) {
					this.direct[i] = ClassUtils.resolvePrimitiveIfNecessary(type.getRawClass());
				}
			}
			this.name = effect.name().getBytes(StandardCharsets.UTF_8);
		}

		/**
		 * Each argument written with its parameter's type, into one array, in one pass.
		 */
		String write(Object[] args) {
			StringWriter out = new StringWriter(64);
			try (JsonGenerator generator = this.mapper.createGenerator(out)) {
				generator.writeStartArray();
				for (int i = 0; i < args.length; i++) {
					Object arg = args[i];
					if (this.direct[i] != null && (arg == null || arg.getClass() == this.direct[i])) {
						writeDirectly(generator, arg);
					}
					else {
						// other types, and values of another class than the parameter's
						// (refused as before)
						this.writers[i].writeValue(generator, arg);
					}
				}
				generator.writeEndArray();
			}
			return out.toString();
		}

		private static void writeDirectly(JsonGenerator generator, Object value) {
			if (value == null) {
				generator.writeNull();
			}
			else if (value instanceof String text) {
				generator.writeString(text);
			}
			else if (value instanceof Boolean flag) {
				generator.writeBoolean(flag);
			}
			else {
				generator.writeNumber(((Number) value).longValue());
			}
		}

		/**
		 * Whether the mapper's writer for {@code type} writes every sample as the
		 * generator alone does.
		 */
		private static boolean writesAsGenerator(JsonMapper mapper, JavaType type) {
			ObjectWriter writer = mapper.writerFor(type);
			try {
				for (Object sample : samples(type.getRawClass())) {
					StringWriter byWriter = new StringWriter();
					StringWriter byGenerator = new StringWriter();
					try (JsonGenerator generator = mapper.createGenerator(byWriter)) {
						generator.writeStartArray();
						writer.writeValue(generator, sample);
						generator.writeEndArray();
					}
					try (JsonGenerator generator = mapper.createGenerator(byGenerator)) {
						generator.writeStartArray();
						writeDirectly(generator, sample);
						generator.writeEndArray();
					}
					if (!byWriter.toString().equals(byGenerator.toString())) {
						return false;
					}
				}
				return true;
			}
			catch (JacksonException | ClassCastException ex) {
				return false;
			}
		}

		/**
		 * @return the arguments, or {@code null} when the JSON is not an array of one
		 * value per parameter
		 */
		Object[] readStreaming(String json) {
			Object[] args = new Object[this.readers.length];
			try (JsonParser parser = this.mapper.createParser(json)) {
				if (parser.nextToken() != JsonToken.START_ARRAY) {
					return null;
				}
				for (int i = 0; i < args.length; i++) {
					JsonToken token = parser.nextToken();
					if (token == null || token == JsonToken.END_ARRAY) {
						return null;
					}
					args[i] = this.readers[i].readValue(parser);
				}
				if (parser.nextToken() != JsonToken.END_ARRAY || parser.nextToken() != null) {
					return null;
				}
				return args;
			}
			catch (JacksonException ex) {
				return null;
			}
		}

		String fingerprint(byte[] payload) {
			MessageDigest digest = sha256.get();
			digest.reset();
			digest.update(this.name);
			digest.update((byte) 0);
			digest.update(payload);
			return HexFormat.of().formatHex(digest.digest());
		}

		/**
		 * Whether values of {@code type} come back from this mapper as they went in: the
		 * type is one JSON carries exactly, and sample values (edge cases a custom
		 * serializer or deserializer would change: blanks, case, escapes, extremes,
		 * {@code null}) write, read back equal, and write again to the same JSON.
		 */
		private static boolean survivesUnchanged(JsonMapper mapper, JavaType type) {
			Class<?> raw = type.getRawClass();
			if (!EXACT_TYPES.contains(raw)) {
				return false;
			}
			ObjectWriter writer = mapper.writerFor(type);
			ObjectReader reader = mapper.readerFor(type);
			try {
				for (Object sample : samples(raw)) {
					String json = writer.writeValueAsString(sample);
					Object back = reader.readValue(json);
					Object throughTree = mapper.treeToValue(mapper.readTree(json), type);
					if (!Objects.equals(sample, back) || !Objects.equals(sample, throughTree)
							|| !json.equals(writer.writeValueAsString(back))) {
						return false;
					}
				}
				return true;
			}
			catch (JacksonException | ClassCastException ex) {
				return false;
			}
		}

		private static List<Object> samples(Class<?> type) {
			boolean primitive = type.isPrimitive();
			List<Object> values = new java.util.ArrayList<>();
			if (type == String.class) {
				values.addAll(List.of("", " ", " padded ", "MiXeD Case é ß ẞ 😀", "line\nbreak\t\"quoted\" \\ / \u2028",
						"\u0001\u001f", "null", "0", "true", "12345678901234567890"));
			}
			else if (type == boolean.class || type == Boolean.class) {
				values.addAll(List.of(true, false));
			}
			else if (type == byte.class || type == Byte.class) {
				values.addAll(List.of((byte) 0, (byte) 1, (byte) -1, Byte.MIN_VALUE, Byte.MAX_VALUE));
			}
			else if (type == short.class || type == Short.class) {
				values.addAll(List.of((short) 0, (short) 1, (short) -1, Short.MIN_VALUE, Short.MAX_VALUE));
			}
			else if (type == int.class || type == Integer.class) {
				values.addAll(List.of(0, 1, -1, 42, Integer.MIN_VALUE, Integer.MAX_VALUE));
			}
			else {
				values.addAll(List.of(0L, 1L, -1L, 42L, Long.MIN_VALUE, Long.MAX_VALUE));
			}
			if (!primitive) {
				values.add(null);
			}
			return values;
		}

	}

}
