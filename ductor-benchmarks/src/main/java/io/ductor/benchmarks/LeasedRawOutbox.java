package io.ductor.benchmarks;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The least an outbox that runs each effect once per lease writes when it drains a
 * backlog: one thread claims a batch under a lease in one statement and commits, calls
 * the receiver for each row, and hands the ids to a second thread, which stamps them done
 * in one statement fenced by the lease's owner, committing without waiting for the flush
 * (as Ductor's completions do). The lease columns are in no index and the partial index
 * names only {@code done_at}, so the claim is heap-only and the completion is the one
 * update that leaves the index. No key, attempt count, retry, notification or metric. Two
 * batches at most wait for their completion, as in Ductor's drainer.
 */
final class LeasedRawOutbox implements AutoCloseable {

	static final String LABEL = "raw outbox with a lease (claim, then fenced completion)";

	private static final String OWNER = "bench-drainer";

	private static final String CLAIM = """
			UPDATE bench_leased SET lease_owner = ?, lease_until = now() + interval '30 seconds'
			WHERE id IN (SELECT id FROM bench_leased
			             WHERE done_at IS NULL AND (lease_until IS NULL OR lease_until < now())
			             ORDER BY id LIMIT %d FOR UPDATE SKIP LOCKED)
			RETURNING id, payload::text""".formatted(RawOutboxSystem.BATCH);

	private static final String COMPLETE = """
			UPDATE bench_leased SET done_at = now(), lease_owner = NULL, lease_until = NULL
			WHERE id = ANY (?) AND lease_owner = ?""";

	private final Db db;

	private final Probe probe;

	private final BlockingQueue<long[]> claimed = new ArrayBlockingQueue<>(2);

	private final Thread claimer;

	private final Thread completer;

	private volatile boolean running = true;

	private volatile Throwable failure;

	private LeasedRawOutbox(Db db, Probe probe) {
		this.db = db;
		this.probe = probe;
		this.claimer = new Thread(this::claimLoop, "leased-outbox-claimer");
		this.completer = new Thread(this::completeLoop, "leased-outbox-completer");
		this.claimer.start();
		this.completer.start();
	}

	/** Creates the table and fills it with {@code n} undone rows, then vacuums it. */
	static void fill(Db db, int n) {
		Bench.execute(db, """
				CREATE TABLE bench_leased (
				    id          bigserial   PRIMARY KEY,
				    payload     jsonb       NOT NULL,
				    created_at  timestamptz NOT NULL DEFAULT now(),
				    lease_owner text,
				    lease_until timestamptz,
				    done_at     timestamptz)""",
				"CREATE INDEX bench_leased_undone_idx ON bench_leased (id) WHERE done_at IS NULL",
				"INSERT INTO bench_leased (payload) SELECT jsonb_build_array(g) FROM generate_series(0, %d) AS g"
					.formatted(n - 1),
				"VACUUM ANALYZE bench_leased");
	}

	/** Starts draining the filled table. */
	static LeasedRawOutbox drain(Db db, Probe probe) {
		return new LeasedRawOutbox(db, probe);
	}

	/**
	 * @return how many rows are stamped done
	 */
	long completed() {
		if (this.failure != null) {
			throw new IllegalStateException("The leased outbox's drain failed", this.failure);
		}
		try (Connection connection = this.db.connect();
				Statement statement = connection.createStatement();
				ResultSet row = statement.executeQuery("SELECT count(*) FROM bench_leased WHERE done_at IS NOT NULL")) {
			row.next();
			return row.getLong(1);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private void claimLoop() {
		try (Connection connection = this.db.connect(); PreparedStatement claim = connection.prepareStatement(CLAIM)) {
			claim.setString(1, OWNER);
			while (this.running) {
				List<Long> ids = new ArrayList<>(RawOutboxSystem.BATCH);
				try (ResultSet rows = claim.executeQuery()) {
					while (rows.next()) {
						ids.add(rows.getLong(1));
						String payload = rows.getString(2);
						this.probe.dispatched(Long.parseLong(payload.substring(1, payload.length() - 1).trim()));
					}
				}
				if (ids.isEmpty()) {
					Bench.sleep(10);
					continue;
				}
				this.claimed.put(ids.stream().mapToLong(Long::longValue).toArray());
			}
		}
		catch (SQLException | RuntimeException ex) {
			this.failure = ex;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void completeLoop() {
		try (Connection connection = this.db.connect()) {
			connection.setAutoCommit(false);
			try (Statement settings = connection.createStatement();
					PreparedStatement complete = connection.prepareStatement(COMPLETE)) {
				while (this.running || !this.claimed.isEmpty()) {
					long[] ids = this.claimed.poll(50, TimeUnit.MILLISECONDS);
					if (ids == null) {
						continue;
					}
					settings.execute("SET LOCAL synchronous_commit = off");
					Array array = connection.createArrayOf("bigint",
							java.util.Arrays.stream(ids).boxed().toArray(Long[]::new));
					complete.setArray(1, array);
					complete.setString(2, OWNER);
					complete.executeUpdate();
					connection.commit();
				}
			}
		}
		catch (SQLException | RuntimeException ex) {
			this.failure = ex;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		this.running = false;
		try {
			this.claimer.join(10_000);
			this.completer.join(10_000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
