package io.ductor.amqp.internal;

import java.util.Arrays;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.ductor.amqp.DurableRabbit;
import io.ductor.amqp.RabbitMessage;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.json.JsonConversionException;

/**
 * Records a message as an intent of {@link RabbitRelay#send}: the body as a JSON tree, so
 * the console and the endpoint show it as sent.
 */
public class DefaultDurableRabbit implements DurableRabbit {

	private final EffectOutbox outbox;

	private final JsonMapper mapper;

	public DefaultDurableRabbit(EffectOutbox outbox, JsonMapper mapper) {
		this.outbox = outbox;
		this.mapper = mapper;
	}

	@Override
	public String send(RabbitMessage message) {
		JsonNode body;
		try {
			body = this.mapper.valueToTree(message.payload());
		}
		catch (JacksonException ex) {
			throw new JsonConversionException("Cannot write the payload of a message to exchange '" + message.exchange()
					+ "' with routing key '" + message.routingKey() + "' as JSON: " + ex.getOriginalMessage(), ex);
		}
		EffectRequest request = new EffectRequest(EFFECT,
				Arrays.asList(message.exchange(), message.routingKey(), message.headers(), body), message.key(),
				RabbitRelay.orderingKey(message.exchange(), message.routingKey()), null);
		return this.outbox.schedule(request);
	}

}
