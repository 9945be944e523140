package io.ductor.effect;

import java.time.OffsetDateTime;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * What an effect method knows about the attempt that is running it. Forward
 * {@link #idempotencyKey()} to the receiver: it is the same on every attempt of the
 * intent.
 *
 * @param intentId the intent's id
 * @param effectName the effect's name
 * @param idempotencyKey the stable key of the intent
 * @param attempt the attempt number, from 1
 * @param scheduledAt when the attempt was due (database clock)
 */
public record EffectContext(long intentId, String effectName, String idempotencyKey, int attempt,
		OffsetDateTime scheduledAt) {

	private static final ThreadLocal<EffectContext> CURRENT = new ThreadLocal<>();

	/**
	 * The attempt running on this thread.
	 * @return the context
	 * @throws IllegalStateException when no effect is being dispatched on this thread
	 */
	public static EffectContext current() {
		EffectContext context = CURRENT.get();
		if (context == null) {
			throw new IllegalStateException("No durable effect is being dispatched on this thread: "
					+ "EffectContext.current() is only available inside a @DurableEffect method run by the drainer");
		}
		return context;
	}

	/**
	 * The attempt running on this thread, if any.
	 * @return the context, or empty outside a dispatch
	 */
	public static Optional<EffectContext> find() {
		return Optional.ofNullable(CURRENT.get());
	}

	/**
	 * Make this the {@link #current()} context of this thread until the returned scope is
	 * closed, which restores the one before. The drainer does this around every attempt;
	 * a unit test can do it to run an effect method's body outside the drainer.
	 * @return the scope to close, on this thread
	 */
	public Scope makeCurrent() {
		@Nullable EffectContext previous = CURRENT.get();
		CURRENT.set(this);
		return () -> {
			if (previous != null) {
				CURRENT.set(previous);
			}
			else {
				CURRENT.remove();
			}
		};
	}

	/**
	 * The time an {@link EffectContext} is current; closing it restores the one before.
	 */
	@FunctionalInterface
	public interface Scope extends AutoCloseable {

		@Override
		void close();

	}

}
