package io.ductor.effect.internal;

import java.time.Instant;
import java.util.Optional;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.RecurringAlarm;

/**
 * The statements on the intents that are occurrences of recurring alarms, in the caller's
 * transaction: superseding an alarm's live occurrences when it is rescheduled or
 * cancelled, finding its pending occurrence, and forgetting its finished occurrences
 * after now when a test restarts the alarms. The alarms themselves are
 * {@link RecurringAlarmStore}'s.
 */
public final class AlarmOccurrences {

	/**
	 * Supersedes the live occurrences of one alarm, found through the alarm's live index:
	 * the pending one is cancelled, the others are marked.
	 */
	public static final String SUPERSEDE_ALARM_SQL = """
			UPDATE eec_effect_intent
			SET status = CASE WHEN status = 'pending' THEN 'cancelled' ELSE status END,
			    superseded_at = COALESCE(superseded_at, ductor_now()),
			    last_error = CASE WHEN status = 'pending' THEN 'superseded by a rescheduled occurrence' ELSE last_error END,
			    updated_at = CASE WHEN status = 'pending' THEN ductor_now() ELSE updated_at END,
			    finished_at = CASE WHEN status = 'pending' THEN ductor_now() ELSE finished_at END
			WHERE alarm_name = :alarm AND queue_status IN %s
			RETURNING status"""
		.formatted(IntentStatuses.LIVE_SQL);

	private final JdbcClient jdbc;

	public AlarmOccurrences(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/**
	 * Supersedes the occurrences of an alarm, in the caller's transaction (which holds
	 * the alarm's lock): the pending one is cancelled; one that runs or is parked is
	 * marked superseded, under a row lock held until the caller commits, so that its
	 * outcome, a redrive or a retry racing with this transaction waits for it and then
	 * cannot put it back to pending beside the newer occurrence.
	 * @return how many pending occurrences were cancelled
	 */
	public int supersedeAlarm(String alarmName) {
		return (int) this.jdbc.sql(SUPERSEDE_ALARM_SQL)
			.param("alarm", alarmName)
			.query(String.class)
			.list()
			.stream()
			.filter("cancelled"::equals)
			.count();
	}

	/**
	 * @return the pending occurrence of an alarm, if it has one
	 */
	public Optional<EffectIntent> pendingOccurrence(String alarmName) {
		return this.jdbc
			.sql("SELECT " + IntentReads.COLUMNS
					+ " FROM eec_effect_intent WHERE alarm_name = :alarm AND queue_status = 'pending'")
			.param("alarm", alarmName)
			.query(IntentReads::intent)
			.optional();
	}

	/**
	 * Deletes the finished intents of the alarm's occurrences after now (recorded while
	 * an earlier test's clock stood later), so that those instants can be recorded again.
	 * @return how many intents were deleted
	 */
	int forgetFinishedAfterNow(String name) {
		String epoch = RecurringAlarm.occurrenceKey(name, Instant.EPOCH);
		String prefix = epoch.substring(0, epoch.length() - Instant.EPOCH.toString().length());
		// the keys that start with the prefix, by the unique index (keys compare
		// bytewise)
		String upper = prefix.substring(0, prefix.length() - 1) + (char) (prefix.charAt(prefix.length() - 1) + 1);
		return this.jdbc
			.sql("""
					DELETE FROM eec_effect_intent
					WHERE idempotency_key >= :prefix AND idempotency_key < :upper AND status IN %s
					  AND CASE WHEN substr(idempotency_key, :from) ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$'
					      THEN substr(idempotency_key, :from)::timestamptz END > ductor_now()"""
				.formatted(IntentStatuses.FINISHED_SQL))
			.param("prefix", prefix)
			.param("upper", upper)
			.param("from", prefix.length() + 1)
			.update();
	}

}
