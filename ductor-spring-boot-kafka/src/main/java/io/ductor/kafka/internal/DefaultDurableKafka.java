package io.ductor.kafka.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.ductor.effect.DurableEffectException;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.internal.Ids;
import io.ductor.kafka.DurableKafka;
import io.ductor.messaging.DuctorMessageHeaders;

/**
 * Records messages as intents of the relay effect, with the ordering key
 * {@code kafka:<topic>:<key>}.
 */
public class DefaultDurableKafka implements DurableKafka {

	private final EffectOutbox outbox;

	private final JsonMapper mapper;

	public DefaultDurableKafka(EffectOutbox outbox, JsonMapper mapper) {
		this.outbox = outbox;
		this.mapper = mapper;
	}

	@Override
	public String send(String topic, @Nullable String key, Object payload, Map<String, String> headers) {
		return this.outbox.schedule(request(topic, key, payload, headers));
	}

	@Override
	public String send(String idempotencyKey, String topic, @Nullable String key, Object payload,
			Map<String, String> headers) {
		Ids.require("idempotencyKey", idempotencyKey);
		IdempotentRequest.checkKey(idempotencyKey);
		return this.outbox.schedule(request(topic, key, payload, headers).withKey(idempotencyKey));
	}

	private EffectRequest request(String topic, @Nullable String key, Object payload, Map<String, String> headers) {
		Objects.requireNonNull(topic, "topic must not be null");
		if (topic.isBlank()) {
			throw new IllegalArgumentException("topic must not be blank");
		}
		try {
			Topic.validate(topic);
		}
		catch (InvalidTopicException ex) {
			// refused now: committed, no attempt could ever send it
			throw new IllegalArgumentException("'" + topic + "' is not a Kafka topic name: " + ex.getMessage(), ex);
		}
		Objects.requireNonNull(payload, "payload must not be null");
		Objects.requireNonNull(headers, "headers must not be null");
		if (headers.keySet().stream().anyMatch(DuctorMessageHeaders.IDEMPOTENCY_KEY::equalsIgnoreCase)) {
			throw new IllegalArgumentException("The header " + DuctorMessageHeaders.IDEMPOTENCY_KEY
					+ " is set by Ductor to the message's idempotency key; pass the key with "
					+ "send(idempotencyKey, ..) instead");
		}
		JsonNode json;
		try {
			json = this.mapper.valueToTree(payload);
		}
		catch (JacksonException ex) {
			throw new DurableEffectException("The payload of a message to topic '" + topic + "' ("
					+ payload.getClass().getName() + ") cannot be written as JSON: " + ex.getOriginalMessage(), ex);
		}
		EffectRequest request = EffectRequest.of(EFFECT_NAME, topic, key, json, new LinkedHashMap<>(headers));
		return (key != null) ? request.withOrderingKey(orderingKey(topic, key)) : request;
	}

	/**
	 * The ordering key of a record key on a topic: the same for the same pair, at most
	 * 200 characters.
	 * @param topic the topic
	 * @param key the record key
	 * @return the ordering key
	 */
	static String orderingKey(String topic, String key) {
		String plain = "kafka:" + topic + ":" + key;
		try {
			return Ids.require("orderingKey", plain);
		}
		catch (IllegalArgumentException ex) {
			try {
				byte[] digest = MessageDigest.getInstance("SHA-256").digest(plain.getBytes(StandardCharsets.UTF_8));
				return "kafka:" + ((topic.length() <= 100) ? topic : topic.substring(0, 100)) + ":sha256:"
						+ HexFormat.of().formatHex(digest);
			}
			catch (NoSuchAlgorithmException impossible) {
				throw new IllegalStateException(impossible);
			}
		}
	}

}
