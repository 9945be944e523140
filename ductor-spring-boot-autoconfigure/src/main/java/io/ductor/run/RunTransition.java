package io.ductor.run;

import java.time.OffsetDateTime;

import org.jspecify.annotations.Nullable;

/**
 * One applied tick, as stored in {@code eec_run_transition}.
 *
 * @param runId the run
 * @param seq the tick's place in the run's history, from 1 without gaps
 * @param stamp the tick's stamp, unique per run
 * @param inputJson the input recorded with the tick as JSON, or {@code null}
 * @param recordVersion the run's version after the tick
 * @param runStatus the run's status after the tick
 * @param createdAt when the tick committed (database clock)
 */
public record RunTransition(String runId, long seq, String stamp, @Nullable String inputJson, long recordVersion,
		RunStatus runStatus, OffsetDateTime createdAt) {
}
