package io.ductor.observation.internal;

import io.micrometer.observation.Observation;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.tracing.Link;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.propagation.Propagator;

import io.ductor.observation.DuctorObservationContext;
import io.ductor.observation.DuctorObservationDocumentation;

/**
 * With {@code ductor.effects.tracing.dispatch-relation=link}: the span of a dispatch
 * attempt starts a new trace with a {@link Link} to the span that recorded the effect,
 * read from the trace context stored with the intent, instead of continuing that trace as
 * a child. Ordered before Spring Boot's receiver handler (order {@value #ORDER}, Boot's
 * is 1000), it takes Ductor's dispatch observations (and its reconciliation rounds, which
 * continue an intent's trace as its attempts do) only; every other receiver observation
 * goes to Boot's handler. Baggage of the recording is not carried into the new trace.
 */
public final class LinkingDispatchTracingObservationHandler
		extends PropagatingReceiverTracingObservationHandler<ReceiverContext<?>> {

	/**
	 * Before Spring Boot's {@code PropagatingReceiverTracingObservationHandler} (1000).
	 */
	public static final int ORDER = 990;

	private static final String INVALID_SPAN_ID = "0000000000000000";

	/**
	 * @param tracer the application's tracer
	 * @param propagator the application's propagator, which reads the stored trace
	 * context
	 */
	public LinkingDispatchTracingObservationHandler(Tracer tracer, Propagator propagator) {
		super(tracer, propagator);
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof ReceiverContext<?> && context instanceof DuctorObservationContext ductor
				&& (ductor.observation() == DuctorObservationDocumentation.EFFECT_DISPATCH
						|| ductor.observation() == DuctorObservationDocumentation.EFFECT_RECONCILE);
	}

	@Override
	public Span.Builder customizeExtractedSpan(ReceiverContext<?> context, Span.Builder extracted) {
		Span.Builder linked = getTracer().spanBuilder().setNoParent().kind(Span.Kind.CONSUMER);
		if (context.getRemoteServiceName() != null) {
			linked.remoteServiceName(context.getRemoteServiceName());
		}
		TraceContext producer = producer(extracted);
		return (producer != null) ? linked.addLink(new Link(producer)) : linked;
	}

	/**
	 * The recording's span context. The propagator only offers a builder of its child:
	 * start that child, never end it (nothing is exported), and read its parent.
	 */
	private TraceContext producer(Span.Builder extracted) {
		Span child = extracted.start();
		try {
			TraceContext context = child.context();
			String parentId = context.parentId();
			if (parentId == null || parentId.isEmpty() || INVALID_SPAN_ID.equals(parentId)) {
				return null;
			}
			return getTracer().traceContextBuilder()
				.traceId(context.traceId())
				.spanId(parentId)
				.sampled(context.sampled())
				.build();
		}
		finally {
			child.abandon();
		}
	}

}
