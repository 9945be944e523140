package io.ductor.observation.internal;

import io.ductor.metrics.internal.DuctorObserver;

/**
 * The one instrumentation seam Ductor's collaborators receive: the meters
 * ({@link DuctorObserver}) and the observations ({@link DuctorObservations}) of their
 * work behind one parameter, so that neither can be forgotten or passed for the other. It
 * is not itself a {@link DuctorObserver} or {@link DuctorObservations}, so that a bean of
 * either type (the metrics' and the observations' auto-configurations make one each)
 * stays the only one of its type.
 *
 * @param metrics what counts and times
 * @param observations what observes units of work while they run
 */
public record DuctorInstrumentation(DuctorObserver metrics, DuctorObservations observations) {

	/** Counts nothing and observes nothing. */
	public static final DuctorInstrumentation NOOP = new DuctorInstrumentation(DuctorObserver.NOOP,
			DuctorObservations.NOOP);

	/**
	 * @param metrics what counts and times
	 * @param observations what observes units of work while they run
	 * @return both behind one seam
	 */
	public static DuctorInstrumentation of(DuctorObserver metrics, DuctorObservations observations) {
		return new DuctorInstrumentation(metrics, observations);
	}

}
