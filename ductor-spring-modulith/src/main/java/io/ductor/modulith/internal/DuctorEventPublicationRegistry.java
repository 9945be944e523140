package io.ductor.modulith.internal;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.modulith.events.CompletedEventPublications;
import org.springframework.modulith.events.EventPublication;
import org.springframework.modulith.events.EventPublication.Status;
import org.springframework.modulith.events.ResubmissionOptions;
import org.springframework.modulith.events.core.EventPublicationRegistry;
import org.springframework.modulith.events.core.PublicationTargetIdentifier;
import org.springframework.modulith.events.core.Staleness;
import org.springframework.modulith.events.core.TargetEventPublication;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.ductor.effect.EffectIntentStateException;
import io.ductor.effect.EffectOperations;

/**
 * Modulith's publication registry on Ductor. A publication is recorded, in the publishing
 * transaction, as an intent of {@code modulith.publication} whose key is the
 * publication's identifier; Ductor's drainer runs the listener after the commit and
 * records every outcome (so the completion callbacks of Modulith's advice change nothing
 * here). Resubmitting makes publications due now and leaves running them to the drainer:
 * one invoker, under a lease, whoever asks.
 */
public class DuctorEventPublicationRegistry implements EventPublicationRegistry, CompletedEventPublications {

	private static final Logger logger = LoggerFactory.getLogger(DuctorEventPublicationRegistry.class);

	private final DuctorListenerFactory listeners;

	private final PublicationDelivery delivery;

	private final EventCodec events;

	private final PublicationStore store;

	private final EffectOperations operations;

	private final Clock clock;

	private final PublishedEvents published;

	private final Set<String> notRun = ConcurrentHashMap.newKeySet();

	public DuctorEventPublicationRegistry(DuctorListenerFactory listeners, PublicationDelivery delivery,
			EventCodec events, PublicationStore store, EffectOperations operations, Clock clock,
			PublishedEvents published) {
		this.listeners = listeners;
		this.delivery = delivery;
		this.events = events;
		this.store = store;
		this.operations = operations;
		this.clock = clock;
		this.published = published;
	}

	/**
	 * Records one intent per listener that Ductor runs, in the caller's transaction. With
	 * no transaction nothing is recorded: Spring then runs (or skips) the after-commit
	 * listeners as it always does.
	 */
	@Override
	public Collection<TargetEventPublication> store(Object event, Stream<PublicationTargetIdentifier> listeners) {
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			return List.of();
		}
		List<TargetEventPublication> publications = new ArrayList<>();
		String eventType = event.getClass().getName();
		tools.jackson.databind.JsonNode json = null;
		for (PublicationTargetIdentifier target : listeners.toList()) {
			String listenerId = target.getValue();
			if (!this.listeners.runs(listenerId)) {
				if (this.notRun.add(listenerId)) {
					logger.warn(
							"Listener {} was not created from a @TransactionalEventListener method, so Ductor "
									+ "neither records nor runs its publications; Spring runs it after the commit",
							listenerId);
				}
				continue;
			}
			if (json == null) {
				json = this.events.write(event);
			}
			UUID identifier = UUID.randomUUID();
			this.delivery.deliver(identifier.toString(), listenerId, eventType, json);
			this.published.keep(identifier.toString(), event);
			RecordedPublications.mark(event, listenerId);
			publications.add(DuctorEventPublication.published(identifier, target, event, this.clock.instant()));
		}
		return publications;
	}

	@Override
	public Collection<TargetEventPublication> findIncompletePublications() {
		return publications(this.store.incomplete(null));
	}

	@Override
	public Collection<TargetEventPublication> findIncompletePublicationsOlderThan(Duration duration) {
		return publications(this.store.incomplete(duration));
	}

	/** The drainer records the outcome of every attempt it runs. */
	@Override
	public void markProcessing(Object event, PublicationTargetIdentifier identifier) {
	}

	/** The drainer records the outcome of every attempt it runs. */
	@Override
	public void markCompleted(Object event, PublicationTargetIdentifier targetIdentifier) {
	}

	/** The drainer records the outcome of every attempt it runs. */
	@Override
	public void markFailed(Object event, PublicationTargetIdentifier targetIdentifier) {
	}

	@Override
	public void deleteCompletedPublicationsOlderThan(Duration duration) {
		this.store.deleteCompletedOlderThan(duration);
	}

	/**
	 * Makes the incomplete publications that {@code filter} admits due now: waiting ones
	 * at once, failed ones with a fresh budget of attempts. Running ones are left to
	 * their attempt. The drainer runs them; {@code consumer} is not called.
	 */
	@Override
	public void processIncompletePublications(Predicate<EventPublication> filter,
			Consumer<TargetEventPublication> consumer, @Nullable Duration duration) {
		resubmit(this.store.incomplete(duration), filter);
	}

	/**
	 * Makes failed publications due again with a fresh budget of attempts, as
	 * {@code options} bound them. The drainer runs them; {@code consumer} is not called.
	 */
	@Override
	public void processFailedPublications(ResubmissionOptions options, Consumer<TargetEventPublication> consumer) {
		int running = this.store.inFlight();
		if (running >= options.getMaxInFlight()) {
			logger.info("Not resubmitting: {} publications are being retried or run, at most {} at once", running,
					options.getMaxInFlight());
			return;
		}
		long limit = Math.min(options.getBatchSize(), options.getMaxInFlight() - running);
		resubmit(this.store.failed(options.getMinAge(), limit), options.getFilter());
	}

	/**
	 * Fails the waiting publications ({@code PUBLISHED}, {@code RESUBMITTED}) older than
	 * their staleness. Running ones hold a lease and are left alone.
	 */
	@Override
	public void markStalePublicationsFailed(Staleness staleness) {
		for (Status status : List.of(Status.PUBLISHED, Status.RESUBMITTED)) {
			Duration duration = staleness.getStaleness(status);
			if (duration == null || duration.isZero() || duration.isNegative()) {
				continue;
			}
			int failed = this.store.failStale(status, duration);
			if (failed > 0) {
				logger.info("Marked {} stale publication(s) of status {} older than {} failed", failed, status,
						duration);
			}
		}
	}

	@Override
	public Collection<? extends TargetEventPublication> findAll() {
		return publications(this.store.completed());
	}

	@Override
	public void deletePublications(Predicate<EventPublication> filter) {
		this.store.deleteCompleted(this.store.completed()
			.stream()
			.map(PublicationStore.Row::publication)
			.filter(filter)
			.map(TargetEventPublication::getIdentifier)
			.toList());
	}

	@Override
	public void deletePublicationsOlderThan(Duration duration) {
		this.store.deleteCompletedOlderThan(duration);
	}

	private void resubmit(List<PublicationStore.Row> rows, Predicate<EventPublication> filter) {
		for (PublicationStore.Row row : rows) {
			if (!filter.test(row.publication())) {
				continue;
			}
			switch (row.intentStatus()) {
				case "pending" -> this.store.dueNow(row.intentId());
				case "failed", "needs_decision" -> {
					try {
						this.operations.retry(row.intentId());
					}
					catch (EffectIntentStateException ex) {
						// moved meanwhile (retried by an operator, completed): nothing to
						// do
					}
				}
				default -> {
					// running under a lease: its attempt decides
				}
			}
		}
	}

	private static List<TargetEventPublication> publications(List<PublicationStore.Row> rows) {
		return rows.stream().map((row) -> (TargetEventPublication) row.publication()).toList();
	}

}
