package io.ductor.observation;

/**
 * How the span of a dispatch attempt relates to the span that recorded its effect
 * ({@code ductor.effects.tracing.dispatch-relation}).
 */
public enum DispatchRelation {

	/**
	 * The attempt's span is a child of the recording's span: one trace from the request
	 * to every attempt.
	 */
	CHILD,

	/**
	 * The attempt's span starts a trace of its own with a link to the recording's span:
	 * the request's trace ends at the commit, and each attempt is a trace that points
	 * back to it.
	 */
	LINK

}
