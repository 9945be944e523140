package io.ductor.effect.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The leases a drain session holds, kept alive by its {@link LeaseHeartbeat}: one
 * statement per beat extends every live lease the session holds and tells what became of
 * each one. Bound by position, with arrays, like the other statements of the drain's hot
 * path.
 */
public final class DrainerLeases {

	private final JdbcTemplate template;

	public DrainerLeases(DataSource dataSource) {
		this.template = new JdbcTemplate(dataSource);
	}

	/**
	 * The heartbeat of one drain session, one statement per beat: it extends the leases
	 * of the attempts the session holds (ids and attempts, {@code $1} and {@code $2}),
	 * each only while that very attempt is in flight under the session's lease owner
	 * ({@code $3}) and its lease is still live by the database clock. An expired lease is
	 * never revived, even when nothing redrove it yet: the slot of a concurrency-limited
	 * effect may already serve another attempt. A row another transaction holds locked is
	 * skipped for this beat rather than waited for. It returns the attempts it extended,
	 * then every attempt asked about with whether its lease was live as the beat began (a
	 * row not extended but live was skipped because it was locked; one not live is lost).
	 * Each row is found by its primary key, one lookup per attempt held, whatever plan
	 * the server settles on: joined to the array of attempts, a generic plan looped over
	 * the whole array for every row.
	 * <p>
	 * The lease is checked against {@code ductor_clock()} once the row is locked: a claim
	 * that takes the slot of an expired holder locks that holder's row too
	 * ({@link EffectSlots}), so either the claim sees the extended lease, or the
	 * heartbeat sees the expired one after the slot was taken.
	 */
	public static final String EXTEND_LEASES_SQL = """
			WITH v AS MATERIALIZED (SELECT * FROM unnest(?::bigint[], ?::int[]) AS v(id, attempt)),
			held AS (
			    SELECT h.id FROM v CROSS JOIN LATERAL (
			        SELECT i.id FROM eec_effect_intent i
			        WHERE i.id = v.id AND i.attempts = v.attempt AND i.status = 'in_flight' AND i.lease_owner = ?
			          AND i.lease_expires_at > ductor_clock()
			        FOR NO KEY UPDATE SKIP LOCKED) h),
			extended AS (
			    UPDATE eec_effect_intent i SET lease_expires_at = ductor_now() + ? * interval '1 millisecond'
			    WHERE i.id = ANY (ARRAY(SELECT id FROM held)) AND i.status = 'in_flight'
			      AND i.lease_expires_at > ductor_clock()
			    RETURNING i.id)
			SELECT id, true AS extended, true AS live FROM extended
			UNION ALL
			SELECT v.id, false, EXISTS (
			    SELECT 1 FROM eec_effect_intent l
			    WHERE l.id = v.id AND l.attempts = v.attempt AND l.status = 'in_flight' AND l.lease_owner = ?
			      AND l.lease_expires_at > ductor_clock())
			FROM v""";

	/**
	 * Extends the leases of the attempts a drain session holds: the drainer's heartbeat.
	 * A row another transaction holds locked (a transaction that reschedules the alarm of
	 * a running occurrence, until it commits) is skipped for this beat rather than waited
	 * for, so one open transaction never holds up the leases of all the other running
	 * effects.
	 * @param owner the session's lease owner
	 * @param attempts the attempts held, by intent id
	 * @return what became of each attempt's lease
	 */
	public Map<Long, LeaseBeat> extendLeases(String owner, Duration lease, Map<Long, Integer> attempts) {
		Long[] ids = attempts.keySet().toArray(Long[]::new);
		Integer[] numbers = new Integer[ids.length];
		for (int i = 0; i < ids.length; i++) {
			numbers[i] = attempts.get(ids[i]);
		}
		Map<Long, LeaseBeat> beats = this.template.execute((Connection connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(EXTEND_LEASES_SQL)) {
				statement.setArray(1, BatchFaults.array(connection, "bigint", ids));
				statement.setArray(2, BatchFaults.array(connection, "int", numbers));
				statement.setString(3, owner);
				statement.setLong(4, lease.toMillis());
				statement.setString(5, owner);
				Map<Long, LeaseBeat> found = new HashMap<>();
				try (ResultSet rs = statement.executeQuery()) {
					// the attempts extended, and every attempt with whether its lease was
					// live as the beat began: an attempt extended was extended
					while (rs.next()) {
						LeaseBeat beat = rs.getBoolean(2) ? LeaseBeat.EXTENDED
								: rs.getBoolean(3) ? LeaseBeat.SKIPPED : LeaseBeat.LOST;
						found.merge(rs.getLong(1), beat, (one, other) -> (one == LeaseBeat.EXTENDED) ? one : other);
					}
				}
				return found;
			}
		});
		return (beats != null) ? beats : Map.of();
	}

	/** What one beat of the heartbeat did to the lease of one attempt. */
	public enum LeaseBeat {

		/** Extended by a lease from now. */
		EXTENDED,

		/**
		 * Live but not extended: another transaction held its row locked; tried again at
		 * the next beat.
		 */
		SKIPPED,

		/**
		 * Lost: expired, or no longer this attempt in flight under this owner (completed,
		 * redriven, claimed by another drainer). Never extended again.
		 */
		LOST

	}

}
