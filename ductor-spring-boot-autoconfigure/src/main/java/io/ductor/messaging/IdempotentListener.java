package io.ductor.messaging;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The inbox: marks a message listener method ({@code @KafkaListener},
 * {@code @RabbitListener}) of a Spring bean whose body applies each message once. The
 * message's {@value DuctorMessageHeaders#IDEMPOTENCY_KEY} header (the key of the intent
 * that sent it) is reserved with
 * {@link io.ductor.idempotency.IdempotencyService#executeInTransaction} in the listener's
 * own transaction: the body runs in that transaction, and the dedup record commits
 * together with the body's writes, or not at all. A message redelivered after that commit
 * (the consumer crashed before acknowledging it, the producer's relay sent it twice)
 * returns at once without running the body, and the container acknowledges it. A body
 * that throws, or a crash before the commit, rolls everything back: the redelivery runs
 * the body again.
 * <p>
 * The body's writes must go through the application's transaction manager on Ductor's
 * database; work done elsewhere (another system, {@code REQUIRES_NEW}) is not covered.
 * Like every proxy-based annotation, it applies to calls that go through the bean's
 * proxy, which is how listener containers call their methods.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface IdempotentListener {

	/**
	 * The pool the message keys are deduplicated in (an identifier of at most 200
	 * characters). Two listeners of one destination that must each apply a message
	 * (different consumer groups) need different pools. Empty (the default): the
	 * listener's {@code SimpleClassName.methodName}, prefixed with {@code "inbox:"}.
	 * @return the pool
	 */
	String pool() default "";

	/**
	 * SpEL expression over the payload (the root object, also {@code #payload}) giving
	 * the key of a message without the {@value DuctorMessageHeaders#IDEMPOTENCY_KEY}
	 * header, used under {@link MissingKeyPolicy#KEY_FROM_PAYLOAD}: for example
	 * {@code "'order-placed:' + orderId"}. Empty (the default): none.
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * What to do with a message without the header.
	 * @return the policy; {@link MissingKeyPolicy#REJECT} by default
	 */
	MissingKeyPolicy missingKey() default MissingKeyPolicy.REJECT;

}
