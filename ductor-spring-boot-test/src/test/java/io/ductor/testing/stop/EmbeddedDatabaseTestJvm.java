package io.ductor.testing.stop;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import javax.sql.DataSource;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.TestContextManager;

import io.ductor.testing.DuctorEmbeddedDatabase;
import io.ductor.testing.bakery.Bakery;

/**
 * A test JVM with one {@link DuctorEmbeddedDatabase} test, for
 * {@link EmbeddedDatabaseStopsLastTest}: its main prepares the test instance as the
 * Spring TestContext Framework does under JUnit (the context is loaded and cached), then
 * ends the JVM as Surefire ends a fork, so the cached context is closed at JVM shutdown.
 * Ductor's workers run (no tester). A bean of the context checks, while the context
 * closes, that the database still answers for a few seconds: the embedded server must
 * stop after the context, not beside it.
 */
@SpringBootTest(classes = { Bakery.class, EmbeddedDatabaseTestJvm.LastQuery.class },
		properties = { "ductor.effects.drainer.poll-interval=100ms", "ductor.effects.alarm-scheduler.interval=100ms",
				"ductor.effects.reconciler.interval=100ms", "ductor.retention.interval=100ms" })
@DuctorEmbeddedDatabase
public class EmbeddedDatabaseTestJvm {

	static final String STARTED = "TEST CONTEXT STARTED";

	static final String STAYED_UP = "THE DATABASE ANSWERED UNTIL THE CONTEXT CLOSED";

	static final String WENT_AWAY = "THE DATABASE STOPPED WHILE THE CONTEXT CLOSED";

	static final Duration CHECKED_FOR = Duration.ofSeconds(4);

	public static void main(String[] args) throws Exception {
		new TestContextManager(EmbeddedDatabaseTestJvm.class).prepareTestInstance(new EmbeddedDatabaseTestJvm());
		System.out.println(STARTED);
		System.exit(0);
	}

	/**
	 * Destroyed before the pool (it depends on it), after Ductor's workers stopped: asks
	 * the database every 100 ms for a few seconds.
	 */
	public static class LastQuery implements DisposableBean {

		private final DataSource dataSource;

		public LastQuery(DataSource dataSource) {
			this.dataSource = dataSource;
		}

		@Override
		public void destroy() throws InterruptedException {
			long end = System.nanoTime() + CHECKED_FOR.toNanos();
			while (System.nanoTime() < end) {
				try (Connection connection = this.dataSource.getConnection();
						Statement statement = connection.createStatement()) {
					statement.execute("SELECT 1");
				}
				catch (SQLException ex) {
					System.out.println(WENT_AWAY);
					return;
				}
				// not a wait: the database is sampled over the window to show it stays up
				Thread.sleep(100);
			}
			System.out.println(STAYED_UP);
		}

	}

}
