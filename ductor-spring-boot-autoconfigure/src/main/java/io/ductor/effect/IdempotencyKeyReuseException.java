package io.ductor.effect;

import io.ductor.DuctorException;

/**
 * An idempotency key was used again for a different effect or different arguments. A key stays
 * bound to its operation and payload for the life of the intent; nothing was written.
 */
public class IdempotencyKeyReuseException extends DuctorException {

	public IdempotencyKeyReuseException(String key, String existingEffect, String newEffect) {
		super("Idempotency key '" + key + "' is already bound to an intent of effect '" + existingEffect
				+ "' with other arguments; cannot reuse it for '" + newEffect
				+ "' with these arguments. Derive keys from the operation and its payload.");
	}

}
