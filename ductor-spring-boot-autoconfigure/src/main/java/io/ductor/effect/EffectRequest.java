package io.ductor.effect;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A programmatic call of a durable effect, for
 * {@link EffectOutbox#schedule(EffectRequest)}. Unset options fall back to the effect's
 * {@link DurableEffect} attributes.
 *
 * @param effectName the effect's name
 * @param args the arguments, as the effect method takes them
 * @param key the idempotency key, or {@code null}
 * @param orderingKey the ordering key, or {@code null}
 * @param delay the wait before the first attempt, or {@code null}
 * @param compensation the effect that undoes this one if the run fails, or {@code null}
 * for the effect's declared {@link DurableEffect#compensation()}, if any
 */
public record EffectRequest(String effectName, List<@Nullable Object> args, @Nullable String key,
		@Nullable String orderingKey, @Nullable Duration delay, @Nullable EffectRequest compensation) {

	/**
	 * A request without a compensation of its own.
	 * @param effectName the effect's name
	 * @param args the arguments
	 * @param key the idempotency key, or {@code null}
	 * @param orderingKey the ordering key, or {@code null}
	 * @param delay the wait before the first attempt, or {@code null}
	 */
	public EffectRequest(String effectName, List<Object> args, String key, String orderingKey, Duration delay) {
		this(effectName, args, key, orderingKey, delay, null);
	}

	public EffectRequest {
		Objects.requireNonNull(effectName, "effectName must not be null");
		// an unmodifiable copy that keeps null elements (List.copyOf refuses them)
		args = Objects.requireNonNull(args, "args must not be null").stream().toList();
		if (delay != null && delay.isNegative()) {
			throw new IllegalArgumentException("delay must not be negative but was " + delay);
		}
	}

	/**
	 * A call of {@code effectName} with {@code args}.
	 * @param effectName the effect's name
	 * @param args the arguments; {@code null} elements are allowed
	 * @return the request
	 */
	public static EffectRequest of(String effectName, @Nullable Object... args) {
		return new EffectRequest(effectName, Arrays.asList(args), null, null, null);
	}

	/**
	 * @param key the idempotency key @return a copy with that key
	 */
	public EffectRequest withKey(String key) {
		return new EffectRequest(this.effectName, this.args, key, this.orderingKey, this.delay, this.compensation);
	}

	/**
	 * @param orderingKey the ordering key @return a copy with that ordering key
	 */
	public EffectRequest withOrderingKey(String orderingKey) {
		return new EffectRequest(this.effectName, this.args, this.key, orderingKey, this.delay, this.compensation);
	}

	/**
	 * @param delay the wait before the first attempt @return a copy with that delay
	 */
	public EffectRequest withDelay(Duration delay) {
		return new EffectRequest(this.effectName, this.args, this.key, this.orderingKey, delay, this.compensation);
	}

	/**
	 * A copy that registers {@code compensation} as the undo of this call with the run
	 * whose tick schedules it: if the run fails, {@code compensation} is recorded with
	 * the key {@code "compensate:" + this call's key} (its own key, ordering key and
	 * delay are not used). Scheduling it outside a tick of a run is refused.
	 * @param compensation the effect and arguments that undo this call
	 * @return a copy with that compensation
	 */
	public EffectRequest withCompensation(EffectRequest compensation) {
		Objects.requireNonNull(compensation, "compensation must not be null");
		return new EffectRequest(this.effectName, this.args, this.key, this.orderingKey, this.delay, compensation);
	}

}
