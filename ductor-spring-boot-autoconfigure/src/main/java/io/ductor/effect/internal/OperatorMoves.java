package io.ductor.effect.internal;

import java.sql.PreparedStatement;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.OperatorDecision;
import io.ductor.internal.DbValues;

/**
 * The moves made on intents from outside the drain: an operator's, of one intent from one
 * status to another or of the parked intents of one effect back to pending in batches;
 * and the cancellation of the intents of a failed run that never ran. An intent an
 * operator runs again is its alarm's live occurrence: the alarm's other live occurrences
 * are superseded in the same statement.
 */
public final class OperatorMoves {

	/**
	 * One batch of the parked intents of one effect that were parked at or before
	 * {@code :asOf} (the start of the operator's call, from the database clock): an
	 * intent the call already moved, or that a drainer touched since, is never in a later
	 * batch of the same call. The literal statuses let even a generic plan read the
	 * parked index.
	 */
	private static final String PARKED_SQL = """
			SELECT id FROM eec_effect_intent
			WHERE effect_name = :name AND queue_status = :from AND queue_status IN %s
			  AND parked_at <= :asOf
			ORDER BY parked_at LIMIT :batch FOR UPDATE SKIP LOCKED""".formatted(IntentStatuses.PARKED_SQL);

	/**
	 * Marks superseded the other live occurrences of the alarms of the intents the
	 * {@code moved} statement put back to pending: an occurrence an operator runs again
	 * is its alarm's live one, as after a reschedule, so another occurrence still running
	 * (or parked) may finish or fail but never returns to pending beside it.
	 */
	private static final String SUPERSEDE_OTHER_OCCURRENCES = """
			, superseded AS (
			    UPDATE eec_effect_intent o SET superseded_at = COALESCE(o.superseded_at, ductor_now())
			    WHERE o.alarm_name = ANY (ARRAY(SELECT m.alarm_name FROM moved m
			                                    WHERE m.alarm_name IS NOT NULL AND m.status = 'pending'))
			      AND o.queue_status IN %s
			      AND o.id <> ALL (ARRAY(SELECT m.id FROM moved m))
			    RETURNING o.id)
			""".formatted(IntentStatuses.STARTED_SQL);

	/**
	 * Moves the parked intents whose ids {@code %s} gives back to pending, superseding
	 * the other live occurrences of their alarms; selects the ids moved.
	 */
	private static final String RETRY_UPDATE_SQL = """
			WITH moved AS (
			    UPDATE eec_effect_intent
			    SET status = 'pending', next_attempt_at = ductor_now(), updated_at = ductor_now(), finished_at = NULL,
			        max_attempts = attempts + :budget, superseded_at = NULL,
			        last_error = COALESCE(last_error, '') || ' (retried in bulk)'
			    WHERE id = ANY (%s) AND status IN """ + IntentStatuses.PARKED_SQL + """
			RETURNING id, alarm_name, status)""" + SUPERSEDE_OTHER_OCCURRENCES + "SELECT id FROM moved";

	/** Moves one batch of parked intents of one effect back to pending. */
	public static final String RETRY_BATCH_SQL = RETRY_UPDATE_SQL.formatted("ARRAY(" + PARKED_SQL + ")");

	private final JdbcTemplate template;

	private final JdbcClient jdbc;

	public OperatorMoves(DataSource dataSource) {
		this.template = new JdbcTemplate(dataSource);
		this.jdbc = JdbcClient.create(this.template);
	}

