package io.ductor.modulith.internal;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.EnumSet;
import java.util.List;
import java.util.UUID;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.EventPublication.Status;
import org.springframework.modulith.events.core.PublicationTargetIdentifier;

import io.ductor.effect.EffectStatus;
import io.ductor.effect.internal.IntentStatuses;
import io.ductor.modulith.ModulithPublications;

/**
 * Reads and moves the intents of {@code modulith.publication} for Modulith's publication
 * API. The intent's payload is the JSON array of the effect's arguments: publication id,
 * listener id, event type, event. Ductor's statuses map onto Modulith's: {@code pending}
 * before any attempt is {@code PUBLISHED}, {@code pending} after one is
 * {@code RESUBMITTED} (waiting for its retry), {@code in_flight} and {@code reconciling}
 * are {@code PROCESSING}, {@code failed} and {@code needs_decision} are {@code FAILED},
 * {@code completed} is {@code COMPLETED}; a {@code cancelled} publication is neither
 * incomplete nor completed.
 */
public class PublicationStore {

	static final String INCOMPLETE = IntentStatuses.LIVE_SQL;

	/** Run now, or waiting for its reconciler: {@code PROCESSING} for Spring Modulith. */
	private static final String PROCESSING = IntentStatuses
		.sql(EnumSet.of(EffectStatus.IN_FLIGHT, EffectStatus.RECONCILING));

	private static final String COLUMNS = """
			SELECT id, idempotency_key, status, attempts, created_at, updated_at, finished_at,
			       payload->>1 AS listener_id, payload->>2 AS event_type, (payload->3)::text AS event
			FROM eec_effect_intent
			WHERE effect_name = '%s' AND """.formatted(ModulithPublications.EFFECT_NAME) + " ";

	private final JdbcClient jdbc;

	private final EventCodec events;

	public PublicationStore(DataSource dataSource, EventCodec events) {
		this.jdbc = JdbcClient.create(dataSource);
		this.events = events;
	}

	/**
	 * Publications not completed (nor cancelled), oldest first, published before now
	 * minus {@code olderThan} when given.
	 */
	List<Row> incomplete(@Nullable Duration olderThan) {
		return this.jdbc
			.sql(COLUMNS + "status IN " + INCOMPLETE
					+ " AND created_at < ductor_now() - :ms * interval '1 millisecond' ORDER BY id")
			.param("ms", (olderThan != null) ? olderThan.toMillis() : -1L)
			.query(this::row)
			.list();
	}

	/** Completed publications, oldest first. */
	List<Row> completed() {
		return this.jdbc.sql(COLUMNS + "status = 'completed' ORDER BY id").query(this::row).list();
	}

	/**
	 * Failed publications published before now minus {@code minAge}, oldest first, at
	 * most {@code limit} (-1: all).
	 */
	List<Row> failed(Duration minAge, long limit) {
		return this.jdbc
			.sql(COLUMNS + "status IN " + IntentStatuses.PARKED_SQL
					+ " AND created_at < ductor_now() - :ms * interval '1 millisecond' ORDER BY id"
					+ ((limit >= 0) ? " LIMIT " + limit : ""))
			.param("ms", minAge.toMillis())
			.query(this::row)
			.list();
	}

	/** Publications being retried or run now. */
	int inFlight() {
		return this.jdbc.sql("""
				SELECT count(*) FROM eec_effect_intent
				WHERE effect_name = :effect
				  AND (status IN %s OR (status = 'pending' AND attempts > 0))""".formatted(PROCESSING))
			.param("effect", ModulithPublications.EFFECT_NAME)
			.query(Integer.class)
			.single();
	}

	/**
	 * A pending publication waiting for its retry becomes due now.
	 * @return whether it was pending
	 */
	boolean dueNow(long intentId) {
		return this.jdbc.sql("""
				UPDATE eec_effect_intent SET next_attempt_at = ductor_now(), updated_at = ductor_now()
				WHERE id = :id AND status = 'pending'""").param("id", intentId).update() == 1;
	}

	/** Deletes completed publications by identifier. */
	void deleteCompleted(List<UUID> identifiers) {
		if (identifiers.isEmpty()) {
			return;
		}
		this.jdbc.sql("""
				DELETE FROM eec_effect_intent
				WHERE effect_name = :effect AND status = 'completed' AND idempotency_key IN (:keys)""")
			.param("effect", ModulithPublications.EFFECT_NAME)
			.param("keys", identifiers.stream().map(UUID::toString).toList())
			.update();
	}

	/** Deletes publications completed before now minus {@code age}. */
	void deleteCompletedOlderThan(Duration age) {
		this.jdbc.sql("""
				DELETE FROM eec_effect_intent
				WHERE effect_name = :effect AND status = 'completed'
				  AND finished_at < ductor_now() - :ms * interval '1 millisecond'""")
			.param("effect", ModulithPublications.EFFECT_NAME)
			.param("ms", age.toMillis())
			.update();
	}

	/**
	 * Fails the publications of a waiting status published before now minus
	 * {@code staleness}. A publication being run holds a lease and is never touched:
	 * failing it would let a retry run beside the running attempt.
	 * @return how many were failed
	 */
	int failStale(Status status, Duration staleness) {
		String condition = switch (status) {
			case PUBLISHED -> "status = 'pending' AND attempts = 0";
			case RESUBMITTED -> "status = 'pending' AND attempts > 0";
			default -> null;
		};
		if (condition == null) {
			return 0;
		}
		return this.jdbc.sql("""
				UPDATE eec_effect_intent
				SET status = 'failed', finished_at = ductor_now(), updated_at = ductor_now(),
				    last_error = 'Stale: not completed within ' || :staleness
				        || ' of its publication (spring.modulith.events.staleness.*)'
				WHERE effect_name = :effect AND %s
				  AND created_at < ductor_now() - :ms * interval '1 millisecond'""".formatted(condition))
			.param("staleness", staleness.toString())
			.param("effect", ModulithPublications.EFFECT_NAME)
			.param("ms", staleness.toMillis())
			.update();
	}

	private Row row(ResultSet rs, int rowNum) throws SQLException {
		String status = rs.getString("status");
		int attempts = rs.getInt("attempts");
		String eventType = rs.getString("event_type");
		String eventJson = rs.getString("event");
		OffsetDateTime finished = rs.getObject("finished_at", OffsetDateTime.class);
		OffsetDateTime updated = rs.getObject("updated_at", OffsetDateTime.class);
		DuctorEventPublication publication = new DuctorEventPublication(
				UUID.fromString(rs.getString("idempotency_key")),
				PublicationTargetIdentifier.of(rs.getString("listener_id")),
				() -> this.events.read(eventType, eventJson),
				rs.getObject("created_at", OffsetDateTime.class).toInstant(),
				("completed".equals(status) && finished != null) ? finished.toInstant() : null,
				modulithStatus(status, attempts), (attempts > 1 && updated != null) ? updated.toInstant() : null,
				attempts);
		return new Row(rs.getLong("id"), status, publication);
	}

	static Status modulithStatus(String status, int attempts) {
		return switch (status) {
			case "completed" -> Status.COMPLETED;
			case "in_flight", "reconciling" -> Status.PROCESSING;
			case "failed", "needs_decision", "cancelled" -> Status.FAILED;
			default -> (attempts == 0) ? Status.PUBLISHED : Status.RESUBMITTED;
		};
	}

	/** A publication and the intent that holds it. */
	record Row(long intentId, String intentStatus, DuctorEventPublication publication) {
	}

}
