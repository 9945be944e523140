package io.ductor.effect.internal;

import java.lang.management.ManagementFactory;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * This instance's drainer as the rest of the feature sees it, whether or not it runs
 * here: what wakes it, what reserves a place in it for an intent due at commit, and the
 * instance id that signs this instance's notifications. The drainer registers itself
 * while it runs, so the writer, the operator's API and the reconciler need no drainer
 * bean (there is none with {@code ductor.effects.drainer.enabled=false}).
 */
public final class LocalDrainer {

	private final String instanceId = ManagementFactory.getRuntimeMXBean().getName() + "/"
			+ UUID.randomUUID().toString().substring(0, 8);

	private volatile @Nullable EffectDrainer running;

	/**
	 * Takes the drainer's place for dispatch at commit while the drainer does not run.
	 */
	private volatile @Nullable CallingThreadDrainer atCommit;

	/**
	 * @return what identifies this instance for as long as it lives (it signs the
	 * notifications its commits send)
	 */
	public String instanceId() {
		return this.instanceId;
	}

	/** Claim at once instead of waiting for the next poll, if the drainer runs here. */
	public void wakeUp() {
		EffectDrainer drainer = this.running;
		if (drainer != null) {
			drainer.wakeUp();
		}
	}

	/**
	 * For tests with the drainer off: intents due at commit are recorded leased to
	 * {@code drainer} and handed to it at commit, as they would be to the drainer (when
	 * dispatch at commit is on, which it is by default).
	 * @param drainer the calling-thread drainer, or {@code null} to stop
	 */
	public void dispatchAtCommitTo(@Nullable CallingThreadDrainer drainer) {
		this.atCommit = drainer;
	}

	/**
	 * A place for an intent due at commit: in the drainer when it runs, else in the
	 * calling-thread drainer that took its place, if any.
	 */
	@Nullable Handoff reserve() {
		EffectDrainer drainer = this.running;
		if (drainer != null && drainer.isRunning()) {
			return drainer.reserve();
		}
		CallingThreadDrainer atCommit = this.atCommit;
		return (atCommit != null) ? atCommit.reserve() : null;
	}

	void started(EffectDrainer drainer) {
		this.running = drainer;
	}

	void stopped(EffectDrainer drainer) {
		if (this.running == drainer) {
			this.running = null;
		}
	}

}
