package io.ductor.benchmarks;

/**
 * What one recorded effect looks like, the same for every system.
 * <ul>
 * <li>{@link #HEADLINE}: an effect as applications write them,
 * {@code @DurableEffect(name = "bench.handle", key = "'bench:' + #seq") handle(long seq, String kind, String body)}
 * with a 50-character body, called from a {@code @Transactional} method of an application
 * with the full auto-configuration (actuator and metrics included); raw JDBC inserts the
 * same key and JSON array, Modulith publishes an event with the same three fields.</li>
 * <li>{@link #MINIMAL}: a no-op effect with one {@code long} argument and no key
 * expression, on a context with only Ductor's outbox auto-configurations, called from a
 * {@code TransactionTemplate}; raw JDBC inserts {@code [seq]} under a random key,
 * Modulith publishes an event with one field.</li>
 * </ul>
 */
enum Shape {

	HEADLINE("bench.handle"), MINIMAL("bench.noop");

	/** The kind argument of every headline effect. */
	static final String KIND = "peerbench";

	private final String effectName;

	Shape(String effectName) {
		this.effectName = effectName;
	}

	String effectName() {
		return this.effectName;
	}

	/**
	 * @return the headline effect's body argument: 50 characters
	 */
	static String body(long seq) {
		String text = "parcel " + seq + " packed for courier, two boxes";
		return (text + "                                                  ").substring(0, 50);
	}

	/**
	 * @return the idempotency key the headline effect's expression gives
	 */
	static String key(long seq) {
		return "bench:" + seq;
	}

}
