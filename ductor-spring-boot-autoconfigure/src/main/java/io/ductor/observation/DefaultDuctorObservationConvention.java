package io.ductor.observation;

import org.jspecify.annotations.Nullable;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;

import io.ductor.observation.DuctorObservationDocumentation.HighKeys;
import io.ductor.observation.DuctorObservationDocumentation.LowKeys;

/**
 * The default names and key values of Ductor's observations, as
 * {@link DuctorObservationDocumentation} lists them.
 */
public class DefaultDuctorObservationConvention implements DuctorObservationConvention {

	/** The shared instance. */
	public static final DefaultDuctorObservationConvention INSTANCE = new DefaultDuctorObservationConvention();

	private static final String UNKNOWN = "unknown";

	/**
	 * @return {@code null}: every context carries its observation's name
	 */
	@Override
	public @Nullable String getName() {
		return null;
	}

	@Override
	public String getContextualName(Observation.Context context) {
		DuctorObservationContext ductor = (DuctorObservationContext) context;
		return switch (ductor.observation()) {
			case TICK -> "ductor tick";
			case EFFECT_SCHEDULE -> "ductor schedule " + ductor.effect();
			case EFFECT_DISPATCH -> "ductor dispatch " + ductor.effect();
			case EFFECT_RECONCILE -> "ductor reconcile " + ductor.effect();
			case IDEMPOTENCY_RESERVE -> "ductor reserve";
			case WORKER_ROUND -> "ductor " + ductor.worker();
		};
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(Observation.Context context) {
		DuctorObservationContext ductor = (DuctorObservationContext) context;
		KeyValue outcome = LowKeys.OUTCOME.withValue(orUnknown(ductor.outcome()));
		return switch (ductor.observation()) {
			case TICK, IDEMPOTENCY_RESERVE -> KeyValues.of(outcome);
			case EFFECT_SCHEDULE, EFFECT_DISPATCH, EFFECT_RECONCILE ->
				KeyValues.of(LowKeys.EFFECT.withValue(orUnknown(ductor.effect())),
						LowKeys.RECEIVER.withValue(orUnknown(ductor.receiver())), outcome);
			case WORKER_ROUND -> KeyValues.of(LowKeys.WORKER.withValue(orUnknown(ductor.worker())), outcome);
		};
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(Observation.Context context) {
		DuctorObservationContext ductor = (DuctorObservationContext) context;
		return switch (ductor.observation()) {
			case TICK -> KeyValues.of(HighKeys.RUN.withValue(orUnknown(ductor.runId())));
			case EFFECT_SCHEDULE -> KeyValues.of(HighKeys.KEY.withValue(orUnknown(ductor.key())));
			case EFFECT_DISPATCH -> {
				KeyValues values = KeyValues.of(HighKeys.INTENT.withValue(Long.toString(ductor.intentId())),
						HighKeys.KEY.withValue(orUnknown(ductor.key())),
						HighKeys.ATTEMPT.withValue(Integer.toString(ductor.attempt())));
				yield (ductor.runId() != null) ? values.and(HighKeys.RUN.withValue(ductor.runId())) : values;
			}
			case EFFECT_RECONCILE -> {
				KeyValues values = KeyValues.of(HighKeys.INTENT.withValue(Long.toString(ductor.intentId())),
						HighKeys.KEY.withValue(orUnknown(ductor.key())),
						HighKeys.ATTEMPT.withValue(Integer.toString(ductor.attempt())),
						HighKeys.ROUND.withValue(Integer.toString(ductor.round())));
				yield (ductor.runId() != null) ? values.and(HighKeys.RUN.withValue(ductor.runId())) : values;
			}
			case IDEMPOTENCY_RESERVE, WORKER_ROUND -> KeyValues.empty();
		};
	}

	private static String orUnknown(String value) {
		return (value != null) ? value : UNKNOWN;
	}

}
