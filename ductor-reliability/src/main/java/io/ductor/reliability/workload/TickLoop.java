package io.ductor.reliability.workload;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

import io.ductor.run.TickOutcome;
import io.ductor.run.TickService;

/**
 * Ticks the workload's runs continuously. Every tick has a stamp unique to this instance
 * and generation, adds one to the run's counter and records one {@link Receivers#deliver}
 * effect in the tick's transaction. Acknowledged ticks go to the {@link AckLog}. Now and
 * then a stamp that was already applied is delivered again, and on start the last stamps
 * acknowledged by the previous generation are: they must come back {@code DUPLICATE}, and
 * anything else is written to the log as a {@code VIOLATION}.
 */
@Component
public class TickLoop implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(TickLoop.class);

	/** The type of the workload's runs. */
	public static final String RUN_TYPE = "workload";

	private final TickService ticks;

	private final Receivers receivers;

	private final WorkloadProperties properties;

	private final AtomicLong sequence = new AtomicLong();

	private final AtomicLong applied = new AtomicLong();

	private final AtomicLong duplicates = new AtomicLong();

	private final AtomicLong failures = new AtomicLong();

	private volatile boolean running;

	private final List<Thread> threads = new ArrayList<>();

	private AckLog acks;

	public TickLoop(TickService ticks, Receivers receivers, WorkloadProperties properties) {
		this.ticks = ticks;
		this.receivers = receivers;
		this.properties = properties;
	}

	/** The state of a workload run: how many ticks were applied to it. */
	public record Counter(long count, String lastStamp) {
	}

	public static String runId(int n) {
		return "wl-run-" + n;
	}

	@Override
	public synchronized void start() {
		if (!this.properties.ticking() || this.running) {
			return;
		}
		this.running = true;
		this.acks = new AckLog(ackDirectory(), "acks-" + this.properties.stampPrefix() + "log");
		for (int n = 1; n <= this.properties.runs(); n++) {
			this.ticks.start(RUN_TYPE, runId(n), new Counter(0, null));
		}
		redeliverPreviousGeneration();
		for (int t = 0; t < this.properties.tickers(); t++) {
			Thread thread = new Thread(this::loop, "workload-ticker-" + t);
			thread.setDaemon(true);
			this.threads.add(thread);
			thread.start();
		}
	}

	private Path ackDirectory() {
		return (this.properties.ackDirectory() != null) ? this.properties.ackDirectory() : Path.of("target", "acks");
	}

	private void loop() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		List<String[]> mine = new ArrayList<>();
		while (this.running) {
			try {
				if (!mine.isEmpty() && random.nextInt(10) == 0) {
					String[] again = mine.get(random.nextInt(mine.size()));
					expectDuplicate(again[0], again[1]);
				}
				else {
					String runId = runId(1 + random.nextInt(this.properties.runs()));
					String stamp = this.properties.stampPrefix() + this.sequence.incrementAndGet();
					if (tick(runId, stamp)) {
						mine.add(new String[] { runId, stamp });
						if (mine.size() > 200) {
							mine.remove(0);
						}
					}
				}
			}
			catch (RuntimeException ex) {
				// the database went away, a connection was terminated: the stamp is
				// simply not acknowledged
				this.failures.incrementAndGet();
				logger.debug("Tick failed: " + ex);
				pause(50);
			}
			pause(this.properties.tickPauseMillis());
		}
	}

	/**
	 * One tick: the counter goes up by one and the tick's effect is recorded in its
	 * transaction.
	 */
	private TickOutcome<Counter> deliverTick(String runId, String stamp) {
		return this.ticks.tick(runId, stamp, Counter.class, (state, tick) -> {
			this.receivers.deliver(runId, stamp);
			return new Counter(state.count() + 1, stamp);
		});
	}

	private boolean tick(String runId, String stamp) {
		TickOutcome<Counter> outcome = deliverTick(runId, stamp);
		if (outcome.result() == TickOutcome.Result.APPLIED) {
			this.applied.incrementAndGet();
			this.acks.append("ACK " + runId + " " + stamp + " " + outcome.seq());
			return true;
		}
		this.acks.append("VIOLATION fresh stamp " + stamp + " on " + runId + " answered " + outcome.result());
		return false;
	}

	private void expectDuplicate(String runId, String stamp) {
		TickOutcome<Counter> outcome = deliverTick(runId, stamp);
		if (outcome.result() == TickOutcome.Result.DUPLICATE) {
			this.duplicates.incrementAndGet();
			this.acks.append("DUP " + runId + " " + stamp);
		}
		else {
			this.acks.append("VIOLATION redelivered stamp " + stamp + " on " + runId + " answered " + outcome.result());
		}
	}

	private void redeliverPreviousGeneration() {
		if (this.properties.generation() == 0) {
			return;
		}
		String previous = this.properties.instance() + "-g" + (this.properties.generation() - 1) + "-";
		Path file = ackDirectory().resolve("acks-" + previous + "log");
		if (!Files.exists(file)) {
			return;
		}
		try {
			List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8)
				.stream()
				.filter((line) -> line.startsWith("ACK ") && line.split(" ").length == 4)
				.toList();
			for (String line : lines.subList(Math.max(0, lines.size() - 3), lines.size())) {
				String[] parts = line.split(" ");
				expectDuplicate(parts[1], parts[2]);
			}
		}
		catch (IOException | RuntimeException ex) {
			logger.warn("Could not redeliver the previous generation's stamps: " + ex);
		}
	}

	private static void pause(int millis) {
		if (millis <= 0) {
			return;
		}
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * @return applied ticks, duplicates answered and failed ticks since start
	 */
	public long[] counts() {
		return new long[] { this.applied.get(), this.duplicates.get(), this.failures.get() };
	}

	@Override
	public synchronized void stop() {
		this.running = false;
		for (Thread thread : this.threads) {
			try {
				thread.join(5000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.threads.clear();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

}
