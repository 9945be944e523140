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

/**
 * Ductor's observations in a Micrometer {@link ObservationRegistry}. Recording an effect is a
 * sender observation whose carrier is the trace context stored with the intent, and a dispatch a
 * receiver observation reading it back: with Micrometer Tracing's propagating handlers (which
 * Spring Boot registers with a tracer, for the OpenTelemetry and the Brave bridge alike) the
 * dispatch span continues the trace of the code that recorded the effect, on whatever thread,
 * instance or day it runs. Without a tracer the carrier stays empty and nothing is stored. With a
 * no-op registry every call returns a shared no-op scope.
 */
public final class MicrometerDuctorObservations implements DuctorObservations {

	private final ObservationRegistry registry;

	private final DuctorObservationConvention convention;

	/**
	 * @param registry the application's registry
	 * @param convention the convention replacing the default one, or {@code null}
	 */
	public MicrometerDuctorObservations(ObservationRegistry registry, DuctorObservationConvention convention) {
		this.registry = registry;
		this.convention = convention;
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
		if (this.registry.isNoop()) {
			return Scope.NOOP;
		}
		DispatchContext context = new DispatchContext(traceContext);
		Fields fields = context.fields;
		fields.intentId = attempt.intentId();
		fields.effect = attempt.effect();
		fields.receiver = attempt.receiver();
		fields.key = attempt.key();
		fields.attempt = attempt.attempt();
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

	private Scope open(Observation.Context context, Fields fields) {
		Observation observation = observation(context).start();
		if (observation.isNoop()) {
			return Scope.NOOP;
		}
		return new ObservedScope(observation, fields);
	}

	/**
	 * Created by its name, so that the registry's predicates (Spring Boot's
	 * {@code management.observations.enable.ductor=false}) see it: the conventions name no
	 * observation of their own ({@code getName()} is {@code null}) and a predicate asked about a
	 * {@code null} name lets everything through.
	 */
	private Observation observation(Observation.Context context) {
		Observation observation = Observation.createNotStarted(context.getName(), () -> context, this.registry);
		if (observation.isNoop()) {
			return observation;
		}
		return observation.observationConvention(
				(this.convention != null) ? this.convention : DefaultDuctorObservationConvention.INSTANCE);
	}

	/** An observation started, and current (in scope) until closed unless it is a recording. */
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
		 * Never in scope: nothing runs inside a recording that would read it, and the carrier is
		 * written when the observation starts; a scope would cost a context switch per intent.
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

	/** What the convention reads; one per observation. */
	private static final class Fields {

		final DuctorObservationDocumentation observation;

		String effect;

		String receiver;

		long intentId;

		String key;

		int attempt;

		String runId;

		String worker;

		String outcome;

		Fields(DuctorObservationDocumentation observation) {
			this.observation = observation;
		}

	}

	/** A tick, a reservation or a worker round. */
	private static final class WorkContext extends Observation.Context implements DuctorObservationContext {

		final Fields fields;

		WorkContext(DuctorObservationDocumentation observation) {
			this.fields = new Fields(observation);
			setName(observation.getName());
		}

		@Override
		public DuctorObservationDocumentation observation() {
			return this.fields.observation;
		}

		@Override
		public String effect() {
			return this.fields.effect;
		}

		@Override
		public String receiver() {
			return this.fields.receiver;
		}

		@Override
		public long intentId() {
			return this.fields.intentId;
		}

		@Override
		public String key() {
			return this.fields.key;
		}

		@Override
		public int attempt() {
			return this.fields.attempt;
		}

		@Override
		public String runId() {
			return this.fields.runId;
		}

		@Override
		public String worker() {
			return this.fields.worker;
		}

		@Override
		public String outcome() {
			return this.fields.outcome;
		}

	}

	/** Recording an intent: the propagators write the trace context into the carrier. */
	private static final class ScheduleContext extends SenderContext<Map<String, String>>
			implements DuctorObservationContext {

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
		public DuctorObservationDocumentation observation() {
			return this.fields.observation;
		}

		@Override
		public String effect() {
			return this.fields.effect;
		}

		@Override
		public String receiver() {
			return this.fields.receiver;
		}

		@Override
		public long intentId() {
			return 0;
		}

		@Override
		public String key() {
			return this.fields.key;
		}

		@Override
		public int attempt() {
			return 0;
		}

		@Override
		public String runId() {
			return null;
		}

		@Override
		public String worker() {
			return null;
		}

		@Override
		public String outcome() {
			return this.fields.outcome;
		}

	}

	/** A dispatch attempt: the propagators read the stored trace context from the carrier. */
	private static final class DispatchContext extends ReceiverContext<Map<String, String>>
			implements DuctorObservationContext {

		final Fields fields = new Fields(DuctorObservationDocumentation.EFFECT_DISPATCH);

		DispatchContext(Map<String, String> traceContext) {
			super((carrier, key) -> (carrier != null) ? carrier.get(key) : null, Kind.CONSUMER);
			setCarrier(traceContext);
			setName(DuctorObservationDocumentation.EFFECT_DISPATCH.getName());
			setRemoteServiceName("ductor");
		}

		@Override
		public DuctorObservationDocumentation observation() {
			return this.fields.observation;
		}

		@Override
		public String effect() {
			return this.fields.effect;
		}

		@Override
		public String receiver() {
			return this.fields.receiver;
		}

		@Override
		public long intentId() {
			return this.fields.intentId;
		}

		@Override
		public String key() {
			return this.fields.key;
		}

		@Override
		public int attempt() {
			return this.fields.attempt;
		}

		@Override
		public String runId() {
			return this.fields.runId;
		}

		@Override
		public String worker() {
			return null;
		}

		@Override
		public String outcome() {
			return this.fields.outcome;
		}

	}

}
