package io.ductor.observation;

import org.jspecify.annotations.Nullable;

/**
 * What the {@link DuctorObservationConvention} reads from the context of one of Ductor's
 * observations. Fields that do not apply to an observation are {@code null} (or
 * {@code 0}).
 */
public interface DuctorObservationContext {

	/**
	 * @return which of Ductor's observations this is
	 */
	DuctorObservationDocumentation observation();

	/**
	 * @return the effect name, or {@code null}
	 */
	@Nullable String effect();

	/**
	 * @return the receiver kind ({@code IDEMPOTENT} or {@code NOT_IDEMPOTENT}), or
	 * {@code null}
	 */
	@Nullable String receiver();

	/**
	 * @return the intent id, or {@code 0} when not known
	 */
	long intentId();

	/**
	 * @return the idempotency key, or {@code null}
	 */
	@Nullable String key();

	/**
	 * @return the attempt number, or {@code 0}
	 */
	int attempt();

	/**
	 * @return the reconciliation round, from 1, or {@code 0}
	 */
	default int round() {
		return 0;
	}

	/**
	 * @return the run id, or {@code null}
	 */
	@Nullable String runId();

	/**
	 * @return the worker name, or {@code null}
	 */
	@Nullable String worker();

	/**
	 * @return how the work ended, or {@code null} while it runs
	 */
	@Nullable String outcome();

}
