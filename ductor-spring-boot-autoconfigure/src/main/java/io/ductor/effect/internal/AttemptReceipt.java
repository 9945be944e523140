package io.ductor.effect.internal;

import org.jspecify.annotations.Nullable;

/**
 * What the receiver acknowledged for the attempt running on this thread, reported by the
 * effect (Ductor's messaging relays: the broker's acknowledgement) and stored with the
 * intent ({@code eec_effect_intent.receipt}) by the completion of that attempt; nothing
 * when the attempt fails. For Ductor's own modules, not applications.
 */
public final class AttemptReceipt {

	private static final int MAX_LENGTH = 1000;

	private static final ThreadLocal<@Nullable String> CURRENT = new ThreadLocal<>();

	private AttemptReceipt() {
	}

	/**
	 * Report what the receiver acknowledged for the running attempt; the last report of
	 * an attempt that completes is stored.
	 * @param receipt a short text, cut at 1000 characters
	 */
	public static void record(String receipt) {
		CURRENT.set((receipt.length() <= MAX_LENGTH) ? receipt : receipt.substring(0, MAX_LENGTH));
	}

	static void clear() {
		CURRENT.remove();
	}

	static @Nullable String take() {
		String receipt = CURRENT.get();
		CURRENT.remove();
		return receipt;
	}

}
