package io.ductor.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * Ductor's observations, with the key values their default convention
 * ({@link DefaultDuctorObservationConvention}) adds.
 */
public enum DuctorObservationDocumentation implements ObservationDocumentation {

	/**
	 * A tick of a run: {@code outcome} ({@code applied}, {@code duplicate},
	 * {@code terminal}, {@code conflict} or {@code error}) low, {@code ductor.run} high.
	 */
	TICK("ductor.tick", new KeyName[] { LowKeys.OUTCOME }, new KeyName[] { HighKeys.RUN }),

	/**
	 * Recording an effect intent in the caller's transaction: {@code effect},
	 * {@code receiver}, {@code outcome} ({@code recorded}, {@code duplicate} or
	 * {@code error}) low, {@code ductor.key} high. Its trace context is what the intent
	 * carries to its dispatch. Only with
	 * {@code ductor.effects.tracing.observe-recording=true}: otherwise the intent carries
	 * the trace context current where it is recorded, and no observation runs per
	 * recording.
	 */
	EFFECT_SCHEDULE("ductor.effect.schedule", new KeyName[] { LowKeys.EFFECT, LowKeys.RECEIVER, LowKeys.OUTCOME },
			new KeyName[] { HighKeys.KEY }),

	/**
	 * One dispatch attempt: {@code effect}, {@code receiver}, {@code outcome}
	 * ({@code completed}, {@code retry}, {@code failed}, {@code needs_decision},
	 * {@code reconciling} or {@code lease_lost}) low, {@code ductor.intent},
	 * {@code ductor.key}, {@code ductor.attempt} and {@code ductor.run} high.
	 */
	EFFECT_DISPATCH("ductor.effect.dispatch", new KeyName[] { LowKeys.EFFECT, LowKeys.RECEIVER, LowKeys.OUTCOME },
			new KeyName[] { HighKeys.INTENT, HighKeys.KEY, HighKeys.ATTEMPT, HighKeys.RUN }),

	/**
	 * One reconciliation round of an intent whose outcome is unknown, in the trace its
	 * attempts continue: {@code effect}, {@code receiver}, {@code outcome}
	 * ({@code applied}, {@code not_applied}, {@code unknown}, {@code failed},
	 * {@code no_reconciler} or {@code error}) low, {@code ductor.intent},
	 * {@code ductor.key}, {@code ductor.attempt}, {@code ductor.reconcile.round} and
	 * {@code ductor.run} high.
	 */
	EFFECT_RECONCILE("ductor.effect.reconcile", new KeyName[] { LowKeys.EFFECT, LowKeys.RECEIVER, LowKeys.OUTCOME },
			new KeyName[] { HighKeys.INTENT, HighKeys.KEY, HighKeys.ATTEMPT, HighKeys.ROUND, HighKeys.RUN }),

	/**
	 * An ingress reservation: {@code outcome} ({@code reserved}, {@code replay},
	 * {@code in_flight}, {@code fingerprint_mismatch}, {@code opted_out} or
	 * {@code error}) low.
	 */
	IDEMPOTENCY_RESERVE("ductor.idempotency.reserve", new KeyName[] { LowKeys.OUTCOME }, new KeyName[0]),

	/**
	 * A worker round: {@code worker}, {@code outcome} ({@code success} or
	 * {@code failure}) low.
	 */
	WORKER_ROUND("ductor.worker.round", new KeyName[] { LowKeys.WORKER, LowKeys.OUTCOME }, new KeyName[0]);

	private final String observationName;

	private final KeyName[] low;

	private final KeyName[] high;

	DuctorObservationDocumentation(String name, KeyName[] low, KeyName[] high) {
		this.observationName = name;
		this.low = low;
		this.high = high;
	}

	@Override
	public String getName() {
		return this.observationName;
	}

	@Override
	public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
		return DefaultDuctorObservationConvention.class;
	}

	@Override
	public KeyName[] getLowCardinalityKeyNames() {
		return this.low;
	}

	@Override
	public KeyName[] getHighCardinalityKeyNames() {
		return this.high;
	}

	@Override
	public String getPrefix() {
		return "ductor.";
	}

	/** Low-cardinality keys: on meters and spans. */
	public enum LowKeys implements KeyName {

		/** The effect name. */
		EFFECT {
			@Override
			public String asString() {
				return "effect";
			}
		},

		/** The receiver kind. */
		RECEIVER {
			@Override
			public String asString() {
				return "receiver";
			}
		},

		/** How the work ended. */
		OUTCOME {
			@Override
			public String asString() {
				return "outcome";
			}
		},

		/** The worker's name. */
		WORKER {
			@Override
			public String asString() {
				return "worker";
			}
		}

	}

	/** High-cardinality keys: on spans only. */
	public enum HighKeys implements KeyName {

		/** The intent id. */
		INTENT {
			@Override
			public String asString() {
				return "ductor.intent";
			}
		},

		/** The idempotency key. */
		KEY {
			@Override
			public String asString() {
				return "ductor.key";
			}
		},

		/** The attempt number. */
		ATTEMPT {
			@Override
			public String asString() {
				return "ductor.attempt";
			}
		},

		/** The run id. */
		RUN {
			@Override
			public String asString() {
				return "ductor.run";
			}
		},

		/** The reconciliation round. */
		ROUND {
			@Override
			public String asString() {
				return "ductor.reconcile.round";
			}
		}

	}

}
