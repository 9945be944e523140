package io.ductor.observation.internal;

import java.util.HashMap;
import java.util.Map;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;

/**
 * The current span of a Micrometer {@link Tracer}, written by the application's
 * {@link Propagator} (the same one that reads it back around each attempt).
 */
public final class TracerTraceContextSource implements TraceContextSource {

	private final Tracer tracer;

	private final Propagator propagator;

	/**
	 * @param tracer the application's tracer
	 * @param propagator the application's propagator
	 */
	public TracerTraceContextSource(Tracer tracer, Propagator propagator) {
		this.tracer = tracer;
		this.propagator = propagator;
	}

	@Override
	public Map<String, String> current() {
		Span span = this.tracer.currentSpan();
		if (span == null || span.isNoop()) {
			return Map.of();
		}
		Map<String, String> carrier = new HashMap<>(4);
		this.propagator.inject(span.context(), carrier, (fields, key, value) -> {
			if (fields != null && key != null && value != null) {
				fields.put(key, value);
			}
		});
		return carrier;
	}

}
