package io.ductor.effect;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The steps of a saga for the compensation tests: each forward effect declares its undo,
 * and every call of any of them lands in a {@link RecordingReceiver} (which deduplicates
 * by key).
 */
public class SagaEffects {

	/** Latches a call keyed by the map key waits on before it returns. */
	static final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

	/** Keys whose next call fails for good (the intent is failed at once). */
	static final Set<String> refuse = ConcurrentHashMap.newKeySet();

	/**
	 * Keys whose next call throws: for a receiver that cannot deduplicate, the outcome is
	 * unknown.
	 */
	static final Set<String> lose = ConcurrentHashMap.newKeySet();

	/**
	 * How long a compensation's answer takes after the receiver applied it, so that
	 * crashes lose some.
	 */
	static volatile long callMillis;

	private final RecordingReceiver receiver;

	public SagaEffects(RecordingReceiver receiver) {
		this.receiver = receiver;
	}

	@DurableEffect(name = "saga.reserve", key = "'reserve:' + #runId", compensation = "saga.release")
	public void reserve(String runId, String sku) {
		call(runId + ":" + sku);
	}

	@DurableEffect(name = "saga.release")
	public void release(String runId, String sku) {
		call(runId + ":" + sku);
	}

	@DurableEffect(name = "saga.charge", key = "'charge:' + #runId", compensation = "saga.refund")
	public void charge(String runId, long cents) {
		call(runId + ":" + cents);
	}

	@DurableEffect(name = "saga.refund", noRetryFor = IllegalArgumentException.class)
	public void refund(String runId, long cents) {
		call(runId + ":" + cents);
	}

	@DurableEffect(name = "saga.later", key = "'later:' + #runId", delay = "PT1H", compensation = "saga.unlater")
	public void later(String runId) {
		call(runId);
	}

	@DurableEffect(name = "saga.unlater")
	public void unlater(String runId) {
		call(runId);
	}

	@DurableEffect(name = "saga.mail", key = "'mail:' + #runId", receiver = Receiver.NOT_IDEMPOTENT,
			compensation = "saga.retract")
	public void mail(String runId) {
		call(runId);
	}

	@DurableEffect(name = "saga.retract")
	public void retract(String runId) {
		call(runId);
	}

	@DurableEffect(name = "saga.note")
	public void note(String runId, String text) {
		call(runId + ":" + text);
	}

	private void call(String payload) {
		String key = EffectContext.current().idempotencyKey();
		CountDownLatch gate = gates.get(key);
		if (gate != null) {
			try {
				gate.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		if (refuse.remove(key)) {
			throw new IllegalArgumentException("refused " + key);
		}
		if (lose.remove(key)) {
			throw new IllegalStateException("answer lost for " + key);
		}
		this.receiver.receive(payload);
		if (callMillis > 0 && key.startsWith("compensate:")) {
			// after the receiver applied it: a kill now loses the answer, and the call is
			// made again
			sleep(callMillis);
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		RecordingReceiver receiver(DataSource dataSource) {
			return new RecordingReceiver(dataSource);
		}

		@Bean
		SagaEffects sagaEffects(RecordingReceiver receiver) {
			return new SagaEffects(receiver);
		}

	}

}
