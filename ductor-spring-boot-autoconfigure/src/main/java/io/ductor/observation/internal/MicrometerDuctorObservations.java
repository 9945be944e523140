package io.ductor.observation.internal;

import java.util.HashMap;
import java.util.Map;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;

import io.ductor.observation.DefaultDuctorObservationConvention;
import io.ductor.observation.DuctorObservationContext;
import io.ductor.observation.DuctorObservationConvention;
import io.ductor.observation.DuctorObservationDocumentation;

/**
 * Ductor's observations in a Micrometer {@link ObservationRegistry}. A dispatch attempt
 * (and a reconciliation round) is a receiver observation whose carrier is the trace
 * context stored with the intent: with Micrometer Tracing's propagating handlers (which
 * Spring Boot registers with a tracer, for the OpenTelemetry and the Brave bridge alike)
 * its span continues the trace of the code that recorded the effect, on whatever thread,
 * instance or day it runs.
 * <p>
 * By default recording an effect is not an observation of its own: the intent stores the
 * trace context current on the recording thread (the request's, the tick's, the
 * listener's span), read by a {@link TraceContextSource}, which costs one propagator call
 * and no span, timer or scope per intent. With {@code observeRecordings} every recording
 * is a sender observation ({@code ductor.effect.schedule}, a timer and a span of its own)
 * whose carrier is what is stored. Without a tracer nothing is stored. With a no-op
 * registry every call returns a shared no-op scope.
 */
public final class MicrometerDuctorObservations implements DuctorObservations {

	private final ObservationRegistry registry;

	/** Never started: what the registry's predicates are asked about a recording. */
	private static final Observation.Context RECORDING = new Observation.Context();

	private final DuctorObservationConvention convention;

	private final TraceContextSource traceContexts;

	private final boolean observeRecordings;

	/**
	 * @param registry the application's registry
	 * @param convention the convention replacing the default one, or {@code null}
	 * @param traceContexts the current trace context, stored with an intent whose
	 * recording is not observed
	 * @param observeRecordings whether every recording is an observation of its own
	 * ({@code ductor.effect.schedule})
	 */
	public MicrometerDuctorObservations(ObservationRegistry registry, DuctorObservationConvention convention,
			TraceContextSource traceContexts, boolean observeRecordings) {
		this.registry = registry;
		this.convention = convention;
		this.traceContexts = (traceContexts != null) ? traceContexts : TraceContextSource.NONE;
		this.observeRecordings = observeRecordings;
	}

	@Override
	public Scope tick(String runId) {
		if (this.registry.isNoop()) {
			return Scope.NOOP;
		}
		WorkContext context = new WorkContext(DuctorObservationDocumentation.TICK);
		context.fields.runId = runId;
		return open(context, context.fields);
	}

	@Override
	public Recording schedule(String effect, String receiver, String key) {
		if (this.registry.isNoop()) {
			return Recording.NOOP;
		}
		if (!this.observeRecordings) {
			return captured();
		}
		ScheduleContext context = new ScheduleContext();
		context.fields.effect = effect;
		context.fields.receiver = receiver;
		context.fields.key = key;
		Observation observation = observation(context).start();
		if (observation.isNoop()) {
			return Recording.NOOP;
		}
		return new ObservedRecording(observation, context.fields, context.getCarrier());
	}

	@Override
	public Scope dispatch(Attempt attempt, Map<String, String> traceContext) {
		return continued(DuctorObservationDocumentation.EFFECT_DISPATCH, attempt, 0, traceContext);
	}

	@Override
	public Scope reconcile(Attempt attempt, int round, Map<String, String> traceContext) {
		return continued(DuctorObservationDocumentation.EFFECT_RECONCILE, attempt, round, traceContext);
	}

	/**
	 * An attempt or a reconciliation round: a receiver of the intent's stored trace
	 * context.
	 */
	private Scope continued(DuctorObservationDocumentation observation, Attempt attempt, int round,
			Map<String, String> traceContext) {
		if (this.registry.isNoop()) {
			return Scope.NOOP;
		}
		DispatchContext context = new DispatchContext(observation, traceContext);
		Fields fields = context.fields;
		fields.intentId = attempt.intentId();
		fields.effect = attempt.effect();
		fields.receiver = attempt.receiver();
		fields.key = attempt.key();
		fields.attempt = attempt.attempt();
		fields.round = round;
		fields.runId = attempt.runId();
		return open(context, fields);
	}

	@Override
	public Scope reserve() {
		if (this.registry.isNoop()) {
			return Scope.NOOP;
		}
		WorkContext context = new WorkContext(DuctorObservationDocumentation.IDEMPOTENCY_RESERVE);
		return open(context, context.fields);
	}

	@Override
	public Scope workerRound(String worker) {
		if (this.registry.isNoop()) {
			return Scope.NOOP;
		}
		WorkContext context = new WorkContext(DuctorObservationDocumentation.WORKER_ROUND);
		context.fields.worker = worker;
		return open(context, context.fields);
	}

	/**
	 * The current trace context, unless the registry's predicates turn
	 * {@code ductor.effect.schedule} off
	 * ({@code management.observations.enable.ductor=false} stores nothing).
	 */
	private Recording captured() {
		if (this.traceContexts == TraceContextSource.NONE || Observation
			.createNotStarted(DuctorObservationDocumentation.EFFECT_SCHEDULE.getName(), () -> RECORDING, this.registry)
			.isNoop()) {
			return Recording.NOOP;
		}
		Map<String, String> current = this.traceContexts.current();
		return (current == null || current.isEmpty()) ? Recording.NOOP : new CapturedRecording(current);
	}

