package io.ductor.observation.internal;

import java.util.Map;

/**
 * The propagated fields ({@code traceparent}, {@code tracestate}, the application's
 * propagated baggage) of the trace context current on the caller's thread: what an effect
 * recorded there stores with its intent when its recording is not an observation of its
 * own.
 */
@FunctionalInterface
public interface TraceContextSource {

	/** Knows no trace: nothing is stored. */
	TraceContextSource NONE = () -> Map.of();

	/**
	 * @return the fields of the current trace context, or an empty map when no trace is
	 * current
	 */
	Map<String, String> current();

}
