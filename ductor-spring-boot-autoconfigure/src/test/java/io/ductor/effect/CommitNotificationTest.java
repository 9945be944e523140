package io.ductor.effect;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.internal.LocalDrainer;
import io.ductor.effect.internal.IntentRecorder;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What other instances are told when a transaction commits an intent, in both
 * notification modes.
 */
class CommitNotificationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@ParameterizedTest(name = "notify-in-transaction={0}")
	@ValueSource(booleans = { false, true })
	void aCommittedDueIntentNotifiesSignedByTheSenderAndNothingElseDoes(boolean inTransaction) throws Exception {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				TestEffects.Config.class, "ductor.effects.drainer.enabled=false",
				"ductor.effects.drainer.notify-in-transaction=" + inTransaction); Connection listening = listen()) {
			TestEffects effects = context.getBean(TestEffects.class);
			TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			String sender = context.getBean(LocalDrainer.class).instanceId();

			tx.executeWithoutResult((status) -> {
				effects.notify("rolled back");
				status.setRollbackOnly();
			});
			tx.executeWithoutResult((status) -> effects.later("delayed-" + UUID.randomUUID()));
			assertThat(received(listening, 500)).as("a rollback and a delayed intent wake nobody").isEmpty();

			tx.executeWithoutResult((status) -> {
				effects.notify("first");
				effects.notify("second");
			});
			assertThat(received(listening, 2000)).as("one notification for the transaction").containsExactly(sender);
		}
	}

	@ParameterizedTest(name = "notify-in-transaction={0}")
	@ValueSource(booleans = { false, true })
	void withNotifyOnCommitOffNothingIsSent(boolean inTransaction) throws Exception {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				TestEffects.Config.class, "ductor.effects.drainer.enabled=false",
				"ductor.effects.drainer.notify-on-commit=false",
				"ductor.effects.drainer.notify-in-transaction=" + inTransaction); Connection listening = listen()) {
			TestEffects effects = context.getBean(TestEffects.class);
			new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
				.executeWithoutResult((status) -> effects.notify("unannounced"));
			assertThat(received(listening, 1000)).isEmpty();
		}
	}

	private static Connection listen() throws SQLException {
		Connection connection = postgres.database().connect();
		try (Statement statement = connection.createStatement()) {
			statement.execute("LISTEN " + IntentRecorder.CHANNEL);
		}
		return connection;
	}

	/** The payloads of the notifications that arrive within {@code millis}. */
	private static List<String> received(Connection connection, long millis) throws SQLException {
		List<String> payloads = new ArrayList<>();
		long deadline = System.nanoTime() + millis * 1_000_000;
		for (long left = millis; left > 0; left = (deadline - System.nanoTime()) / 1_000_000) {
			PGNotification[] notifications = connection.unwrap(PGConnection.class).getNotifications((int) left);
			if (notifications != null) {
				Arrays.stream(notifications).map(PGNotification::getParameter).forEach(payloads::add);
			}
		}
		return payloads;
	}

}
