package io.ductor.effect.internal;

import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The retention of finished intents: completed and cancelled intents deleted in batches
 * once their retention has passed. No index holds when an intent finished (a completion
 * would write an entry in it): retention walks the primary key from the oldest intent, in
 * bounded steps, deleting what is finished past its retention and stepping over what is
 * not, until it reaches intents recorded within the retention; the next pass starts from
 * the oldest again, so an intent stepped over (still live, or finished recently) is
 * looked at again. It also deletes the console's completions per minute
 * ({@code eec_effect_throughput}) older than a day.
 */
public final class IntentRetention {

	private static final Log logger = LogFactory.getLog(IntentRetention.class);

	/** How many intents one call looks at, at most, per intent it may delete. */
	private static final int STEPS_PER_BATCH = 20;

	/**
	 * One step of the walk: the next intents by primary key, whether each is finished
	 * past its retention, and whether it was recorded within it (then so were, give or
	 * take the order of commits, the intents after it).
	 */
	public static final String WALK_SQL = """
			SELECT id, (status IN %s
			            AND finished_at < ductor_now() - ? * interval '1 millisecond') AS purgeable,
			       created_at >= ductor_now() - ? * interval '1 millisecond' AS recent
			FROM eec_effect_intent WHERE id > ? ORDER BY id LIMIT ?""".formatted(IntentStatuses.FINISHED_SQL);

	/** The intents among {@code :ids} finished past their retention, locked. */
	private static final String PURGEABLE_SQL = """
			SELECT id FROM eec_effect_intent
			WHERE id IN (:ids) AND status IN %s
			  AND finished_at < ductor_now() - :retentionMs * interval '1 millisecond'
			FOR UPDATE SKIP LOCKED""".formatted(IntentStatuses.FINISHED_SQL);

	/** Deletes the intents among {@code :ids} finished past their retention. */
	public static final String PURGE_SQL = "DELETE FROM eec_effect_intent WHERE id = ANY (ARRAY(" + PURGEABLE_SQL
			+ "))";

	/**
	 * The console's completions per minute older than a day (it shows at most the last
	 * hour), by primary key.
	 */
	static final String PURGE_THROUGHPUT_SQL = """
			DELETE FROM eec_effect_throughput WHERE minute < ductor_now() - interval '1 day'""";

	private final JdbcTemplate template;

	private final JdbcClient jdbc;

	/** Where this instance's walk goes on from: the last id it looked at. */
	private final AtomicLong walked = new AtomicLong();

	/** Where this instance's walk over the whole table goes on from. */
	private final AtomicLong far = new AtomicLong();

	public IntentRetention(DataSource dataSource) {
		this.template = new JdbcTemplate(dataSource);
		this.jdbc = JdbcClient.create(this.template);
	}

	/**
	 * Deletes up to {@code batchSize} completed and cancelled intents finished longer ago
	 * than {@code retention}, found by walking the primary key. An intent that cannot be
	 * deleted (a foreign key of the application's tables refers to it) is kept, with the
	 * reason, for another retention period, and the rest of the batch is deleted.
	 * @return how many were deleted
	 */
	public int purge(Duration retention, int batchSize) {
		this.template.update(PURGE_THROUGHPUT_SQL);
		Set<Long> purgeable = new LinkedHashSet<>();
		int step = Math.max(100, batchSize);
		// the oldest intents first, up to those recorded within the retention
		this.walked
			.set(walk(retention, this.walked.get(), batchSize * STEPS_PER_BATCH, step, true, batchSize, purgeable));
		if (purgeable.size() < batchSize) {
			// and the walk over the whole table, for an intent recorded after one that is
			// younger (a transaction open long, a test's clock moved back)
			this.far
				.set(walk(retention, this.far.get(), batchSize * STEPS_PER_BATCH, step, false, batchSize, purgeable));
		}
		return purgeable.isEmpty() ? 0 : delete(retention, new ArrayList<>(purgeable));
	}

	/**
	 * Walks the primary key from {@code after}, looking at {@code most} intents at most,
	 * adding those finished past their retention to {@code purgeable} until it holds
	 * {@code batchSize}; stops at an intent recorded within the retention when
	 * {@code toRecent}.
	 * @return where the next walk goes on from: 0 at the end of the table (or at a recent
	 * intent), to start again from the oldest
	 */
	private long walk(Duration retention, long after, int most, int step, boolean toRecent, int batchSize,
			Set<Long> purgeable) {
		int looked = 0;
		while (purgeable.size() < batchSize && looked < most) {
			List<Object[]> rows = this.template.query(WALK_SQL,
					(rs, row) -> new Object[] { rs.getLong(1), rs.getBoolean(2), rs.getBoolean(3) },
					retention.toMillis(), retention.toMillis(), after, Math.min(step, most - looked));
			if (rows.isEmpty()) {
				return 0;
			}
			for (Object[] row : rows) {
				looked++;
				if (toRecent && (Boolean) row[2]) {
					// recorded within the retention: so is, but for the order of commits,
					// what follows
					return 0;
				}
				after = (Long) row[0];
				if ((Boolean) row[1]) {
					purgeable.add(after);
					if (purgeable.size() == batchSize) {
						return after;
					}
				}
			}
		}
		return after;
	}

	private int delete(Duration retention, List<Long> ids) {
		try {
			return this.jdbc.sql(PURGE_SQL).param("ids", ids).param("retentionMs", retention.toMillis()).update();
		}
		catch (RuntimeException ex) {
			if (BatchFaults.rowFault(ex) == null) {
				throw ex;
			}
		}
		// the ids written out: rowByRow binds each parameter as one value
		String purgeable = PURGEABLE_SQL.replace(":ids", String.join(", ", ids.stream().map(String::valueOf).toList()));
		return BatchFaults
			.rowByRow(this.template, purgeable, Map.of("retentionMs", retention.toMillis()), (connection, id) -> {
				try (PreparedStatement statement = BatchFaults.prepare(connection,
						"DELETE FROM eec_effect_intent WHERE id = :id RETURNING id", Map.of("id", id))) {
					return BatchFaults.ids(statement);
				}
			}, (connection, id, fault) -> {
				try (PreparedStatement statement = BatchFaults.prepare(connection, """
						UPDATE eec_effect_intent SET finished_at = ductor_now(),
						    last_error = COALESCE(last_error || '; ', '') || 'kept by retention: ' || :fault
						WHERE id = :id""", Map.of("fault", fault, "id", id))) {
					statement.executeUpdate();
				}
				logger.warn("Ductor's retention could not delete effect intent " + id
						+ " and keeps it for another retention period: " + fault);
				return List.<Long>of();
			})
			.size();
	}

}
