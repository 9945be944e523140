package io.ductor.modulith.internal;

import org.springframework.context.ApplicationEvent;
import org.springframework.context.PayloadApplicationEvent;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.NonRetryableEffectException;
import io.ductor.modulith.ModulithPublications;
import tools.jackson.databind.JsonNode;

/**
 * The effect every Modulith publication is an intent of. Called in the publishing
 * transaction, it records the intent; run by the drainer, it calls the listener with the
 * stored event on the drainer's thread, and the listener's outcome is the attempt's.
 */
public class PublicationDelivery {

	private final DuctorListenerFactory listeners;

	private final EventCodec events;

	private final PublishedEvents published;

	public PublicationDelivery(DuctorListenerFactory listeners, EventCodec events, PublishedEvents published) {
		this.listeners = listeners;
		this.events = events;
		this.published = published;
	}

	/**
	 * Delivers one publication.
	 * @param publicationId the publication's identifier, its idempotency key
	 * @param listenerId the listener
	 * @param eventType the event's class name
	 * @param event the event as JSON
	 */
	@DurableEffect(name = ModulithPublications.EFFECT_NAME, key = "#publicationId")
	public void deliver(String publicationId, String listenerId, String eventType, JsonNode event) {
		DuctorListenerAdapter listener = this.listeners.find(listenerId);
		if (listener == null) {
			throw new NonRetryableEffectException("Listener " + listenerId + " does not exist in this application; "
					+ "retry the publication once it is back");
		}
		// the event as published when this application recorded it and this is its first
		// delivery here; otherwise read from its JSON
		Object payload = this.published.take(publicationId);
		if (payload == null) {
			try {
				payload = this.events.read(eventType, event);
			}
			catch (RuntimeException | LinkageError ex) {
				throw new NonRetryableEffectException(
						"Cannot read the stored event of type " + eventType + " for listener " + listenerId + ": " + ex,
						ex);
			}
		}
		listener.deliver((payload instanceof ApplicationEvent applicationEvent) ? applicationEvent
				: new PayloadApplicationEvent<>(this, payload));
	}

}
