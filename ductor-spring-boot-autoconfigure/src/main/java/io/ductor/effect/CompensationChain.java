package io.ductor.effect;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.ductor.run.RunCompensation;

/**
 * The compensations a run's ticks registered, in the order they run when the run fails:
 * the latest tick's first.
 *
 * @param runId the run
 * @param compensation how far the run's undo got
 * @param links one per registered compensation
 */
public record CompensationChain(String runId, RunCompensation compensation, List<Link> links) {

	/**
	 * One step's undo.
	 *
	 * @param seq the tick that registered it
	 * @param originalKey the key of the intent it undoes
	 * @param effectName the compensating effect
	 * @param original the intent it undoes, or {@code null} once purged by retention
	 * @param compensation the compensation's intent
	 * ({@code "compensate:" + originalKey}), or {@code null} while the run has not
	 * failed, or when the original never ran
	 */
	public record Link(long seq, String originalKey, String effectName, @Nullable EffectIntent original,
			@Nullable EffectIntent compensation) {
	}

}
