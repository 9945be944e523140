package io.ductor.modulith.internal;

import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.modulith.events.core.PublicationTargetIdentifier;
import org.springframework.modulith.events.core.TargetEventPublication;

/**
 * A Modulith publication as Ductor keeps it: one effect intent of
 * {@code modulith.publication}. The event is read from its JSON when first asked for.
 */
final class DuctorEventPublication implements TargetEventPublication {

	private final UUID identifier;

	private final PublicationTargetIdentifier target;

	private final Supplier<Object> eventReader;

	private @Nullable Object event;

	private final Instant publicationDate;

	private @Nullable Instant completionDate;

	private Status status;

	private final @Nullable Instant lastResubmissionDate;

	private final int completionAttempts;

	DuctorEventPublication(UUID identifier, PublicationTargetIdentifier target, Supplier<Object> eventReader,
			Instant publicationDate, @Nullable Instant completionDate, Status status,
			@Nullable Instant lastResubmissionDate, int completionAttempts) {
		this.identifier = identifier;
		this.target = target;
		this.eventReader = eventReader;
		this.publicationDate = publicationDate;
		this.completionDate = completionDate;
		this.status = status;
		this.lastResubmissionDate = lastResubmissionDate;
		this.completionAttempts = completionAttempts;
	}

	/** A publication just recorded, whose event is at hand. */
	static DuctorEventPublication published(UUID identifier, PublicationTargetIdentifier target, Object event,
			Instant publicationDate) {
		DuctorEventPublication publication = new DuctorEventPublication(identifier, target, () -> event,
				publicationDate, null, Status.PUBLISHED, null, 0);
		publication.event = event;
		return publication;
	}

	@Override
	public UUID getIdentifier() {
		return this.identifier;
	}

	@Override
	public synchronized Object getEvent() {
		Object read = this.event;
		if (read == null) {
			read = this.eventReader.get();
			this.event = read;
		}
		return read;
	}

	@Override
	public PublicationTargetIdentifier getTargetIdentifier() {
		return this.target;
	}

	@Override
	public Instant getPublicationDate() {
		return this.publicationDate;
	}

	@Override
	public Optional<Instant> getCompletionDate() {
		return Optional.ofNullable(this.completionDate);
	}

	@Override
	public Status getStatus() {
		return this.status;
	}

	@Override
	public @Nullable Instant getLastResubmissionDate() {
		return this.lastResubmissionDate;
	}

	@Override
	public int getCompletionAttempts() {
		return this.completionAttempts;
	}

	@Override
	public void markCompleted(Instant instant) {
		this.completionDate = instant;
		this.status = Status.COMPLETED;
	}

	@Override
	public String toString() {
		return "DuctorEventPublication[" + this.identifier + " to " + this.target.getValue() + ", " + this.status
				+ ", attempts " + this.completionAttempts + "]";
	}

}
