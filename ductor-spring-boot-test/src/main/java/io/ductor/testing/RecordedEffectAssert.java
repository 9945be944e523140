package io.ductor.testing;

import java.util.Arrays;
import java.util.Objects;

import org.assertj.core.api.AbstractAssert;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.ReconcileOutcome;

/**
 * Assertions on one recorded effect intent, as it is stored now.
 */
public class RecordedEffectAssert extends AbstractAssert<RecordedEffectAssert, EffectIntent> {

	private final JsonMapper mapper;

	RecordedEffectAssert(EffectIntent actual, JsonMapper mapper) {
		super(actual, RecordedEffectAssert.class);
		this.mapper = mapper;
	}

	/**
	 * @param key the expected idempotency key
	 * @return this
	 */
	public RecordedEffectAssert hasKey(String key) {
		if (!Objects.equals(this.actual.idempotencyKey(), key)) {
			failWithMessage("Expected effect '%s' to have key '%s' but it has '%s'", this.actual.effectName(), key,
					this.actual.idempotencyKey());
		}
		return this;
	}

	/**
	 * Verifies the stored arguments: equal, as JSON, to {@code arguments} written by the
	 * application's mapper.
	 * @param arguments the expected arguments, in order
	 * @return this
	 */
	public RecordedEffectAssert hasArguments(Object... arguments) {
		JsonNode expected = this.mapper.valueToTree(Arrays.asList(arguments));
		JsonNode stored = this.mapper.readTree(this.actual.payloadJson());
		if (!expected.equals(stored)) {
			failWithMessage("Expected effect '%s' to have arguments %s but it has %s", this.actual.effectName(),
					expected, stored);
		}
		return this;
	}

	/**
	 * @param status the expected status
	 * @return this
	 */
	public RecordedEffectAssert hasStatus(EffectStatus status) {
		if (this.actual.status() != status) {
			failWithMessage("Expected effect '%s' (key '%s') to be %s but it is %s after %d attempt(s); last error: %s",
					this.actual.effectName(), this.actual.idempotencyKey(), status, this.actual.status(),
					this.actual.attempts(), this.actual.lastError());
		}
		return this;
	}

	/**
	 * Same as {@code hasStatus(EffectStatus.COMPLETED)}.
	 * @return this
	 */
	public RecordedEffectAssert isCompleted() {
		return hasStatus(EffectStatus.COMPLETED);
	}

	/**
	 * @param attempts the expected number of attempts started
	 * @return this
	 */
	public RecordedEffectAssert hasAttempts(int attempts) {
		if (this.actual.attempts() != attempts) {
			failWithMessage("Expected effect '%s' to have had %d attempt(s) but it had %d", this.actual.effectName(),
					attempts, this.actual.attempts());
		}
		return this;
	}

	/**
	 * @param fragment what the last error contains
	 * @return this
	 */
	public RecordedEffectAssert hasErrorContaining(String fragment) {
		if (this.actual.lastError() == null || !this.actual.lastError().contains(fragment)) {
			failWithMessage("Expected the last error of effect '%s' to contain '%s' but it is %s",
					this.actual.effectName(), fragment, this.actual.lastError());
		}
		return this;
	}

	/**
	 * Verifies that the effect's reconciler was asked about it at least once.
	 * @return this
	 */
	public RecordedEffectAssert wasReconciled() {
		if (this.actual.reconcileRounds() == 0) {
			failWithMessage(
					"Expected effect '%s' (key '%s') to have been reconciled but its reconciler was never"
							+ " asked; it is %s after %d attempt(s)",
					this.actual.effectName(), this.actual.idempotencyKey(), this.actual.status(),
					this.actual.attempts());
		}
		return this;
	}

	/**
	 * Verifies that the effect's reconciler was never asked about it.
	 * @return this
	 */
	public RecordedEffectAssert wasNotReconciled() {
		if (this.actual.reconcileRounds() != 0) {
			failWithMessage(
					"Expected effect '%s' (key '%s') not to have been reconciled but its reconciler was asked"
							+ " %d time(s), last answering %s",
					this.actual.effectName(), this.actual.idempotencyKey(), this.actual.reconcileRounds(),
					this.actual.reconcileOutcome());
		}
		return this;
	}

	/**
	 * @param rounds the expected number of times its reconciler was asked about the last
	 * attempt whose outcome was unknown
	 * @return this
	 */
	public RecordedEffectAssert hasReconcileRounds(int rounds) {
		if (this.actual.reconcileRounds() != rounds) {
			failWithMessage(
					"Expected the reconciler of effect '%s' (key '%s') to have been asked %d time(s) but it"
							+ " was asked %d time(s)",
					this.actual.effectName(), this.actual.idempotencyKey(), rounds, this.actual.reconcileRounds());
		}
		return this;
	}

	/**
	 * Verifies the reconciler's last answer about the effect.
	 * @param outcome the expected answer
	 * @return this
	 */
	public RecordedEffectAssert hasReconcileOutcome(ReconcileOutcome outcome) {
		if (!Objects.equals(this.actual.reconcileOutcome(), outcome.name())) {
			failWithMessage("Expected the reconciler of effect '%s' (key '%s') to have last answered %s but %s",
					this.actual.effectName(), this.actual.idempotencyKey(), outcome,
					(this.actual.reconcileOutcome() != null) ? "it answered " + this.actual.reconcileOutcome()
							+ " (after " + this.actual.reconcileRounds() + " round(s))" : "it was never asked");
		}
		return this;
	}

}
