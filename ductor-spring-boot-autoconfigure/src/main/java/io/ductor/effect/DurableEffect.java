package io.ductor.effect;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a public {@code void} method of a Spring bean as a durable effect. Calling it
 * inside an active transaction does not run it: it records an intent
 * ({@code eec_effect_intent} row) in that transaction and returns. After the transaction
 * commits, Ductor's drainer runs the real method, at least once, with
 * {@link EffectContext#current()} telling it the stable idempotency key to forward to the
 * receiver. A rolled-back transaction leaves no intent and no call.
 * <p>
 * Like every Spring proxy-based annotation, it only takes effect on calls that go through
 * the bean's proxy: a call from another method of the same object ({@code this.send(..)})
 * runs the method directly. Methods that cannot be intercepted (not public, not
 * {@code void}, {@code final} or {@code static}) fail start-up.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DurableEffect {

	/**
	 * The stable name of the effect, stored with each intent and used to find the method
	 * when it is dispatched. Defaults to {@code SimpleClassName.methodName}. Keep it
	 * stable across releases: an intent whose effect no longer exists is marked
	 * {@code failed}.
	 * @return the effect name
	 */
	String name() default "";

	/**
	 * SpEL expression over the method's parameters ({@code #orderId}, {@code #p0}) giving
	 * the idempotency key, at most 200 characters. Calling the effect again with the same
	 * key and the same arguments records nothing new; with other arguments it throws
	 * {@link io.ductor.IdempotencyKeyReuseException}. Empty (the default): a fresh UUID
	 * per call.
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * How many attempts before the intent is marked {@code failed}; 0 (the default) uses
	 * {@code ductor.effects.max-attempts}.
	 * @return the attempt limit
	 */
	int maxAttempts() default 0;

	/**
	 * Whether the receiver deduplicates by the idempotency key.
	 * @return the receiver kind
	 */
	Receiver receiver() default Receiver.IDEMPOTENT;

	/**
	 * SpEL expression over the parameters giving an ordering key: intents sharing one are
	 * dispatched one at a time, in commit order. Empty (the default): no ordering.
	 * @return the ordering key expression
	 */
	String orderingKey() default "";

	/**
	 * ISO-8601 duration ({@code PT10M}) to wait after the commit before the first
	 * attempt. Empty (the default): dispatch at once.
	 * @return the delay
	 */
	String delay() default "";

	/**
	 * Exceptions that fail the intent at once, without retries, in addition to
	 * {@link NonRetryableEffectException}.
	 * @return the non-retryable exception types
	 */
	Class<? extends Throwable>[] noRetryFor() default {};

	/**
	 * The name of the effect that undoes this one, called with the same arguments: when a
	 * tick of a run records this effect, it registers that compensation with the run, and
	 * if the run fails later ({@code tick.fail}, or an operator's
	 * {@link EffectResolution#COMPENSATE}) the compensation is recorded, in the failing
	 * transaction, with the key {@code "compensate:" + this intent's key}. The
	 * compensation must be a {@code @DurableEffect} taking the same parameter types
	 * (checked at start-up). Recorded outside a run, the effect registers nothing. Empty
	 * (the default): no compensation; one can still be passed at the call with
	 * {@link EffectRequest#withCompensation(EffectRequest)}.
	 * @return the compensating effect's name
	 */
	String compensation() default "";

	/**
	 * The most attempts of this effect that run at once, across every instance on the
	 * database (the limit is the receiver's, not one JVM's): a claim takes one of the
	 * effect's N slots per intent, and an intent that finds none free waits while other
	 * effects' intents go on. A slot is held while its attempt's lease is live, so a
	 * crashed instance frees it when the lease expires.
	 * {@code ductor.effects.overrides.<name>.max-concurrency} wins over it. 0 (the
	 * default): no limit.
	 * @return the concurrency limit
	 */
	int maxConcurrency() default 0;

}
