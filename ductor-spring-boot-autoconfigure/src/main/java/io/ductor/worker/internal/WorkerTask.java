package io.ductor.worker.internal;

/**
 * One round of a worker's job: sweep a batch, purge a batch, redrive a batch.
 */
@FunctionalInterface
public interface WorkerTask {

	/**
	 * Do one bounded batch of work.
	 * @return {@code true} when more work is known to be waiting, so the worker runs
	 * again at once instead of waiting for its next interval
	 * @throws Exception when the round failed; the worker logs it and tries again at its
	 * next interval
	 */
	boolean runOnce() throws Exception;

}
