package io.ductor.effect.internal;

import io.ductor.jdbc.internal.PostgresNotificationListener;

/**
 * Wakes this instance's drainer when another instance commits a due intent, and after the
 * notification listener reconnects (notifications sent while it was away are lost).
 */
public final class DrainerWakeUps implements PostgresNotificationListener.NotificationHandler {

	private final LocalDrainer drainer;

	public DrainerWakeUps(LocalDrainer drainer) {
		this.drainer = drainer;
	}

	@Override
	public void notified(String payload) {
		if (!this.drainer.instanceId().equals(payload)) {
			this.drainer.wakeUp();
		}
	}

	@Override
	public void connected() {
		this.drainer.wakeUp();
	}

}
