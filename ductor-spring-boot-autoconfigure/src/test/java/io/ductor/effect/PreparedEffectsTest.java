package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.TestEffects.Item;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What the recording path prepares once per effect (the resolved method, the parsed key
 * expressions and their parameter names, the payload writers) gives every call what it
 * gave when everything was resolved per call: each effect its own key, variables that do
 * not outlive the call, failures that name the expression, nulls stored and dispatched as
 * nulls.
 */
class PreparedEffectsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static Keyed keyed;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	static RecordingReceiver receiver;

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), Keyed.Config.class,
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.reconciler.interval=1h",
				"ductor.retention.interval=1h");
		keyed = context.getBean(Keyed.class);
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
		receiver = context.getBean(RecordingReceiver.class);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	static Map<String, Object> intent(String key) {
		return jdbc.sql("SELECT effect_name, payload::text AS payload FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query()
			.singleRow();
	}

	static String recordedKey(Runnable call) {
		long before = jdbc.sql("SELECT coalesce(max(id), 0) FROM eec_effect_intent").query(Long.class).single();
		tx.executeWithoutResult((status) -> call.run());
		return jdbc.sql("SELECT idempotency_key FROM eec_effect_intent WHERE id > ?")
			.param(before)
			.query(String.class)
			.single();
	}

	@Test
	void effectsWithDifferentKeyExpressionsEachUseTheirOwn() {
		String id = UUID.randomUUID().toString().substring(0, 8);

		assertThat(recordedKey(() -> keyed.byName(7, id))).isEqualTo("name:7:" + id);
		assertThat(recordedKey(() -> keyed.byPosition(id, 3))).isEqualTo("position:" + id + ":3");
		assertThat(recordedKey(() -> keyed.byMethodCall(new Item("sku-" + id, 2)))).isEqualTo("sku-" + id + "x2");
		assertThat(recordedKey(() -> keyed.byType(-5, id))).isEqualTo("abs:5:" + id);
		assertThat(recordedKey(() -> keyed.byName(8, id))).isEqualTo("name:8:" + id);
		assertThat(intent("name:7:" + id)).containsEntry("effect_name", "byName")
			.containsEntry("payload", "[7, \"" + id + "\"]");
	}

	@Test
	void aVariableTheExpressionAssignsDoesNotOutliveTheCall() {
		String id = UUID.randomUUID().toString().substring(0, 8);

		assertThat(recordedKey(() -> keyed.assigning("a" + id))).isEqualTo("a" + id + "!a" + id + "!");
		assertThat(recordedKey(() -> keyed.assigning("b" + id))).isEqualTo("b" + id + "!b" + id + "!");
	}

	@Test
	void aKeyExpressionThatFailsOrThrowsLeavesTheNextCallUnaffected() {
		String id = UUID.randomUUID().toString().substring(0, 8);

		assertThatThrownBy(() -> tx.executeWithoutResult((status) -> keyed.throwing(null)))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("The key expression '#code.substring(5)' of effect 'throwing' failed: ")
			.hasMessageContaining("null");
		// what a method the expression calls throws reaches the caller as it is
		assertThatThrownBy(() -> tx.executeWithoutResult((status) -> keyed.throwing("abc")))
			.isInstanceOf(StringIndexOutOfBoundsException.class);
		assertThat(recordedKey(() -> keyed.throwing("code-" + id))).isEqualTo(id);
		assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = 'throwing'")
			.query(Long.class)
			.single()).isOne();
	}

	@Test
	void aKeyExpressionOverANullArgumentIsRefusedAsEvaluatingToNull() {
		assertThatThrownBy(() -> tx.executeWithoutResult((status) -> keyed.bare(null)))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("The key expression '#p0' of effect 'bare' evaluated to null");
	}

	@Test
	void nullArgumentsAreStoredAsNullAndDispatchedAsNull() {
		String marker = UUID.randomUUID().toString();
		String key = recordedKey(() -> keyed.nullable(marker, null, null));

		assertThat(intent(key)).containsEntry("payload", "[\"" + marker + "\", null, null]");
		await().atMost(Duration.ofSeconds(20))
			.until(() -> receiver.log("nullable")
				.stream()
				.anyMatch((row) -> row.get("payload").equals(marker + ":null:null")));
	}

	@Test
	void twoBeansImplementingOneInterfaceMethodRecordTheirOwnEffect() {
		String id = UUID.randomUUID().toString().substring(0, 8);
		Channel sms = context.getBean("sms", Channel.class);
		Channel mail = context.getBean("mail", Channel.class);

		assertThat(recordedKey(() -> sms.send(id))).isEqualTo("sms:" + id);
		assertThat(recordedKey(() -> mail.send(id))).isEqualTo("mail:" + id);
		assertThat(recordedKey(() -> sms.send(id + "-2"))).isEqualTo("sms:" + id + "-2");
		assertThat(intent("mail:" + id)).containsEntry("effect_name", "mail.send");
		assertThat(intent("sms:" + id)).containsEntry("effect_name", "sms.send");
	}

	/**
	 * One interface method, implemented by two beans, each an effect of its own: without
	 * Boot's AOP auto-configuration they get JDK proxies, so both calls arrive as the
	 * same interface method.
	 */
	public interface Channel {

		void send(String message);

	}

	public static class Sms implements Channel {

		@Override
		@DurableEffect(name = "sms.send", key = "'sms:' + #message")
		public void send(String message) {
		}

	}

	public static class Mail implements Channel {

		@Override
		@DurableEffect(name = "mail.send", key = "'mail:' + #message")
		public void send(String message) {
		}

	}

	public static class Keyed {

		private final RecordingReceiver receiver;

		Keyed(RecordingReceiver receiver) {
			this.receiver = receiver;
		}

		@DurableEffect(name = "byName", key = "'name:' + #seq + ':' + #label")
		public void byName(long seq, String label) {
		}

		@DurableEffect(name = "byPosition", key = "'position:' + #p0 + ':' + #a1")
		public void byPosition(String label, int n) {
		}

		@DurableEffect(name = "byMethodCall", key = "#item.sku() + 'x' + #item.quantity()")
		public void byMethodCall(Item item) {
		}

		@DurableEffect(name = "byType", key = "'abs:' + T(java.lang.Math).abs(#n) + ':' + #label")
		public void byType(int n, String label) {
		}

		@DurableEffect(name = "assigning", key = "(#x = #p0 + '!') + #x")
		public void assigning(String label) {
		}

		@DurableEffect(name = "throwing", key = "#code.substring(5)")
		public void throwing(String code) {
		}

		@DurableEffect(name = "bare", key = "#p0")
		public void bare(String label) {
		}

		@DurableEffect(name = "nullable")
		public void nullable(String marker, String text, Long count) {
			this.receiver.receive(marker + ":" + text + ":" + count);
		}

		@Configuration(proxyBeanMethods = false)
		static class Config {

			@Bean
			RecordingReceiver receiver(DataSource dataSource) {
				return new RecordingReceiver(dataSource);
			}

			@Bean
			Keyed keyed(RecordingReceiver receiver) {
				return new Keyed(receiver);
			}

			@Bean
			Sms sms() {
				return new Sms();
			}

			@Bean
			Mail mail() {
				return new Mail();
			}

		}

	}

}
