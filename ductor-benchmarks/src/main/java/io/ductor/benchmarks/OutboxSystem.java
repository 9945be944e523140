package io.ductor.benchmarks;

import java.util.function.BiFunction;

/**
 * One system that turns a committed transaction into a dispatched no-op handler: Ductor,
 * the raw outbox, or Spring Modulith's JDBC event publication registry. Each runs on its
 * own database.
 */
interface OutboxSystem extends AutoCloseable {

	/** Commit one transaction that records effect {@code seq}; reports to the probe. */
	void produce(int seq);

	/**
	 * @return how many effects the system itself has recorded as completed
	 */
	long completedInDatabase();

	/**
	 * @return a query of the system's own table giving, per effect, its number and the
	 * milliseconds from the start of the producer's transaction to the completion the
	 * system recorded, both stamped by the database clock (Modulith's by the JVM's, which
	 * on one machine is the same clock)
	 */
	String lagSql();

	@Override
	void close();

	/**
	 * A system that can be started on a fresh database.
	 *
	 * @param name its name in the report
	 * @param starter starts it on a database, reporting to a probe
	 */
	record Kind(String name, BiFunction<Db, Probe, OutboxSystem> starter) {

		OutboxSystem start(Db db, Probe probe) {
			return this.starter.apply(db, probe);
		}

	}

}
