package io.ductor.effect.internal;

import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The retention of finished intents: completed and cancelled intents deleted in batches
 * once their retention has passed.
 */
public final class IntentRetention {

	private static final Log logger = LogFactory.getLog(IntentRetention.class);

	/** One batch of the finished intents past their retention, oldest first. */
	private static final String PURGEABLE_SQL = """
			SELECT id FROM eec_effect_intent
			WHERE status IN ('completed', 'cancelled')
			  AND finished_at < ductor_now() - :retentionMs * interval '1 millisecond'
			ORDER BY finished_at
			LIMIT :batch
			FOR UPDATE SKIP LOCKED""";

	/** Deletes one batch of finished intents past their retention. */
	public static final String PURGE_SQL = "DELETE FROM eec_effect_intent WHERE id = ANY (ARRAY(" + PURGEABLE_SQL
			+ "))";

	private final JdbcTemplate template;

	private final JdbcClient jdbc;

	public IntentRetention(DataSource dataSource) {
		this.template = new JdbcTemplate(dataSource);
		this.jdbc = JdbcClient.create(this.template);
	}

	/**
	 * Deletes one batch of completed and cancelled intents finished longer ago than
	 * {@code retention}, found by primary key ({@code IN (subquery)} became a scan of the
	 * whole table for large batches). An intent that cannot be deleted (a foreign key of
	 * the application's tables refers to it) is kept, with the reason, for another
	 * retention period, and the rest of the batch is deleted.
	 */
	public int purge(Duration retention, int batchSize) {
		try {
			return this.jdbc.sql(PURGE_SQL)
				.param("retentionMs", retention.toMillis())
				.param("batch", batchSize)
				.update();
		}
		catch (RuntimeException ex) {
			if (BatchFaults.rowFault(ex) == null) {
				throw ex;
			}
		}
		return BatchFaults.rowByRow(this.template, PURGEABLE_SQL,
				Map.of("retentionMs", retention.toMillis(), "batch", batchSize), (connection, id) -> {
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
