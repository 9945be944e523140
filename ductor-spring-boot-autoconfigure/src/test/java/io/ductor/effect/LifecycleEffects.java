package io.ductor.effect;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The two receivers of the intent lifecycle's property test: a hotel that deduplicates by
 * key ({@code IDEMPOTENT}) and a mailer that cannot ({@code NOT_IDEMPOTENT}). Each call
 * is logged before it does what the test scripted for it.
 */
public class LifecycleEffects {

	/** What the next call does. */
	enum Behavior {

		/** Applied. */
		SUCCESS,

		/** Fails retryably; at the mailer the outcome is unknown. */
		FAILS,

		/**
		 * The receiver says it did not apply the call
		 * ({@link EffectNotAppliedException}).
		 */
		NOT_APPLIED,

		/** Fails for good ({@code noRetryFor}). */
		REFUSED

	}

	/** One call that reached a receiver. */
	record Call(long intentId, int attempt, String effect) {
	}

	static final List<Call> calls = new CopyOnWriteArrayList<>();

	static volatile Behavior next = Behavior.SUCCESS;

	@DurableEffect(name = "lc.hotel", maxAttempts = 3, noRetryFor = IllegalArgumentException.class)
	public void hold(String room) {
		behave();
	}

	@DurableEffect(name = "lc.mail", maxAttempts = 3, receiver = Receiver.NOT_IDEMPOTENT,
			noRetryFor = IllegalArgumentException.class)
	public void mail(String address) {
		behave();
	}

	private static void behave() {
		EffectContext context = EffectContext.current();
		calls.add(new Call(context.intentId(), context.attempt(), context.effectName()));
		switch (next) {
			case SUCCESS -> {
			}
			case FAILS -> throw new IllegalStateException("receiver timed out");
			case NOT_APPLIED -> throw new EffectNotAppliedException("connection refused before sending");
			case REFUSED -> throw new IllegalArgumentException("receiver refused the call");
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		LifecycleEffects lifecycleEffects() {
			return new LifecycleEffects();
		}

	}

}
