package io.ductor.benchmarks;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * A JDBC driver in front of PostgreSQL's that counts the statements executed through it
 * and the round trips to the server they take (each execution, each commit and rollback;
 * the driver sends {@code BEGIN} with the first statement, so it is not counted), on the
 * threads that ask for it, and in total. A statement is one SQL command the server runs:
 * a batch counts its entries, and a plain statement holding several commands separated by
 * semicolons counts each. URLs start with {@value #PREFIX} instead of {@code jdbc:}.
 */
public final class CountingDriver implements Driver {

	static final String PREFIX = "jdbc:counting:";

	private static final ThreadLocal<long[]> counts = new ThreadLocal<>();

	private static final LongAdder totalStatements = new LongAdder();

	private static final LongAdder totalRoundTrips = new LongAdder();

	static {
		try {
			DriverManager.registerDriver(new CountingDriver());
		}
		catch (SQLException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	/**
	 * Count what this thread sends from now on, into {@code [statements, roundTrips]}.
	 */
	static void countOnThisThread(long[] into) {
		counts.set(into);
	}

	static void stopCounting() {
		counts.remove();
	}

	/**
	 * @return statements and round trips sent through this driver so far, by every thread
	 */
	static long[] totals() {
		return new long[] { totalStatements.sum(), totalRoundTrips.sum() };
	}

	@Override
	public Connection connect(String url, Properties info) throws SQLException {
		if (!acceptsURL(url)) {
			return null;
		}
		Connection target = DriverManager.getConnection("jdbc:" + url.substring(PREFIX.length()), info);
		return (Connection) Proxy.newProxyInstance(CountingDriver.class.getClassLoader(),
				new Class<?>[] { Connection.class }, new Counting(target, true));
	}

	@Override
	public boolean acceptsURL(String url) {
		return url != null && url.startsWith(PREFIX);
	}

	@Override
	public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
		return new DriverPropertyInfo[0];
	}

	@Override
	public int getMajorVersion() {
		return 1;
	}

	@Override
	public int getMinorVersion() {
		return 0;
	}

	@Override
	public boolean jdbcCompliant() {
		return false;
	}

	@Override
	public Logger getParentLogger() throws SQLFeatureNotSupportedException {
		throw new SQLFeatureNotSupportedException();
	}

	private static final class Counting implements InvocationHandler {

		private final Object target;

		private final boolean connection;

		/** Entries added to this statement's batch since it last ran. */
		private long batched;

		Counting(Object target, boolean connection) {
			this.target = target;
			this.connection = connection;
		}

		@Override
		public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
			String name = method.getName();
			if (name.equals("unwrap") || name.equals("isWrapperFor")) {
				// PGConnection and friends: the real object
				return invokeTarget(method, args);
			}
			if (this.connection && (name.equals("commit") || name.equals("rollback"))) {
				count(0, 1);
			}
			else if (!this.connection && name.equals("addBatch")) {
				this.batched++;
			}
			else if (!this.connection && name.equals("executeBatch")) {
				count(this.batched, 1);
				this.batched = 0;
			}
			else if (!this.connection && name.startsWith("execute")) {
				count((args != null && args.length > 0 && args[0] instanceof String sql) ? commands(sql) : 1, 1);
			}
			Object result = invokeTarget(method, args);
			if (this.connection && result instanceof Statement statement) {
				Class<?> type = (result instanceof CallableStatement) ? CallableStatement.class
						: (result instanceof PreparedStatement) ? PreparedStatement.class : Statement.class;
				return Proxy.newProxyInstance(CountingDriver.class.getClassLoader(), new Class<?>[] { type },
						new Counting(statement, false));
			}
			return result;
		}

		private static void count(long statements, long roundTrips) {
			totalStatements.add(statements);
			totalRoundTrips.add(roundTrips);
			long[] into = counts.get();
			if (into != null) {
				into[0] += statements;
				into[1] += roundTrips;
			}
		}

		/**
		 * The commands of a plain statement's text (none of Ductor's quotes a semicolon).
		 */
		private static long commands(String sql) {
			return java.util.Arrays.stream(sql.split(";")).filter((command) -> !command.isBlank()).count();
		}

		private Object invokeTarget(Method method, Object[] args) throws Throwable {
			try {
				return method.invoke(this.target, args);
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
		}

	}

}
