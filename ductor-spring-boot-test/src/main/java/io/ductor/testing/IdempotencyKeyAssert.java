package io.ductor.testing;

import java.util.Objects;

import org.assertj.core.api.AbstractAssert;

/**
 * Assertions on an idempotency key's stored decision, from
 * {@link DuctorTester#assertIdempotencyKey(String)}.
 */
public class IdempotencyKeyAssert extends AbstractAssert<IdempotencyKeyAssert, StoredKey> {

	private final String key;

	IdempotencyKeyAssert(String key, StoredKey actual) {
		super(actual, IdempotencyKeyAssert.class);
		this.key = key;
	}

	/**
	 * Verifies that the key is stored.
	 * @return this
	 */
	public IdempotencyKeyAssert exists() {
		if (this.actual == null) {
			failWithMessage("Expected idempotency key '%s' to be stored, but it is not", this.key);
		}
		return this;
	}

	/**
	 * Verifies that the key is not stored.
	 * @return this
	 */
	public IdempotencyKeyAssert doesNotExist() {
		if (this.actual != null) {
			failWithMessage("Expected idempotency key '%s' not to be stored, but it is: %s", this.key, this.actual);
		}
		return this;
	}

	/**
	 * Verifies that the key holds a completed decision (expired or not).
	 * @return this
	 */
	public IdempotencyKeyAssert isCompleted() {
		return hasStatus("completed");
	}

	/**
	 * @param status {@code pending}, {@code completed} or {@code failed_before_commit}
	 * @return this
	 */
	public IdempotencyKeyAssert hasStatus(String status) {
		exists();
		if (!this.actual.status().equals(status)) {
			failWithMessage("Expected idempotency key '%s' to be %s but it is %s", this.key, status,
					this.actual.status());
		}
		return this;
	}

	/**
	 * @param decisionId the decision the key was completed with
	 * @return this
	 */
	public IdempotencyKeyAssert hasDecision(String decisionId) {
		exists();
		if (!Objects.equals(this.actual.decisionId(), decisionId)) {
			failWithMessage("Expected idempotency key '%s' to hold decision '%s' but it holds '%s'", this.key,
					decisionId, this.actual.decisionId());
		}
		return this;
	}

	/**
	 * @param status the HTTP status of the stored response
	 * @return this
	 */
	public IdempotencyKeyAssert hasResponseStatus(int status) {
		exists();
		if (!Objects.equals(this.actual.responseStatus(), status)) {
			failWithMessage("Expected idempotency key '%s' to store a %d response but it stores %s", this.key, status,
					this.actual.responseStatus());
		}
		return this;
	}

	/**
	 * Verifies that the key's TTL has passed by Ductor's clock: the next request with it
	 * runs again.
	 * @return this
	 */
	public IdempotencyKeyAssert isExpired() {
		exists();
		if (!this.actual.expired()) {
			failWithMessage("Expected idempotency key '%s' to have expired, but it is valid until %s", this.key,
					this.actual.expiresAt());
		}
		return this;
	}

	/**
	 * Verifies that the key's TTL has not passed by Ductor's clock.
	 * @return this
	 */
	public IdempotencyKeyAssert isNotExpired() {
		exists();
		if (this.actual.expired()) {
			failWithMessage("Expected idempotency key '%s' to be valid, but it expired at %s", this.key,
					this.actual.expiresAt());
		}
		return this;
	}

}
