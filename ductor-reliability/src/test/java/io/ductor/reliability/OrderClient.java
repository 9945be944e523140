package io.ductor.reliability;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The driver's client of {@code POST /orders}: one order after another, each with a fresh
 * {@code Idempotency-Key}, retried with the same key until the workload answers 200 (it
 * may be dead, restarting or without its database meanwhile). Now and then an answered
 * key is sent again: the answer must be the same order. Runs on its own thread until
 * {@link #stop()}.
 */
final class OrderClient implements AutoCloseable {

	private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([^\"]+)\"");

	private final Supplier<List<Workload>> targets;

	private final String prefix;

	/** tenant + " " + key to the order id the client was given. */
	final Map<String, String> answered = new ConcurrentHashMap<>();

	final AtomicLong attempts = new AtomicLong();

	final AtomicLong replays = new AtomicLong();

	final AtomicLong replayMismatches = new AtomicLong();

	private volatile boolean running = true;

	private final Thread thread;

	OrderClient(String prefix, Supplier<List<Workload>> targets) {
		this.prefix = prefix;
		this.targets = targets;
		this.thread = new Thread(this::loop, "order-client-" + prefix);
		this.thread.setDaemon(true);
		this.thread.start();
	}

	private void loop() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		long n = 0;
		while (this.running) {
			n++;
			String tenant = "tenant-" + (n % 3);
			String key = this.prefix + "-" + n;
			String body = "{\"n\":" + n + "}";
			String id = null;
			while (this.running && id == null) {
				id = send(tenant, key, body);
				if (id == null) {
					sleep(100);
				}
			}
			if (id != null) {
				this.answered.put(tenant + " " + key, id);
			}
			if (id != null && n % 5 == 0) {
				long again = 1 + random.nextLong(n);
				String againTenant = "tenant-" + (again % 3);
				String expected = this.answered.get(againTenant + " " + this.prefix + "-" + again);
				if (expected != null) {
					String replayed = send(againTenant, this.prefix + "-" + again, "{\"n\":" + again + "}");
					if (replayed != null) {
						this.replays.incrementAndGet();
						if (!replayed.equals(expected)) {
							this.replayMismatches.incrementAndGet();
						}
					}
				}
			}
			sleep(20);
		}
	}

	private String send(String tenant, String key, String body) {
		List<Workload> workloads = this.targets.get();
		if (workloads.isEmpty()) {
			return null;
		}
		Workload target = workloads.get(ThreadLocalRandom.current().nextInt(workloads.size()));
		this.attempts.incrementAndGet();
		try {
			HttpResponse<String> response = Workload.HTTP.send(HttpRequest.newBuilder(target.uri("/orders"))
				.timeout(Duration.ofSeconds(5))
				.header("Content-Type", "application/json")
				.header("Idempotency-Key", key)
				.header("X-Tenant", tenant)
				.POST(HttpRequest.BodyPublishers.ofString(body))
				.build(), HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200) {
				return null;
			}
			Matcher matcher = ID.matcher(response.body());
			return matcher.find() ? matcher.group(1) : null;
		}
		catch (java.io.IOException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.running = false;
			return null;
		}
	}

	// not a wait: the client's pacing and retry pause
	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	void stop() throws InterruptedException {
		this.running = false;
		this.thread.join(15_000);
	}

	@Override
	public void close() throws InterruptedException {
		stop();
	}

}
