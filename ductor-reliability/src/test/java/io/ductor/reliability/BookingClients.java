package io.ductor.reliability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.awaitility.Awaitility;

import org.awaitility.core.ConditionTimeoutException;

/**
 * The booking storm's clients, behaving as the IETF Idempotency-Key draft asks: every key
 * is sent by several clients at once, and each of them retries with the same key and body
 * on a connection error, a {@code 409} or a {@code 5xx} until it gets another answer.
 * Every answer is recorded per key. Keys are issued while at most {@code keysInFlight}
 * are unanswered, so the application is busy whenever it is up.
 */
final class BookingClients implements AutoCloseable {

	private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([^\"]+)\"");

	/** One answer a client got and stopped at. */
	record Answer(int status, String id, boolean replayed) {
	}

	private final Supplier<List<BookingInstance>> targets;

	private final String prefix;

	private final String path;

	private final int copies;

	private final long deadline;

	private final Semaphore keysInFlight;

	private final ExecutorService senders;

	private final Thread producer;

	/** Key to the answers its clients stopped at (2xx, or anything but 409 and 5xx). */
	final Map<String, Queue<Answer>> answers = new ConcurrentHashMap<>();

	final AtomicInteger keysIssued = new AtomicInteger();

	final AtomicLong sends = new AtomicLong();

	final AtomicLong connectionErrors = new AtomicLong();

	final AtomicLong conflicts = new AtomicLong();

	final AtomicLong serverErrors = new AtomicLong();

	private final AtomicInteger keysOpen = new AtomicInteger();

	/**
	 * Start issuing keys.
	 * @param prefix the keys' prefix
	 * @param path the endpoint, {@code /bookings}
	 * @param targets the instances up now, one chosen at random per send (empty while all
	 * are down)
	 * @param copies how many clients send each key at once
	 * @param keysInFlight how many keys may be unanswered at once
	 * @param minimumKeys how many keys to issue at least
	 * @param more whether to go on issuing keys once {@code minimumKeys} were issued
	 * @param timeout how long a client retries before it gives up on its key
	 */
	BookingClients(String prefix, String path, Supplier<List<BookingInstance>> targets, int copies, int keysInFlight,
			int minimumKeys, BooleanSupplier more, Duration timeout) {
		this.prefix = prefix;
		this.path = path;
		this.targets = targets;
		this.copies = copies;
		this.deadline = System.nanoTime() + timeout.toNanos();
		this.keysInFlight = new Semaphore(keysInFlight);
		this.senders = Executors.newFixedThreadPool(keysInFlight * copies);
		this.producer = new Thread(() -> produce(minimumKeys, more), "booking-clients-" + prefix);
		this.producer.setDaemon(true);
		this.producer.start();
	}

	private void produce(int minimumKeys, BooleanSupplier more) {
		try {
			for (int n = 1; (n <= minimumKeys || more.getAsBoolean()) && System.nanoTime() < this.deadline; n++) {
				this.keysInFlight.acquire();
				String key = this.prefix + "-" + n;
				String body = "{\"guest\":\"guest-" + n + "\",\"room\":\"room-" + (n % 40) + "\",\"nights\":"
						+ (1 + n % 5) + "}";
				this.answers.put(key, new ConcurrentLinkedQueue<>());
				this.keysIssued.incrementAndGet();
				this.keysOpen.incrementAndGet();
				AtomicInteger copiesLeft = new AtomicInteger(this.copies);
				for (int copy = 0; copy < this.copies; copy++) {
					this.senders.execute(() -> {
						try {
							sendUntilAnswered(key, body);
						}
						finally {
							if (copiesLeft.decrementAndGet() == 0) {
								this.keysOpen.decrementAndGet();
								this.keysInFlight.release();
							}
						}
					});
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void sendUntilAnswered(String key, String body) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		while (System.nanoTime() < this.deadline) {
			List<BookingInstance> up = this.targets.get();
			if (up.isEmpty()) {
				sleep(50);
				continue;
			}
			URI uri = up.get(random.nextInt(up.size())).uri(this.path);
			this.sends.incrementAndGet();
			HttpResponse<String> response;
			try {
				response = Workload.HTTP.send(HttpRequest.newBuilder(uri)
					.timeout(Duration.ofSeconds(10))
					.header("Content-Type", "application/json")
					.header("Idempotency-Key", key)
					.POST(HttpRequest.BodyPublishers.ofString(body))
					.build(), HttpResponse.BodyHandlers.ofString());
			}
			catch (IOException ex) {
				this.connectionErrors.incrementAndGet();
				sleep(50 + random.nextInt(100));
				continue;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			int status = response.statusCode();
			if (status == 409 || status >= 500) {
				(status == 409 ? this.conflicts : this.serverErrors).incrementAndGet();
				// the draft's Retry-After is 1 s; these clients come back sooner, to keep
				// the pressure on
				sleep(100 + random.nextInt(200));
				continue;
			}
			Matcher matcher = ID.matcher(response.body());
			this.answers.get(key)
				.add(new Answer(status, matcher.find() ? matcher.group(1) : null,
						response.headers().firstValue("Idempotency-Replayed").isPresent()));
			return;
		}
	}

	/** Waits until every issued key's clients stopped, or the clients' timeout passed. */
	boolean awaitSettled() throws InterruptedException {
		this.producer.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(this.deadline - System.nanoTime())));
		try {
			Awaitility.await()
				.atMost(Duration.ofNanos(Math.max(1, this.deadline - System.nanoTime())))
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(50))
				.until(() -> this.keysOpen.get() == 0);
		}
		catch (ConditionTimeoutException ex) {
			// reported by the result
		}
		return this.keysOpen.get() == 0 && !this.producer.isAlive();
	}

	// not a wait: a client's think time and retry pause
	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() throws InterruptedException {
		this.producer.interrupt();
		this.senders.shutdownNow();
		this.senders.awaitTermination(15, TimeUnit.SECONDS);
	}

}
