package io.ductor.benchmarks;

/**
 * One system that turns a committed transaction into a dispatched no-op handler: Ductor, the raw
 * JDBC outbox, or Spring Modulith's JDBC event publication registry. Each runs on its own database.
 */
interface OutboxSystem extends AutoCloseable {

	/** Commit one transaction that records effect {@code seq}; reports to the probe. */
	void produce(int seq);

	/** @return how many effects the system itself has recorded as completed */
	long completedInDatabase();

	@Override
	void close();

	/** Starts a system on a fresh database. */
	interface Kind {

		String name();

		OutboxSystem start(Db db, Probe probe);

	}

}
