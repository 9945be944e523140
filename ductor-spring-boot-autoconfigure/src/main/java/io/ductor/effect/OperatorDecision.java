package io.ductor.effect;

import java.util.Objects;

/**
 * Why and by whom an operator moved an intent (retried, resolved or cancelled it). It is
 * stored with the intent, in the statement that moves it ({@code decision_reason},
 * {@code decided_by}, and {@code decided_at} by the database clock), so that a decision
 * is never without its reason.
 *
 * @param reason why, as the operator wrote it
 * @param by who decided: the authenticated principal's name, or {@code "anonymous"}
 */
public record OperatorDecision(String reason, String by) {

	/** The name recorded when nobody is authenticated. */
	public static final String ANONYMOUS = "anonymous";

	public OperatorDecision {
		Objects.requireNonNull(reason, "reason must not be null");
		if (reason.isBlank()) {
			throw new IllegalArgumentException("reason must not be blank");
		}
		by = (by == null || by.isBlank()) ? ANONYMOUS : by;
	}

}
