package io.ductor.effect;

import io.ductor.DuctorException;

/**
 * An operator action named an intent that does not exist or is not in a status the action
 * applies to. Nothing was changed.
 */
public class EffectIntentStateException extends DuctorException {

	public EffectIntentStateException(String message) {
		super(message);
	}

}
