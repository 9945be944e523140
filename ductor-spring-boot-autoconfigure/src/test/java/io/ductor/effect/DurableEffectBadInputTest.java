package io.ductor.effect;

import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.internal.Ids;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Bad input to effects gets an exception that names the problem, and nothing is written.
 */
class DurableEffectBadInputTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static Inputs inputs;

	static EffectOutbox outbox;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), Inputs.Config.class, "ductor.effects.max-payload-size=1KB",
				"ductor.effects.drainer.enabled=false");
		inputs = context.getBean(Inputs.class);
		outbox = context.getBean(EffectOutbox.class);
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@AfterEach
	void nothingWasWritten() {
		assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent").query(Long.class).single()).isZero();
	}

	void inTransaction(Runnable call) {
		tx.executeWithoutResult((status) -> call.run());
	}

	@Test
	void aKeyLongerThanTheLimitIsRefused() {
		assertThatThrownBy(() -> inTransaction(() -> inputs.keyed("k".repeat(Ids.MAX_LENGTH + 1))))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("Effect 'keyed': idempotency key must be at most 200 characters but has 201");
	}

	@Test
	void blankKeysAndControlCharactersAreRefused() {
		assertThatThrownBy(() -> inTransaction(() -> inputs.keyed(" "))).isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("idempotency key must not be blank");
		assertThatThrownBy(() -> inTransaction(() -> inputs.keyed("a\nb"))).isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("must not contain control characters");
	}

	@Test
	void aKeyExpressionThatEvaluatesToNullIsRefused() {
		assertThatThrownBy(() -> inTransaction(() -> inputs.keyed(null))).isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("The key expression '#key' of effect 'keyed' evaluated to null");
		assertThatThrownBy(() -> inTransaction(() -> inputs.ordered(null))).isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("The orderingKey expression '#stream' of effect 'ordered' evaluated to null");
	}

	@Test
	void aPayloadOverTheSizeLimitIsRefused() {
		assertThatThrownBy(() -> inTransaction(() -> inputs.keyed("x".repeat(150), List.of("y".repeat(1000)))))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("more than ductor.effects.max-payload-size (1024 bytes)");
	}

	@Test
	void argumentsThatCannotBeReadBackAreRefusedAtTheCall() {
		assertThatThrownBy(() -> inTransaction(() -> inputs.draw(new Circle(1.5))))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("Cannot read the stored arguments of effect 'draw'");
	}

	@Test
	void argumentsThatChangeOnTheWayBackAreRefusedAtTheCall() {
		assertThatThrownBy(() -> inTransaction(() -> inputs.label(Trimmed.of(" padded "))))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("The arguments of effect 'label' do not survive a JSON round trip")
			.hasMessageContaining("stored [{\"name\":\" padded \"}] but read back [{\"name\":\"padded\"}]");
	}

	@Test
	void argumentsThatCannotBeWrittenAreRefusedAtTheCall() {
		assertThatThrownBy(() -> inTransaction(() -> inputs.keyed("k", List.of(new Unwritable()))))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("Cannot store the arguments of effect 'keyedList' as JSON");
	}

	@Test
	void programmaticCallsAreCheckedToo() {
		assertThatThrownBy(() -> inTransaction(() -> outbox.schedule(EffectRequest.of("no-such-effect"))))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("No @DurableEffect named 'no-such-effect'");
		assertThatThrownBy(() -> inTransaction(() -> outbox.schedule(EffectRequest.of("keyed", "a", "b"))))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("Effect 'keyed' takes 1 argument(s) but was given 2");
		assertThatThrownBy(() -> inTransaction(() -> outbox.schedule(EffectRequest.of("keyed", 42).withKey("k-42"))))
			.isInstanceOf(DurableEffectException.class);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> EffectRequest.of("keyed", "a").withDelay(java.time.Duration.ofSeconds(-1)))
			.withMessageContaining("delay must not be negative");
		assertThatThrownBy(() -> outbox.schedule(EffectRequest.of("keyed", "outside")))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("outside a transaction");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> inTransaction(
					() -> outbox.scheduleAlarm(" ", java.time.Duration.ZERO, EffectRequest.of("keyed", "a"))))
			.withMessage("alarmName must not be blank");
	}

	@Test
	void aReadOnlyTransactionIsRefused() {
		TransactionTemplate readOnly = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		readOnly.setReadOnly(true);
		assertThatThrownBy(() -> readOnly.executeWithoutResult((status) -> inputs.keyed("ro")))
			.isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("read-only transaction");
	}

	/**
	 * Jackson cannot construct an interface from the written properties of its
	 * implementation.
	 */
	public interface Shape {

	}

	public record Circle(double radius) implements Shape {
	}

	/** Reads back other than it was written. */
	public static final class Trimmed {

		private String name;

		static Trimmed of(String name) {
			Trimmed trimmed = new Trimmed();
			trimmed.name = name;
			return trimmed;
		}

		public String getName() {
			return this.name;
		}

		public void setName(String name) {
			this.name = name.trim();
		}

	}

	public static final class Unwritable {

		public String getBroken() {
			throw new IllegalStateException("not writable");
		}

	}

	public static class Inputs {

		@DurableEffect(name = "keyed", key = "#key")
		public void keyed(String key) {
		}

		@DurableEffect(name = "keyedList", key = "#key")
		public void keyed(String key, List<Object> values) {
		}

		@DurableEffect(name = "ordered", orderingKey = "#stream")
		public void ordered(String stream) {
		}

		@DurableEffect(name = "draw")
		public void draw(Shape shape) {
		}

		@DurableEffect(name = "label")
		public void label(Trimmed label) {
		}

		@Configuration(proxyBeanMethods = false)
		static class Config {

			@Bean
			Inputs inputs() {
				return new Inputs();
			}

		}

	}

}
