package io.ductor.effect.internal;

import org.jspecify.annotations.Nullable;

import io.ductor.effect.EffectContext;

/**
 * The attempt being dispatched on this thread, bound by the dispatcher and read by
 * {@link EffectContext#current()}.
 */
public final class EffectContextHolder {

	private static final ThreadLocal<EffectContext> CURRENT = new ThreadLocal<>();

	private EffectContextHolder() {
	}

	/**
	 * @return the attempt running on this thread, or {@code null} outside a dispatch
	 */
	public static @Nullable EffectContext get() {
		return CURRENT.get();
	}

	static void set(EffectContext context) {
		CURRENT.set(context);
	}

	static void clear() {
		CURRENT.remove();
	}

}
