package io.ductor.effect.internal;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.MissedOccurrences;
import io.ductor.effect.OperatorDecision;
import io.ductor.effect.RecurringAlarm;
import io.ductor.internal.DbValues;

/**
 * The SQL behind recurring alarms: {@code eec_recurring_alarm}. Every statement runs in
 * the caller's transaction.
 */
public class RecurringAlarmStore {

	private static final String COLUMNS = """
			a.name, a.effect_name, a.cron, a.every_ms, a.zone, a.payload::text AS payload, a.payload_fingerprint,
			a.missed, a.grace_ms, a.declared_in, a.paused, a.next_at, a.last_occurrence_at, a.last_key""";

	private final JdbcClient jdbc;

	public RecurringAlarmStore(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/**
	 * The due alarms no other scheduler holds, locked until the caller commits, with the
	 * database clock.
	 */
	List<Stored> lockDue(int limit) {
		return this.jdbc.sql("SELECT " + COLUMNS + ", ductor_now() AS db_now FROM eec_recurring_alarm a "
				+ "WHERE NOT a.paused AND a.next_at <= ductor_now() ORDER BY a.next_at LIMIT ? FOR UPDATE SKIP LOCKED")
			.param(limit)
			.query(RecurringAlarmStore::stored)
			.list();
	}

	/** Every alarm, by name, locked until the caller commits. */
	List<Stored> lockAll() {
		return this.jdbc
			.sql("SELECT " + COLUMNS + ", ductor_now() AS db_now FROM eec_recurring_alarm a ORDER BY a.name FOR UPDATE")
			.query(RecurringAlarmStore::stored)
			.list();
	}

	/**
	 * Starts an alarm again from the database clock: its next occurrence is
	 * {@code nextAt} (unchanged when {@code null}), and a last occurrence after now is
	 * forgotten (the finished intents of its occurrences after now are
	 * {@link AlarmOccurrences#forgetFinishedAfterNow}'s).
	 */
	void restart(String name, Instant nextAt) {
		this.jdbc
			.sql("""
					UPDATE eec_recurring_alarm
					SET next_at = COALESCE(?, next_at),
					    last_key = CASE WHEN last_occurrence_at > ductor_now() THEN NULL ELSE last_key END,
					    last_occurrence_at = CASE WHEN last_occurrence_at > ductor_now() THEN NULL ELSE last_occurrence_at END,
					    updated_at = ductor_now()
					WHERE name = ?""")
			.params(utc(nextAt), name)
			.update();
	}

	/**
	 * One alarm, locked until the caller commits (waiting for a scheduler round that
	 * holds it).
	 */
	Optional<Stored> lock(String name) {
		return this.jdbc
			.sql("SELECT " + COLUMNS
					+ ", ductor_now() AS db_now FROM eec_recurring_alarm a WHERE a.name = ? FOR UPDATE")
			.param(name)
			.query(RecurringAlarmStore::stored)
			.optional();
	}

	/**
	 * @return whether it was inserted ({@code false} when another transaction inserted
	 * the name first)
	 */
	boolean insert(String name, String effectName, AlarmSchedule schedule, EffectPayloads.Payload payload,
			String declaredIn, Instant nextAt) {
		return this.jdbc.sql("""
				INSERT INTO eec_recurring_alarm (name, effect_name, cron, every_ms, zone, payload, payload_fingerprint,
				    missed, grace_ms, declared_in, next_at, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ductor_now(), ductor_now())
				ON CONFLICT (name) DO NOTHING""")
			.params(name, effectName, schedule.cronExpression(),
					(schedule.period() != null) ? schedule.period().toMillis() : null, schedule.zone().getId(),
					payload.json(), payload.fingerprint(), DbValues.of(schedule.missed()), schedule.grace().toMillis(),
					declaredIn, utc(nextAt))
			.update() == 1;
	}

	void update(String name, String effectName, AlarmSchedule schedule, EffectPayloads.Payload payload,
			String declaredIn, Instant nextAt) {
		this.jdbc
			.sql("""
					UPDATE eec_recurring_alarm SET effect_name = ?, cron = ?, every_ms = ?, zone = ?, payload = ?::jsonb,
					    payload_fingerprint = ?, missed = ?, grace_ms = ?, declared_in = ?, next_at = ?, updated_at = ductor_now()
					WHERE name = ?""")
			.params(effectName, schedule.cronExpression(),
					(schedule.period() != null) ? schedule.period().toMillis() : null, schedule.zone().getId(),
					payload.json(), payload.fingerprint(), DbValues.of(schedule.missed()), schedule.grace().toMillis(),
					declaredIn, utc(nextAt), name)
			.update();
	}

	/**
	 * Moves an alarm on after a scheduler round recorded its due occurrences: fenced by
	 * the {@code next_at} the round read, so a round that lost its lock (it never does;
	 * the fence says so in SQL) changes nothing.
	 * @return whether the alarm moved
	 */
	boolean advance(String name, Instant seenNextAt, Instant nextAt, Instant lastOccurrence, String lastKey) {
		return this.jdbc.sql("""
				UPDATE eec_recurring_alarm
				SET next_at = ?, last_occurrence_at = COALESCE(?, last_occurrence_at), last_key = COALESCE(?, last_key),
				    updated_at = ductor_now()
				WHERE name = ? AND next_at = ?""")
			.params(utc(nextAt), utc(lastOccurrence), lastKey, name, utc(seenNextAt))
			.update() == 1;
	}

	/**
	 * Pauses, or resumes with {@code nextAt}, storing the operator's decision (when there
	 * is one) in the same statement. @return whether the alarm exists
	 */
	boolean setPaused(String name, boolean paused, Instant nextAt, OperatorDecision decision) {
		return this.jdbc.sql("""
				UPDATE eec_recurring_alarm SET paused = :paused, next_at = COALESCE(:nextAt, next_at),
				    decision_reason = CASE WHEN :decided THEN :reason ELSE decision_reason END,
				    decided_by = CASE WHEN :decided THEN :decidedBy ELSE decided_by END,
				    decided_at = CASE WHEN :decided THEN ductor_now() ELSE decided_at END,
				    updated_at = ductor_now()
				WHERE name = :name""")
			.param("paused", paused)
			.param("nextAt", utc(nextAt))
			.param("decided", decision != null)
			.param("reason", (decision != null) ? decision.reason() : null)
			.param("decidedBy", (decision != null) ? decision.by() : null)
			.param("name", name)
			.update() == 1;
	}

	boolean delete(String name) {
		return this.jdbc.sql("DELETE FROM eec_recurring_alarm WHERE name = ?").param(name).update() == 1;
	}

	/**
	 * Deletes the alarms declared in properties that {@code declared} no longer
	 * names. @return their names
	 */
	List<String> deleteUndeclared(List<String> declared) {
		return this.jdbc
			.sql("DELETE FROM eec_recurring_alarm WHERE declared_in = 'properties' "
					+ "AND NOT (name = ANY (?)) RETURNING name")
			.param(declared.toArray(String[]::new))
			.query(String.class)
			.list();
	}

	/** Every alarm, by name, with the status of its last occurrence. */
	List<RecurringAlarm> list() {
		return this.jdbc
			.sql("SELECT " + COLUMNS + ", i.status AS last_status FROM eec_recurring_alarm a "
					+ "LEFT JOIN eec_effect_intent i ON i.idempotency_key = a.last_key ORDER BY a.name")
			.query((rs, row) -> {
				Stored stored = stored(rs, row);
				String status = rs.getString("last_status");
				return new RecurringAlarm(stored.name(), stored.effectName(), stored.schedule(), stored.declaredIn(),
						stored.paused(), rs.getObject("next_at", OffsetDateTime.class),
						rs.getObject("last_occurrence_at", OffsetDateTime.class), stored.lastKey(),
						(status != null) ? DbValues.parse(EffectStatus.class, status) : null);
			})
			.list();
	}

	/**
	 * @return the database clock
	 */
	Instant databaseNow() {
		return this.jdbc.sql("SELECT ductor_now()").query(OffsetDateTime.class).single().toInstant();
	}

	private static Stored stored(ResultSet rs, int row) throws SQLException {
		long every = rs.getLong("every_ms");
		Long everyMs = rs.wasNull() ? null : every;
		OffsetDateTime last = rs.getObject("last_occurrence_at", OffsetDateTime.class);
		OffsetDateTime now = hasColumn(rs, "db_now") ? rs.getObject("db_now", OffsetDateTime.class) : null;
		return new Stored(rs.getString("name"), rs.getString("effect_name"),
				scheduleFromDb(rs.getString("cron"), everyMs, rs.getString("zone"), rs.getString("missed"),
						rs.getLong("grace_ms")),
				rs.getString("payload"), rs.getString("payload_fingerprint"), rs.getString("declared_in"),
				rs.getBoolean("paused"), rs.getObject("next_at", OffsetDateTime.class).toInstant(),
				(last != null) ? last.toInstant() : null, rs.getString("last_key"),
				(now != null) ? now.toInstant() : null);
	}

	/** Whether the two fire at the same instants (policy and grace aside). */
	static boolean sameInstants(AlarmSchedule one, AlarmSchedule other) {
		return Objects.equals(one.cronExpression(), other.cronExpression())
				&& Objects.equals(one.period(), other.period()) && one.zone().equals(other.zone());
	}

	static AlarmSchedule scheduleFromDb(String cron, Long everyMs, String zone, String missed, long graceMs) {
		AlarmSchedule schedule = (cron != null) ? AlarmSchedule.cron(cron, zoneOf(zone))
				: AlarmSchedule.every(Duration.ofMillis(everyMs));
		return schedule.withMissed(DbValues.parse(MissedOccurrences.class, missed))
			.withGrace(Duration.ofMillis(graceMs));
	}

	private static ZoneId zoneOf(String zone) {
		try {
			return ZoneId.of(zone);
		}
		catch (DateTimeException ex) {
			throw new IllegalStateException("Recurring alarm zone '" + zone + "' is unknown to this JVM", ex);
		}
	}

	private static boolean hasColumn(ResultSet rs, String column) throws SQLException {
		for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
			if (column.equals(rs.getMetaData().getColumnLabel(i))) {
				return true;
			}
		}
		return false;
	}

	private static OffsetDateTime utc(Instant instant) {
		return (instant != null) ? instant.atOffset(ZoneOffset.UTC) : null;
	}

	/** An alarm's row; {@code dbNow} is the database clock of the reading transaction. */
	record Stored(String name, String effectName, AlarmSchedule schedule, String payloadJson, String fingerprint,
			String declaredIn, boolean paused, Instant nextAt, Instant lastOccurrenceAt, String lastKey,
			Instant dbNow) {
	}

}
