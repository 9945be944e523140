package io.ductor.messaging.internal;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;
import org.springframework.transaction.TransactionStatus;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.InvalidIdempotencyKeyException;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.TransactionalDecision;
import io.ductor.internal.Ids;
import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;
import io.ductor.messaging.ListenerMessageReader;
import io.ductor.messaging.MissingIdempotencyKeyException;
import io.ductor.messaging.MissingKeyPolicy;

/**
 * Runs an {@link IdempotentListener} method once per message key: reserves the key with
 * {@link IdempotencyService#executeInTransaction} and runs the body in that transaction,
 * or returns {@code null} without running it when the key was already applied.
 */
public class IdempotentListenerInterceptor implements MethodInterceptor {

	/**
	 * The fingerprint of every message: the key alone identifies a message (the outbox
	 * refuses a key reused for another payload), and a message's bytes may be decoded
	 * differently by two versions of a listener.
	 */
	static final String FINGERPRINT = "message";

	private static final SpelExpressionParser parser = new SpelExpressionParser();

	/**
	 * The argument types of a batch listener (named: the brokers' clients are optional).
	 */
	private static final Set<String> BATCH_TYPES = Set.of("org.apache.kafka.clients.consumer.ConsumerRecords");

	/** The element types of a batch listener's list argument. */
	private static final Set<String> BATCH_ELEMENTS = Set.of("org.apache.kafka.clients.consumer.ConsumerRecord",
			"org.springframework.messaging.Message", "org.springframework.amqp.core.Message");

	private final IdempotencyService idempotency;

	private final List<ListenerMessageReader> readers;

	private final Map<Method, Listener> listeners = new ConcurrentHashMap<>();

	public IdempotentListenerInterceptor(IdempotencyService idempotency, List<ListenerMessageReader> readers) {
		this.idempotency = idempotency;
		this.readers = List.copyOf(readers);
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Method method = (target != null) ? AopUtils.getMostSpecificMethod(invocation.getMethod(), target.getClass())
				: invocation.getMethod();
		Listener listener = this.listeners.computeIfAbsent(method, IdempotentListenerInterceptor::listener);
		@Nullable Object[] arguments = invocation.getArguments();
		String key = storable(key(listener, method, arguments));
		IdempotentRequest request = new IdempotentRequest("", listener.pool(), key, FINGERPRINT);
		try {
			return this.idempotency.executeInTransaction(request, DuplicatePolicy.DEFAULT,
					new TransactionalDecision<@Nullable Object>() {

						@Override
						public @Nullable Object reserved(Reservation reservation, TransactionStatus transaction) {
							Object result;
							try {
								result = invocation.proceed();
							}
							catch (RuntimeException | Error ex) {
								throw ex;
							}
							catch (Throwable ex) {
								throw new CheckedFailure(ex);
							}
							IdempotentListenerInterceptor.this.idempotency.complete(reservation, null, null);
							return result;
						}

						@Override
						public @Nullable Object notReserved(ReserveOutcome outcome) {
							if (outcome instanceof ReserveOutcome.Replay) {
								return null;
							}
							if (outcome instanceof ReserveOutcome.InFlight inFlight) {
								throw inFlight.exception(null);
							}
							if (outcome instanceof ReserveOutcome.FingerprintMismatch mismatch) {
								throw mismatch.exception();
							}
							throw new IllegalStateException(
									"Unexpected outcome " + outcome + " for " + outcome.request().describe());
						}

					});
		}
		catch (CheckedFailure ex) {
			throw ex.getCause();
		}
	}

	private String key(Listener listener, Method method, @Nullable Object[] arguments) {
		String header = null;
		for (ListenerMessageReader reader : this.readers) {
			header = reader.header(method, arguments, DuctorMessageHeaders.IDEMPOTENCY_KEY);
			if (header != null) {
				break;
			}
		}
		if (header != null && !header.isEmpty()) {
			return header;
		}
		String where = "@IdempotentListener " + describe(method);
		if (listener.policy() == MissingKeyPolicy.REJECT || listener.key() == null) {
			throw new MissingIdempotencyKeyException("A message reached " + where + " without the '"
					+ DuctorMessageHeaders.IDEMPOTENCY_KEY + "' header (it was not sent through Ductor); it is "
					+ "rejected (missingKey = REJECT). Send it with DurableKafka or DurableRabbit, or set "
					+ "missingKey = KEY_FROM_PAYLOAD with a key expression");
		}
		Object payload = null;
		for (ListenerMessageReader reader : this.readers) {
			payload = reader.payload(method, arguments);
			if (payload != null) {
				break;
			}
		}
		if (payload == null) {
			throw new MissingIdempotencyKeyException("A message without the '" + DuctorMessageHeaders.IDEMPOTENCY_KEY
					+ "' header reached " + where + " and its payload could not be found among the arguments "
					+ "(or is null) to compute key = \"" + listener.keySource() + "\"");
		}
		Object value;
		try {
			SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding()
				.withRootObject(payload)
				.build();
			context.setVariable("payload", payload);
			value = listener.key().getValue(context);
		}
		catch (EvaluationException ex) {
			throw new MissingIdempotencyKeyException("The key expression \"" + listener.keySource() + "\" of " + where
					+ " failed on a payload of type " + payload.getClass().getName() + ": " + ex.getMessage());
		}
		String key = (value != null) ? value.toString() : "";
		if (key.isEmpty()) {
			throw new MissingIdempotencyKeyException("The key expression \"" + listener.keySource() + "\" of " + where
					+ " gave no key for a message without the '" + DuctorMessageHeaders.IDEMPOTENCY_KEY + "' header");
		}
		return key;
	}

