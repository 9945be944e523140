package io.ductor.effect.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.Receiver;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;

/**
 * Records intents in the caller's transaction: the insert (or the insert already leased
 * to the committing instance's drainer), the binding a taken key has, the advisory lock
 * that orders the recordings of one ordering key, and the notification that wakes the
 * drainers.
 */
public final class IntentRecorder {

	/** The channel a committed intent wakes drainers on. */
	public static final String CHANNEL = "ductor_effects";

	/**
	 * Records one intent; bound by position, with the statement text fixed, so that a
	 * call builds no SQL and the driver reuses one server-side prepared statement per
	 * connection.
	 */
	static final String INSERT_SQL = """
			INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
			    max_attempts, next_attempt_at, ordering_key, alarm_name, run_id, trace_context)
			VALUES (?, ?, ?::jsonb, ?, ?, ?, ductor_now() + ? * interval '1 millisecond', ?, ?, ?, ?::jsonb)
			ON CONFLICT (idempotency_key) DO NOTHING
			RETURNING id""";

	/**
	 * Records one intent already claimed by {@code owner}: in flight, attempt 1, under a
	 * lease from the database clock, so that the committing instance runs it without a
	 * claim while every other instance and the reconciler see an ordinary lease, watched
	 * by the reconciler's sweep ({@link LeaseSweep}) rather than by an index, so that its
	 * completion writes no index entry. Only for intents due at once and without an
	 * ordering key; bound like {@link #INSERT_SQL}. Its {@code updated_at} is when the
	 * lease was taken, not when the recording transaction began: the sweep reads from it
	 * how long the attempt has run.
	 */
	static final String INSERT_LEASED_SQL = """
			INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
			    max_attempts, run_id, trace_context, status, attempts, lease_owner, lease_expires_at, lease_swept,
			    lease_xid, updated_at)
			VALUES (?, ?, ?::jsonb, ?, ?, ?, ?, ?::jsonb, 'in_flight', 1, ?, ductor_clock() + ? * interval '1 millisecond',
			    true, txid_current(), ductor_clock())
			ON CONFLICT (idempotency_key) DO NOTHING
			RETURNING id, (extract(epoch FROM next_attempt_at) * 1000000)::bigint""";

	private final JdbcTemplate template;

	private final JdbcClient jdbc;

	public IntentRecorder(DataSource dataSource) {
		this.template = new JdbcTemplate(dataSource);
		this.jdbc = JdbcClient.create(this.template);
	}

	/**
	 * @return the new intent's id, or 0 when the key is taken
	 */
	long insert(NewIntent intent) {
		Long id = this.template.execute(INSERT_SQL, (PreparedStatement statement) -> {
			statement.setString(1, intent.effectName());
			statement.setString(2, intent.key());
			statement.setString(3, intent.payloadJson());
			statement.setString(4, intent.fingerprint());
			statement.setString(5, intent.receiver().name());
			statement.setInt(6, intent.maxAttempts());
			statement.setLong(7, intent.delay().toMillis());
			statement.setString(8, intent.orderingKey());
			statement.setString(9, intent.alarmName());
			statement.setString(10, intent.runId());
			statement.setString(11, intent.traceContext());
			try (ResultSet row = statement.executeQuery()) {
				return row.next() ? row.getLong(1) : 0L;
			}
		});
		return (id != null) ? id : 0;
	}

	/**
	 * @return the intent as claimed by {@code owner}, attempt 1, or {@code null} when the
	 * key is taken
	 */
	ClaimedIntent insertLeased(NewIntent intent, String owner, Duration lease) {
		return this.template.execute(INSERT_LEASED_SQL, (PreparedStatement statement) -> {
			statement.setString(1, intent.effectName());
			statement.setString(2, intent.key());
			statement.setString(3, intent.payloadJson());
			statement.setString(4, intent.fingerprint());
			statement.setString(5, intent.receiver().name());
			statement.setInt(6, intent.maxAttempts());
			statement.setString(7, intent.runId());
			statement.setString(8, intent.traceContext());
			statement.setString(9, owner);
			statement.setLong(10, lease.toMillis());
			try (ResultSet row = statement.executeQuery()) {
				if (!row.next()) {
					return null;
				}
				// as a number: cheaper to read than a timestamp's text, on the committing
				// thread
				long micros = row.getLong(2);
				OffsetDateTime due = OffsetDateTime.ofInstant(Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
						Math.floorMod(micros, 1_000_000L) * 1000L), ZoneOffset.UTC);
				// claimed at the commit that records it: no time passes between the two
				return new ClaimedIntent(row.getLong(1), intent.effectName(), intent.key(), intent.payloadJson(), 1,
						intent.maxAttempts(), intent.receiver(), due, due, 0.0, intent.runId(), intent.traceContext());
			}
		});
	}

	/**
	 * @return the effect name and payload fingerprint the key is bound to
	 */
	Optional<String[]> keyBinding(String key) {
		return this.jdbc
			.sql("SELECT effect_name, payload_fingerprint FROM eec_effect_intent WHERE idempotency_key = :key")
			.param("key", key)
			.query((rs, row) -> new String[] { rs.getString(1), rs.getString(2) })
			.optional();
	}

	/**
	 * Serializes the caller's transaction with others holding the same lock name, until
	 * commit.
	 */
	public void lockUntilCommit(String lockName) {
		this.jdbc.sql("SELECT pg_advisory_xact_lock(hashtextextended(:lockName, 0))")
			.param("lockName", lockName)
			.query()
			.singleRow();
	}

	/**
	 * Sends the wake-up notification, signed by {@code sender}, inside the caller's
	 * transaction: delivered when it commits.
	 */
	void notifyDrainers(String sender) {
		this.jdbc.sql("SELECT pg_notify('" + CHANNEL + "', :sender)").param("sender", sender).query().singleRow();
	}

	/**
	 * Sends the wake-up notification, signed by {@code sender}, in a transaction of its
	 * own that commits without waiting for the WAL flush: queuing a notification gives
	 * the transaction an id and so a commit record, and a hint needs no durability.
	 */
	void notifyDrainersNow(String sender) {
		this.jdbc.sql("SELECT set_config('synchronous_commit', 'off', true), pg_notify('" + CHANNEL + "', :sender)")
			.param("sender", sender)
			.query()
			.singleRow();
	}

	/**
	 * Marks the intent recorded under {@code key} as the compensation of the intent
	 * {@code originalId} (0 when the original was never recorded), in the caller's
	 * transaction: it is claimed only once the original can no longer run.
	 */
	void markCompensation(String key, long originalId) {
		this.jdbc.sql("UPDATE eec_effect_intent SET compensation_of = :original WHERE idempotency_key = :key")
			.param("original", originalId)
			.param("key", key)
			.update();
	}

	/**
	 * An intent to insert; {@code traceContext} is the {@code trace_context} column's
	 * JSON, or {@code null}.
	 */
	record NewIntent(String effectName, String key, String payloadJson, String fingerprint, Receiver receiver,
			int maxAttempts, Duration delay, String orderingKey, String alarmName, String runId, String traceContext) {
	}

}
