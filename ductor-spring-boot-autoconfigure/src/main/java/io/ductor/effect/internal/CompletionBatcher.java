package io.ductor.effect.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.ductor.effect.internal.IntentOutcomes.Completion;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.DuctorThreads.Deadline;

/**
 * The completion thread of a drain session: records the outcomes of the effects that ran
 * in batches of up to {@value #MAX_COMPLETION_BATCH}, each one statement fenced by lease
 * owner and attempt. A batch that cannot be recorded is kept and tried again: an outcome
 * is never dropped while the session runs.
 */
public final class CompletionBatcher {

	private static final Log logger = LogFactory.getLog(EffectDrainer.class);

	static final int MAX_COMPLETION_BATCH = 1000;

	private final String owner;

	private final IntentOutcomes outcomes;

	private final Duration retryInterval;

	private final Consumer<List<DrainClaim>> recorded;

	private final Consumer<List<Settled>> settledListener;

	private final LinkedBlockingQueue<Outcome> completions = new LinkedBlockingQueue<>();

	private final Thread thread;

	private volatile boolean recording = true;

	/**
	 * @param owner the session's lease owner
	 * @param outcomes where outcomes are recorded
	 * @param retryInterval the pause before a batch that failed is tried again
	 * @param recorded told about the claims of every batch recorded (their outcomes
	 * applied or fenced off), before {@code settledListener}
	 * @param settledListener told about the intents each batch settled
	 * @param threads where its thread comes from
	 */
	CompletionBatcher(String owner, IntentOutcomes outcomes, Duration retryInterval,
			Consumer<List<DrainClaim>> recorded, Consumer<List<Settled>> settledListener, DuctorThreads threads) {
		this.owner = owner;
		this.outcomes = outcomes;
		this.retryInterval = retryInterval;
		this.recorded = recorded;
		this.settledListener = settledListener;
		this.thread = threads.newThread("completer", this::completionLoop);
	}

	void start() {
		this.thread.start();
	}

	/** Queues the outcome of a claim's attempt, to be recorded with the next batch. */
	void add(DrainClaim claim, Completion completion) {
		this.completions.add(new Outcome(claim, completion));
	}

	/**
	 * Records what is queued, then ends; a batch still failing when stopped is left to
	 * the reconciler.
	 * @param deadline when to stop waiting for the last batches
	 */
	void stop(Deadline deadline) {
		this.recording = false;
		deadline.joinOrInterrupt(this.thread);
	}

	private void completionLoop() {
		List<Outcome> batch = new ArrayList<>();
		while (this.recording || !this.completions.isEmpty() || !batch.isEmpty()) {
			try {
				if (batch.isEmpty()) {
					Outcome first = this.completions.poll(50, TimeUnit.MILLISECONDS);
					if (first == null) {
						continue;
					}
					batch.add(first);
					this.completions.drainTo(batch, MAX_COMPLETION_BATCH - 1);
				}
				List<Completion> outcomes = new ArrayList<>(batch.size());
				List<DrainClaim> claims = new ArrayList<>(batch.size());
				for (Outcome outcome : batch) {
					outcome.claim().settling = true;
					outcomes.add(outcome.completion());
					claims.add(outcome.claim());
				}
				List<Settled> settled = this.outcomes.complete(this.owner, outcomes);
				if (settled.size() < batch.size()) {
					logger.info((batch.size() - settled.size()) + " effect outcome(s) arrived after their lease "
							+ "was lost and were ignored; a newer attempt owns those intents");
				}
				batch.clear();
				this.recorded.accept(claims);
				this.settledListener.accept(settled);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (RuntimeException ex) {
				if (!this.recording) {
					logger.warn("Ductor's drainer stopped before it could record " + batch.size()
							+ " effect outcome(s); " + "their leases expire and the reconciler redrives them", ex);
					return;
				}
				// keep the batch and try again: an outcome is never dropped while the
				// drainer runs
				logger.warn("Ductor's drainer could not record " + batch.size() + " effect outcome(s); retrying", ex);
				sleep(this.retryInterval);
			}
		}
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private record Outcome(DrainClaim claim, Completion completion) {
	}

}
