package io.ductor.idempotency;

/**
 * What a request gets when it arrives while another request with the same idempotency key
 * is still being processed.
 */
public enum DuplicatePolicy {

	/**
	 * Whatever {@code ductor.idempotency.duplicate-policy} says (only for per-call
	 * choices).
	 */
	DEFAULT,

	/**
	 * Park the duplicate until the first request settles, then answer with its outcome
	 * (or run, when the first one failed); give up with an in-flight error after the wait
	 * timeout.
	 */
	WAIT,

	/** Answer in-flight at once. */
	REJECT

}
