package io.ductor.idempotency.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

import io.ductor.idempotency.IdempotentRequest;

/**
 * The advisory lock a reservation takes for its key, a 64-bit number: a duplicate that
 * finds it taken knows without waiting that the key is being reserved. Two keys may still
 * share a lock (a collision); the reservation tells the two apart before it answers in
 * flight (see {@link KeyReserver}), so a collision only makes a request look again.
 */
@FunctionalInterface
public interface LockKeys {

	/**
	 * The first 64 bits of the SHA-256 of the key's tenant scope, pool and key.
	 */
	LockKeys SHA256 = (request) -> {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256")
				.digest(DuplicateWaiters.waiterId(request).getBytes(StandardCharsets.UTF_8));
			return ByteBuffer.wrap(digest).getLong();
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required of every Java platform", ex);
		}
	};

	/**
	 * @param request a key
	 * @return the number of its advisory lock
	 */
	long lockKey(IdempotentRequest request);

}
