package io.ductor.idempotency;

import io.ductor.internal.Ids;

/**
 * One request to deduplicate: which decision it asks for and what it asks.
 * <p>
 * A key is an opaque client-chosen string of 1 to {@value #MAX_KEY_LENGTH} visible ASCII
 * characters ({@code 0x21} to {@code 0x7E}: letters, digits and punctuation, no spaces);
 * a UUID is a good key. The empty key opts out: the request is always treated as a fresh
 * one and nothing is stored. The tenant scope is at most 200 characters without control
 * characters and may be empty (no tenants); the pool is an identifier (see {@link Ids}).
 * The fingerprint identifies the request's content, for example a hash of its body (see
 * {@link Fingerprints}).
 *
 * @param tenantScope whose key it is: keys of different tenants never meet
 * @param pool the kind of operation the key belongs to (an endpoint, a message type)
 * @param key the idempotency key, or empty to opt out
 * @param fingerprint what the request asks; a key reused with another fingerprint is
 * refused
 */
public record IdempotentRequest(String tenantScope, String pool, String key, String fingerprint) {

	/** The longest key accepted, in characters. */
	public static final int MAX_KEY_LENGTH = 255;

	/**
	 * Validate the request.
	 * @throws InvalidIdempotencyKeyException when the key is null, too long or has a
	 * character outside {@code 0x21}-{@code 0x7E}
	 * @throws IllegalArgumentException when the scope, pool or fingerprint is not
	 * acceptable
	 */
	public IdempotentRequest {
		if (tenantScope == null) {
			throw new IllegalArgumentException("tenantScope must not be null; use \"\" when there are no tenants");
		}
		if (!tenantScope.isEmpty()) {
			Ids.require("tenantScope", tenantScope);
		}
		Ids.require("pool", pool);
		checkKey(key);
		Ids.require("fingerprint", fingerprint);
	}

	/**
	 * @return whether the key is empty, so the request is not deduplicated
	 */
	public boolean optedOut() {
		return this.key.isEmpty();
	}

	/**
	 * Check an idempotency key.
	 * @param key the key
	 * @return the key
	 * @throws InvalidIdempotencyKeyException naming the problem
	 */
	public static String checkKey(String key) {
		if (key == null) {
			throw new InvalidIdempotencyKeyException("idempotency key must not be null; pass \"\" to opt out");
		}
		if (key.length() > MAX_KEY_LENGTH) {
			throw new InvalidIdempotencyKeyException(
					"idempotency key must be at most " + MAX_KEY_LENGTH + " characters but has " + key.length());
		}
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			if (c < 0x21 || c > 0x7E) {
				throw new InvalidIdempotencyKeyException(
						"idempotency key must consist of visible ASCII characters (0x21-0x7E) but has U+%04X at index %d"
							.formatted((int) c, i));
			}
		}
		return key;
	}

	/**
	 * @return the key, its pool and tenant, for messages
	 */
	public String describe() {
		return "Idempotency key '" + this.key + "' (pool '" + this.pool + "'"
				+ (this.tenantScope.isEmpty() ? "" : ", tenant '" + this.tenantScope + "'") + ")";
	}

}
