package io.ductor.amqp.internal;

import java.util.Arrays;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import io.ductor.amqp.DurableRabbit;
import io.ductor.amqp.RabbitMessage;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.json.JsonConversionException;

/**
 * Records a message as an intent of {@link RabbitRelay#send}, its body written as JSON
 * text once, at the call: the relay sends those bytes exactly (a JSON tree read back
 * would turn {@code 19.90} into {@code 19.9}).
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
		String body;
		try {
			body = this.mapper.writeValueAsString(message.payload());
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
