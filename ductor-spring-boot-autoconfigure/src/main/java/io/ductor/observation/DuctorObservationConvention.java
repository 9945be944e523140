package io.ductor.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The convention of Ductor's observations: a bean of this type replaces
 * {@link DefaultDuctorObservationConvention} (extend it to add or change key values).
 */
public interface DuctorObservationConvention extends ObservationConvention<Observation.Context> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof DuctorObservationContext;
	}

}
