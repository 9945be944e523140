package io.ductor.effect.internal;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.ductor.worker.internal.DuctorThreads;

/**
 * Wakes the drainers of other instances when a transaction commits a due intent, with
 * {@code pg_notify} on {@link IntentRecorder#CHANNEL}, signed with the sender's drainer
 * owner so that the sender's own listener can skip it (its drainer is woken in process).
 * <p>
 * {@link Mode#AFTER_COMMIT} sends it right after the commit from one thread of its own,
 * at most one every {@value #SPACING_MILLIS} ms: commits that arrive meanwhile share the
 * next one, so a busy producer costs the database a few hundred notifications a second,
 * not one per commit. A {@code pg_notify} inside the committing transaction
 * ({@link Mode#IN_TRANSACTION}) is delivered atomically with the commit, but PostgreSQL
 * then commits notifying transactions one at a time: it holds a database-wide lock from
 * before the commit record until after its flush. Sent afterwards, in a transaction of
 * its own that does not wait for the flush, the notification holds up no commit; if the
 * JVM dies between a commit and its notification, the other instances find the intent at
 * their next poll.
 */
public final class CommitNotifier implements AutoCloseable {

	/** When the notification is sent. */
	public enum Mode {

		/** Never: other instances find intents at their next poll. */
		OFF,

		/** Right after the commit, from the notifier's thread. */
		AFTER_COMMIT,

		/** Inside the committing transaction, delivered by its commit. */
		IN_TRANSACTION

	}

	private static final Log logger = LogFactory.getLog(CommitNotifier.class);

	static final long SPACING_MILLIS = 2;

	private final IntentRecorder recorder;

	private final String sender;

	private final Mode mode;

	private final AtomicBoolean queued = new AtomicBoolean();

	private final ThreadPoolExecutor executor;

	private final DuctorThreads threads;

	/**
	 * @param recorder sends the notification
	 * @param sender the payload: lets the sender's own listener skip what it already
	 * knows
	 * @param mode when to notify
	 * @param threads where its thread comes from
	 */
	public CommitNotifier(IntentRecorder recorder, String sender, Mode mode, DuctorThreads threads) {
		this.threads = threads;
		this.recorder = recorder;
		this.sender = sender;
		this.mode = mode;
		// one thread at most, gone after a quiet spell
		this.executor = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
				threads.platformThreads("commit-notifier"));
	}

	/** Called once in each transaction that records a due intent, before it commits. */
	void beforeCommit() {
		if (this.mode == Mode.IN_TRANSACTION) {
			this.recorder.notifyDrainers(this.sender);
		}
	}

	/** Called after such a transaction committed; returns at once. */
	void afterCommit() {
		if (this.mode == Mode.AFTER_COMMIT && this.queued.compareAndSet(false, true) && !this.executor.isShutdown()) {
			try {
				this.executor.execute(this::send);
			}
			catch (RuntimeException ex) {
				this.queued.set(false);
				logger.debug("Ductor's commit notifier is shut down; other instances find intents at their next poll",
						ex);
			}
		}
	}

	private void send() {
		// cleared first, so a commit during the send asks for another notification
		this.queued.set(false);
		try {
			this.recorder.notifyDrainersNow(this.sender);
			Thread.sleep(SPACING_MILLIS);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not notify the drainers of other instances; they find the intents at their next poll",
					ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Ends its thread: a notification under way is sent first, within what is left of
	 * Ductor's one shutdown deadline ({@code ductor.shutdown-timeout}), after which it is
	 * interrupted.
	 */
	@Override
	public void close() {
		this.executor.shutdown();
		this.threads.stopDeadline().awaitOrInterrupt(this.executor);
	}

}
