package io.ductor.effect;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The effects the tests call, and the knobs the tests turn to make them fail or wait. */
public class TestEffects {

	/** A line item, to show generic parameter types survive the JSON round trip. */
	public record Item(String sku, int quantity) {
	}

	/** How many more times an effect keyed by the map key throws, and what. */
	static final Map<String, RuntimeException> failures = new ConcurrentHashMap<>();

	static final Map<String, Integer> remainingFailures = new ConcurrentHashMap<>();

	/** Latches an effect keyed by the map key waits on before it returns. */
	static final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

	/**
	 * The attempt number at which an effect keyed by the map key throws, after its gate.
	 */
	static final Map<String, Integer> failingAttempt = new ConcurrentHashMap<>();

	/** Counted down when an effect keyed by the map key starts. */
	static final Map<String, CountDownLatch> started = new ConcurrentHashMap<>();

	/**
	 * How long ship() takes, to keep dispatches in flight when a crash test kills the
	 * JVM.
	 */
	static volatile long shipMillis;

	private final RecordingReceiver receiver;

	public TestEffects(RecordingReceiver receiver) {
		this.receiver = receiver;
	}

	@DurableEffect(name = "ship", key = "'ship:' + #orderId")
	public void ship(String orderId, List<Item> items) {
		if (shipMillis > 0) {
			try {
				Thread.sleep(shipMillis);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.receiver.receive(orderId + ":" + items);
	}

	@DurableEffect(name = "notify")
	public void notify(String message) {
		this.receiver.receive(message);
	}

	@DurableEffect(name = "scripted", key = "#key", maxAttempts = 3, noRetryFor = IllegalArgumentException.class)
	public void scripted(String key) {
		behave(key);
		this.receiver.receive(key);
	}

	@DurableEffect(name = "mailer", key = "#key", receiver = Receiver.NOT_IDEMPOTENT)
	public void mail(String key) {
		behave(key);
		this.receiver.receive(key);
	}

	@DurableEffect(name = "later", key = "#key", delay = "PT1H")
	public void later(String key) {
		this.receiver.receive(key);
	}

	@DurableEffect(name = "ordered", orderingKey = "#stream")
	public void ordered(String stream, int n) {
		this.receiver.receive(stream + ":" + n);
	}

	private static void behave(String key) {
		// the gate read before the start is announced: a test that removes the gate once
		// the effect started holds this attempt still
		CountDownLatch gate = gates.get(key);
		CountDownLatch start = started.get(key);
		if (start != null) {
			start.countDown();
		}
		if (gate != null) {
			try {
				gate.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		Integer failing = failingAttempt.get(key);
		if (failing != null && EffectContext.current().attempt() == failing) {
			throw new IllegalStateException("attempt " + failing + " fails late");
		}
		Integer left = remainingFailures.computeIfPresent(key, (k, n) -> n - 1);
		if (left != null && left >= 0) {
			throw failures.get(key);
		}
	}

	static void failNext(String key, int times, RuntimeException failure) {
		failures.put(key, failure);
		remainingFailures.put(key, times);
	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		RecordingReceiver receiver(DataSource dataSource) {
			return new RecordingReceiver(dataSource);
		}

		@Bean
		TestEffects testEffects(RecordingReceiver receiver) {
			return new TestEffects(receiver);
		}

	}

}
