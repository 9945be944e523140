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
import java.util.logging.Logger;

/**
 * A JDBC driver in front of PostgreSQL's that counts, on the threads that ask for it, the
 * statements they execute and the round trips to the server that takes (each execution,
 * each commit and rollback; the driver sends {@code BEGIN} with the first statement).
 * URLs start with {@value #PREFIX} instead of {@code jdbc:}.
 */
public final class CountingDriver implements Driver {

	static final String PREFIX = "jdbc:counting:";

	private static final ThreadLocal<long[]> counts = new ThreadLocal<>();

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

	private record Counting(Object target, boolean connection) implements InvocationHandler {

		@Override
		public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
			String name = method.getName();
			if (name.equals("unwrap") || name.equals("isWrapperFor")) {
				// PGConnection and friends: the real object
				return invokeTarget(method, args);
			}
			long[] into = counts.get();
			if (into != null) {
				if (this.connection && (name.equals("commit") || name.equals("rollback"))) {
					into[1]++;
				}
				else if (!this.connection && name.startsWith("execute")) {
					into[0]++;
					into[1]++;
				}
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