	private Scope open(Observation.Context context, Fields fields) {
		Observation observation = observation(context).start();
		if (observation.isNoop()) {
			return Scope.NOOP;
		}
		return new ObservedScope(observation, fields);
	}

	/**
	 * Created by its name, so that the registry's predicates (Spring Boot's
	 * {@code management.observations.enable.ductor=false}) see it: the conventions name
	 * no observation of their own ({@code getName()} is {@code null}) and a predicate
	 * asked about a {@code null} name lets everything through.
	 */
	private Observation observation(Observation.Context context) {
		Observation observation = Observation.createNotStarted(context.getName(), () -> context, this.registry);
		if (observation.isNoop()) {
			return observation;
		}
		return observation.observationConvention(
				(this.convention != null) ? this.convention : DefaultDuctorObservationConvention.INSTANCE);
	}

	/**
	 * An observation started, and current (in scope) until closed unless it is a
	 * recording.
	 */
	private static class ObservedScope implements Scope {

		final Observation observation;

		private final Fields fields;

		private final Observation.Scope scope;

		ObservedScope(Observation observation, Fields fields) {
			this(observation, fields, true);
		}

		ObservedScope(Observation observation, Fields fields, boolean inScope) {
			this.observation = observation;
			this.fields = fields;
			this.scope = inScope ? observation.openScope() : null;
		}

		@Override
		public void outcome(String outcome) {
			this.fields.outcome = outcome;
		}

		@Override
		public void error(Throwable error) {
			this.observation.error(error);
		}

		@Override
		public void close() {
			if (this.scope != null) {
				this.scope.close();
			}
			this.observation.stop();
		}

	}

	private static final class ObservedRecording extends ObservedScope implements Recording {

		private final Map<String, String> carrier;

		/**
		 * Never in scope: nothing runs inside a recording that would read it, and the
		 * carrier is written when the observation starts; a scope would cost a context
		 * switch per intent.
		 */
		ObservedRecording(Observation observation, Fields fields, Map<String, String> carrier) {
			super(observation, fields, false);
			this.carrier = carrier;
		}

		@Override
		public Map<String, String> traceContext() {
			return this.carrier;
		}

	}

	/**
	 * A recording that is not observed: it only carries the trace context current when it
	 * started.
	 */
	private record CapturedRecording(Map<String, String> traceContext) implements Recording {
	}

	/** What the convention reads; one per observation. */
	private static final class Fields {

		final DuctorObservationDocumentation observation;

		String effect;

		String receiver;

		long intentId;

		String key;

		int attempt;

		int round;

		String runId;

		String worker;

		String outcome;

		Fields(DuctorObservationDocumentation observation) {
			this.observation = observation;
		}

	}

	/**
	 * The accessors every context of Ductor's shares: each reads its observation's
	 * {@link Fields}.
	 */
	private interface FieldsContext extends DuctorObservationContext {

		Fields fields();

		@Override
		default DuctorObservationDocumentation observation() {
			return fields().observation;
		}

		@Override
		default String effect() {
			return fields().effect;
		}

		@Override
		default String receiver() {
			return fields().receiver;
		}

		@Override
		default long intentId() {
			return fields().intentId;
		}

		@Override
		default String key() {
			return fields().key;
		}

		@Override
		default int attempt() {
			return fields().attempt;
		}

		@Override
		default int round() {
			return fields().round;
		}

		@Override
		default String runId() {
			return fields().runId;
		}

		@Override
		default String worker() {
			return fields().worker;
		}

		@Override
		default String outcome() {
			return fields().outcome;
		}

	}

	/** A tick, a reservation or a worker round. */
	private static final class WorkContext extends Observation.Context implements FieldsContext {

		final Fields fields;

		WorkContext(DuctorObservationDocumentation observation) {
			this.fields = new Fields(observation);
			setName(observation.getName());
		}

		@Override
		public Fields fields() {
			return this.fields;
		}

	}

	/** Recording an intent: the propagators write the trace context into the carrier. */
	private static final class ScheduleContext extends SenderContext<Map<String, String>> implements FieldsContext {

		final Fields fields = new Fields(DuctorObservationDocumentation.EFFECT_SCHEDULE);

		ScheduleContext() {
			super((carrier, key, value) -> {
				if (carrier != null && key != null && value != null) {
					carrier.put(key, value);
				}
			}, Kind.PRODUCER);
			setCarrier(new HashMap<>(4));
			setName(DuctorObservationDocumentation.EFFECT_SCHEDULE.getName());
			setRemoteServiceName("ductor");
		}

		@Override
		public Fields fields() {
			return this.fields;
		}

	}

	/**
	 * A dispatch attempt or a reconciliation round: the propagators read the stored trace
	 * context from the carrier.
	 */
	private static final class DispatchContext extends ReceiverContext<Map<String, String>> implements FieldsContext {

		final Fields fields;

		DispatchContext(DuctorObservationDocumentation observation, Map<String, String> traceContext) {
			super((carrier, key) -> (carrier != null) ? carrier.get(key) : null, Kind.CONSUMER);
			this.fields = new Fields(observation);
			setCarrier(traceContext);
			setName(observation.getName());
			setRemoteServiceName("ductor");
		}

		@Override
		public Fields fields() {
			return this.fields;
		}

	}

}
