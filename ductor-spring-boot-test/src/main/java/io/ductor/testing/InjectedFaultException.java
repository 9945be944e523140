package io.ductor.testing;

/**
 * What an attempt throws when a test asked
 * {@link DuctorTester#outcomeUnknownNext(String)}: an ordinary exception, so the
 * attempt's outcome is unknown to Ductor as after a timeout. A receiver that cannot
 * deduplicate then waits for a decision (or its reconciler is asked); one that
 * deduplicates is retried with the same key.
 */
public class InjectedFaultException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * @param message what the fault stands for
	 */
	public InjectedFaultException(String message) {
		super(message);
	}

}