	/**
	 * The key as the dedup record keeps it: itself when it is a valid idempotency key,
	 * else (too long, a space or a character outside visible ASCII, as a key from a
	 * payload may have) its SHA-256 digest, the same for every copy of the message.
	 */
	static String storable(String key) {
		try {
			return IdempotentRequest.checkKey(key);
		}
		catch (InvalidIdempotencyKeyException ex) {
			try {
				byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
				return "sha256:" + HexFormat.of().formatHex(digest);
			}
			catch (NoSuchAlgorithmException impossible) {
				throw new IllegalStateException(impossible);
			}
		}
	}

	/**
	 * Read and check a listener's declaration.
	 * @param method the listener method
	 * @return its settings
	 * @throws IllegalStateException naming the method and the bad attribute
	 */
	static Listener listener(Method method) {
		IdempotentListener annotation = AnnotatedElementUtils.findMergedAnnotation(method, IdempotentListener.class);
		if (annotation == null) {
			throw new IllegalStateException("No @IdempotentListener on " + describe(method));
		}
		String where = "@IdempotentListener " + describe(method);
		if (isBatch(method)) {
			throw new IllegalStateException(where + " is a batch listener: the inbox applies one message per call, "
					+ "keyed by its own " + DuctorMessageHeaders.IDEMPOTENCY_KEY + " header, and cannot apply a batch "
					+ "once per message. Take one record per call, or remove @IdempotentListener");
		}
		String pool = annotation.pool().isEmpty()
				? "inbox:" + method.getDeclaringClass().getSimpleName() + "." + method.getName() : annotation.pool();
		try {
			Ids.require("pool", pool);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(where + ": " + ex.getMessage(), ex);
		}
		Expression key = null;
		if (!annotation.key().isEmpty()) {
			try {
				key = parser.parseExpression(annotation.key());
			}
			catch (ParseException ex) {
				throw new IllegalStateException(
						where + ": key \"" + annotation.key() + "\" is not a valid SpEL expression: " + ex.getMessage(),
						ex);
			}
		}
		if (annotation.missingKey() == MissingKeyPolicy.KEY_FROM_PAYLOAD && key == null) {
			throw new IllegalStateException(where + " has missingKey = KEY_FROM_PAYLOAD but no key expression; "
					+ "set key (for example key = \"'order:' + orderId\")");
		}
		return new Listener(pool, key, annotation.key(), annotation.missingKey());
	}

	/**
	 * A batch listener: a {@code @KafkaListener(batch = "true")}, or one that takes the
	 * records or messages of a batch.
	 */
	private static boolean isBatch(Method method) {
		AnnotationAttributes kafka = AnnotatedElementUtils.getMergedAnnotationAttributes(method,
				"org.springframework.kafka.annotation.KafkaListener");
		if (kafka != null && "true".equals(kafka.get("batch"))) {
			return true;
		}
		for (int i = 0; i < method.getParameterCount(); i++) {
			ResolvableType type = ResolvableType.forMethodParameter(method, i);
			if (BATCH_TYPES.contains(type.toClass().getName())) {
				return true;
			}
			if (Collection.class.isAssignableFrom(type.toClass())) {
				Class<?> element = type.asCollection().getGeneric(0).toClass();
				if (BATCH_ELEMENTS.contains(element.getName())) {
					return true;
				}
			}
		}
		return false;
	}

	static String describe(Method method) {
		return method.getDeclaringClass().getSimpleName() + "." + method.getName();
	}

	/**
	 * A listener's settings.
	 *
	 * @param pool the dedup pool
	 * @param key the key expression, or {@code null}
	 * @param keySource the expression's text
	 * @param policy what to do without the header
	 */
	record Listener(String pool, @Nullable Expression key, String keySource, MissingKeyPolicy policy) {
	}

	/** Carries a checked exception of the body through the transaction template. */
	private static final class CheckedFailure extends RuntimeException {

		CheckedFailure(Throwable cause) {
			super(cause);
		}

		@Override
		public synchronized Throwable getCause() {
			return super.getCause();
		}

	}

}
