package io.ductor.effect.internal;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.deser.std.StdDeserializer;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.databind.ser.std.StdSerializer;

import io.ductor.effect.DurableEffectException;
import io.ductor.effect.Receiver;
import io.ductor.effect.TestEffects.Item;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What {@link EffectPayloads} prepares once per effect changes nothing a caller or a
 * stored row can see: the same JSON and fingerprint as before, the same refusals, the
 * same reading.
 */
class EffectPayloadsTest {

	static final JsonMapper mapper = JsonMapper.builder().build();

	/** The effect methods the definitions below are made of. */
	public static class Methods {

		public void handle(long seq, String kind, String body) {
		}

		public void boxed(Long count, Integer size, Boolean flag, Short small, Byte tiny) {
		}

		public void items(String order, List<Item> items) {
		}

		public void text(String text) {
		}

	}

	static EffectDefinition definition(JsonMapper mapper, String name, String methodName) {
		Method method = Arrays.stream(Methods.class.getMethods())
			.filter((candidate) -> candidate.getName().equals(methodName))
			.findFirst()
			.orElseThrow();
		List<JavaType> types = new ArrayList<>();
		for (Type type : method.getGenericParameterTypes()) {
			types.add(mapper.getTypeFactory().constructType(type));
		}
		return new EffectDefinition(name, "methods", method, List.copyOf(types), null, null, Duration.ZERO,
				Receiver.IDEMPOTENT, 3, null, List.of(), null, 0);
	}

	@Test
	void aPayloadIsTheJsonArrayAndFingerprintOfEveryEarlierRelease() {
		EffectPayloads payloads = new EffectPayloads(mapper, 1 << 20);
		EffectDefinition handle = definition(mapper, "bench.handle", "handle");
		Object[] args = { 42L, "peerbench", "parcel 42 packed for courier, two boxes" };

		EffectPayloads.Payload payload = payloads.encode(handle, args);

		assertThat(payload.json()).isEqualTo(mapper.writeValueAsString(Arrays.asList(args)));
		// stored rows carry this fingerprint: a replay after an upgrade must compute the
		// same one
		assertThat(payload.fingerprint()).isEqualTo(EffectPayloads.fingerprint("bench.handle", payload.json()));
		assertThat(payloads.encode(handle, args)).isEqualTo(payload);
		assertThat(payloads.encode(handle, new Object[] { 43L, "peerbench", "x" }).fingerprint())
			.isNotEqualTo(payload.fingerprint());
	}

	@Test
	void effectsOfStringsBooleansAndIntegersSkipTheRoundTripCheckOnlyWhileTheMapperKeepsThemUnchanged() {
		EffectPayloads plain = new EffectPayloads(mapper, 1 << 20);
		assertThat(plain.isExact(definition(mapper, "handle", "handle"))).isTrue();
		assertThat(plain.isExact(definition(mapper, "boxed", "boxed"))).isTrue();
		assertThat(plain.isExact(definition(mapper, "items", "items"))).isFalse();

		JsonMapper trimming = JsonMapper.builder()
			.addModule(new SimpleModule().addDeserializer(String.class, new StdDeserializer<String>(String.class) {

				@Override
				public String deserialize(JsonParser parser, DeserializationContext context) {
					return parser.getValueAsString().trim();
				}

			}))
			.build();
		EffectPayloads trimmed = new EffectPayloads(trimming, 1 << 20);
		EffectDefinition text = definition(trimming, "text", "text");

		assertThat(trimmed.isExact(text)).isFalse();
		assertThatThrownBy(() -> trimmed.encode(text, new Object[] { " padded " }))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("The arguments of effect 'text' do not survive a JSON round trip")
			.hasMessageContaining("stored [\" padded \"] but read back [\"padded\"]");
	}

	@Test
	void aSerializerTheApplicationRegisteredForAStringIsStillTheOneThatWritesIt() {
		JsonMapper shouting = JsonMapper.builder()
			.addModule(new SimpleModule().addSerializer(String.class, new StdSerializer<String>(String.class) {

				@Override
				public void serialize(String value, JsonGenerator generator, SerializationContext context) {
					generator.writeString(value.toUpperCase(java.util.Locale.ROOT));
				}

			}))
			.build();
		EffectPayloads payloads = new EffectPayloads(shouting, 1 << 20);
		EffectDefinition text = definition(shouting, "text", "text");

		assertThat(payloads.isExact(text)).isFalse();
		assertThat(payloads.write(text, new Object[] { "quiet" })).isEqualTo("[\"QUIET\"]");
	}

	@Test
	void nullArgumentsAreStoredAndReadBackAsNull() {
		EffectPayloads payloads = new EffectPayloads(mapper, 1 << 20);
		EffectDefinition boxed = definition(mapper, "boxed", "boxed");

		String json = payloads.write(boxed, new Object[] { null, null, null, null, null });

		assertThat(json).isEqualTo("[null,null,null,null,null]");
		assertThat(payloads.read(boxed, json)).containsExactly(null, null, null, null, null);
		assertThat(payloads.read(boxed, "[1,2,true,3,4]")).containsExactly(1L, 2, true, (short) 3, (byte) 4);
	}

	@Test
	void storedArgumentsThatDoNotFitTheMethodGetTheMessagesTheyAlwaysGot() {
		EffectPayloads payloads = new EffectPayloads(mapper, 1 << 20);
		EffectDefinition handle = definition(mapper, "handle", "handle");

		assertThat(payloads.read(handle, "[7, \"k\", \"b\"]")).containsExactly(7L, "k", "b");
		assertThatThrownBy(() -> payloads.read(handle, "[7]")).isInstanceOf(DurableEffectException.class)
			.hasMessage("The stored arguments of effect 'handle' are [7] but the method takes 3 argument(s)");
		assertThatThrownBy(() -> payloads.read(handle, "[7, \"k\", \"b\", 8]"))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("but the method takes 3 argument(s)");
		assertThatThrownBy(() -> payloads.read(handle, "{\"seq\": 7}")).isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("but the method takes 3 argument(s)");
		assertThatThrownBy(() -> payloads.read(handle, "[\"seven\", \"k\", \"b\"]"))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("Cannot read the stored arguments of effect 'handle' into");
	}

	@Test
	void theWrongNumberOfArgumentsAndOversizedPayloadsAreStillRefused() {
		EffectPayloads payloads = new EffectPayloads(mapper, 64);
		EffectDefinition handle = definition(mapper, "handle", "handle");

		assertThatThrownBy(() -> payloads.encode(handle, new Object[] { 1L }))
			.isInstanceOf(DurableEffectException.class)
			.hasMessage("Effect 'handle' takes 3 argument(s) but was given 1");
		assertThatThrownBy(() -> payloads.encode(handle, new Object[] { 1L, "k", "é".repeat(40) }))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("bytes as JSON, more than ductor.effects.max-payload-size (64 bytes)");
	}

}
