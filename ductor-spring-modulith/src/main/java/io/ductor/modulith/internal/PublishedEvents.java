package io.ductor.modulith.internal;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The events just published, by publication, so that the first delivery in this
 * application hands the listener the published event itself, as Modulith's registries do;
 * a retry, or a delivery by another instance, reads it from its JSON. At most
 * {@value #CAPACITY} are kept (the oldest are dropped first); a publication whose
 * transaction does not commit is forgotten at once.
 */
public class PublishedEvents {

	static final int CAPACITY = 10_000;

	private final Map<String, Object> events = Collections.synchronizedMap(new LinkedHashMap<>() {

		@Override
		protected boolean removeEldestEntry(Map.Entry<String, Object> eldest) {
			return size() > CAPACITY;
		}

	});

	/**
	 * Keeps the event of a publication recorded in the current transaction.
	 * @param publicationId the publication
	 * @param event the event as published
	 */
	void keep(String publicationId, Object event) {
		this.events.put(publicationId, event);
		TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
			@Override
			public void afterCompletion(int status) {
				if (status != STATUS_COMMITTED) {
					PublishedEvents.this.events.remove(publicationId);
				}
			}
		});
	}

	/**
	 * @param publicationId a publication
	 * @return its event as published, once, or {@code null} when it is not kept here
	 */
	@Nullable Object take(String publicationId) {
		return this.events.remove(publicationId);
	}

}
