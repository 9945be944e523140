package io.ductor.benchmarks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the server's backends of one database were doing while a system worked: every few
 * milliseconds, from a connection of its own, the wait event of each backend running a
 * statement there ({@code pg_stat_activity}), {@code CPU} when it waits for nothing.
 * Samples, not a trace: a share of a few percent says little.
 */
final class WaitEvents implements AutoCloseable {

	private static final long PERIOD_MILLIS = 5;

	private static final String SAMPLE = """
			SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU'),
			       left(regexp_replace(query, '\\s+', ' ', 'g'), 22)
			FROM pg_stat_activity
			WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()""";

	private final Map<String, Integer> samples = new TreeMap<>();

	private final Thread sampler;

	private volatile boolean running = true;

	private int rounds;

	private WaitEvents(Db db) {
		this.sampler = new Thread(() -> sampleUntilClosed(db), "wait-events");
		this.sampler.setDaemon(true);
		this.sampler.start();
	}

	/** Starts sampling the backends of {@code db}'s database. */
	static WaitEvents sample(Db db) {
		return new WaitEvents(db);
	}

	private void sampleUntilClosed(Db db) {
		try (Connection connection = db.connect(); PreparedStatement statement = connection.prepareStatement(SAMPLE)) {
			while (this.running) {
				try (ResultSet rows = statement.executeQuery()) {
					synchronized (this.samples) {
						this.rounds++;
						while (rows.next()) {
							this.samples.merge("`" + rows.getString(2) + "…` " + rows.getString(1), 1, Integer::sum);
						}
					}
				}
				Thread.sleep(PERIOD_MILLIS);
			}
		}
		catch (SQLException ex) {
			Bench.progress("wait events: sampling stopped: " + ex.getMessage());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		this.running = false;
		try {
			this.sampler.join(5_000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * @return the busiest statements (their first words) and wait events, with the
	 * average number of backends found in each per sample, e.g.
	 * {@code `UPDATE bench_outbox SET…` IO:WALSync 0.42}
	 */
	String summary(int top) {
		synchronized (this.samples) {
			if (this.rounds == 0) {
				return "no samples";
			}
			List<Map.Entry<String, Integer>> entries = new ArrayList<>(this.samples.entrySet());
			entries.sort(Map.Entry.<String, Integer>comparingByValue().reversed());
			double busy = entries.stream().mapToInt(Map.Entry::getValue).sum() / (double) this.rounds;
			List<String> parts = new ArrayList<>();
			for (Map.Entry<String, Integer> entry : entries.subList(0, Math.min(top, entries.size()))) {
				parts.add(
						String.format(Locale.ROOT, "%s %.2f", entry.getKey(), entry.getValue() / (double) this.rounds));
			}
			return String.format(Locale.ROOT, "%.2f backends busy on average (%d samples): ", busy, this.rounds)
					+ String.join(", ", parts);
		}
	}

}