	/**
	 * Moves an intent from one of {@code from} to {@code to} in one conditional update.
	 * An intent moved to pending is no longer superseded: an operator chose to run it;
	 * the other live occurrences of its alarm, if it is an alarm occurrence, are
	 * superseded by it in the same statement. The {@code note} (what the operator did and
	 * why) is kept in {@code last_error}, the column that holds the last attempt's error
	 * or the note on the intent's last move.
	 * @return the updated intent, or empty when it was not in one of {@code from}
	 */
	public Optional<EffectIntent> transition(long id, List<EffectStatus> from, EffectStatus to, String note,
			Integer maxAttempts, OperatorDecision decision) {
		return this.jdbc
			.sql("""
					WITH moved AS (
					    UPDATE eec_effect_intent
					    SET status = :to, last_error = COALESCE(:note, last_error), updated_at = ductor_now(),
					        next_attempt_at = CASE WHEN :to = 'pending' THEN ductor_now() ELSE next_attempt_at END,
					        max_attempts = COALESCE(:maxAttempts, max_attempts), lease_owner = NULL, lease_expires_at = NULL,
					        superseded_at = CASE WHEN :to = 'pending' THEN NULL ELSE superseded_at END,
					        finished_at = CASE WHEN :ended THEN ductor_now() END,
					        decision_reason = CASE WHEN :decided THEN :reason ELSE decision_reason END,
					        decided_by = CASE WHEN :decided THEN :decidedBy ELSE decided_by END,
					        decided_at = CASE WHEN :decided THEN ductor_now() ELSE decided_at END
					    WHERE id = :id AND status IN (:from)
					    RETURNING\s"""
					+ IntentReads.COLUMNS + ")" + SUPERSEDE_OTHER_OCCURRENCES + "SELECT * FROM moved")
			.param("id", id)
			.param("to", DbValues.of(to))
			.param("ended", IntentStatuses.ENDED.contains(to))
			.param("from", from.stream().map(DbValues::of).toList())
			.param("note", note)
			.param("maxAttempts", maxAttempts)
			.param("decided", decision != null)
			.param("reason", (decision != null) ? decision.reason() : null)
			.param("decidedBy", (decision != null) ? decision.by() : null)
			.query(IntentReads::intent)
			.optional();
	}

	/**
	 * Moves one batch of an effect's intents from {@code from} back to {@code pending},
	 * each with {@code budget} more attempts: only intents parked at or before
	 * {@code asOf} and untouched since. When one of them breaks a constraint (an alarm
	 * occurrence whose alarm has a pending occurrence), the batch is moved again intent
	 * by intent, and the offender stays parked with the reason.
	 * @return how many moved
	 */
	public int retryBatch(String effectName, EffectStatus from, int budget, int batchSize, OffsetDateTime asOf) {
		try {
			return this.jdbc.sql(RETRY_BATCH_SQL)
				.param("name", effectName)
				.param("from", DbValues.of(from))
				.param("asOf", asOf)
				.param("budget", budget)
				.param("batch", batchSize)
				.query(Long.class)
				.list()
				.size();
		}
		catch (RuntimeException ex) {
			if (BatchFaults.rowFault(ex) == null) {
				throw ex;
			}
		}
		String retryOne = RETRY_UPDATE_SQL.formatted("ARRAY[:id]::bigint[]");
		return BatchFaults.rowByRow(this.template, PARKED_SQL,
				Map.of("name", effectName, "from", DbValues.of(from), "asOf", asOf, "batch", batchSize),
				(connection, id) -> {
					try (PreparedStatement statement = BatchFaults.prepare(connection, retryOne,
							Map.of("budget", budget, "id", id))) {
						return BatchFaults.ids(statement);
					}
				}, (connection, id, fault) -> {
					// stays parked, with the reason; touched now, so no later batch of
					// this
					// call takes it again
					try (PreparedStatement statement = BatchFaults.prepare(connection, """
							UPDATE eec_effect_intent SET updated_at = ductor_now(),
							    last_error = COALESCE(last_error || '; ', '') || 'not retried in bulk: ' || :fault
							WHERE id = :id""", Map.of("fault", fault, "id", id))) {
						statement.executeUpdate();
					}
					return List.<Long>of();
				})
			.size();
	}

	/**
	 * Cancels, in the caller's transaction, the intents of the run {@code runId} that
	 * registered a compensation and never had an attempt: an effect that never ran has
	 * nothing to compensate.
	 */
	void cancelNeverStarted(String runId) {
		this.jdbc.sql("""
				UPDATE eec_effect_intent i
				SET status = 'cancelled', updated_at = ductor_now(), finished_at = ductor_now(),
				    last_error = 'cancelled before its first attempt: run ' || c.run_id
				        || ' failed, and an effect that never ran has nothing to compensate'
				FROM eec_run_compensation c
				WHERE c.run_id = :run AND i.idempotency_key = c.original_key
				  AND i.status = 'pending' AND i.attempts = 0""").param("run", runId).update();
	}

}
