package io.ductor.testing;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.test.PostgresExtension;
import io.ductor.testing.bakery.Bakery;
import io.ductor.testing.bakery.BakeryDatabase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The tester moves the clock of its own application only: another application on the same
 * database, without the tester, with its drainer and alarm scheduler running, keeps the
 * server's time while the test moves its clock hours ahead, and does not send a reminder
 * due in an hour.
 */
@SpringBootTest(classes = Bakery.class)
@AutoConfigureDuctorTester
class ClockStaysInTheTestTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		BakeryDatabase.register(postgres.database(), registry);
	}

	static final List<ConfigurableApplicationContext> others = new ArrayList<>();

	@Autowired
	DuctorTester ductor;

	@AfterAll
	static void stopTheOtherApplication() {
		others.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void anotherApplicationOnTheDatabaseKeepsTheServersTimeWhileTheTestMovesItsClock() {
		List<String> properties = new ArrayList<>(List.of(postgres.springProperties()));
		// one worker: what it claims together, it runs in claim order (by due time)
		properties.addAll(List.of("ductor.effects.drainer.concurrency=1", "ductor.effects.drainer.poll-interval=100ms",
				"ductor.effects.alarm-scheduler.interval=100ms", "spring.main.banner-mode=off"));
		ConfigurableApplicationContext other = new SpringApplicationBuilder(Bakery.class).web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run();
		others.add(other);
		EffectOutbox outbox = other.getBean(EffectOutbox.class);
		TransactionTemplate tx = new TransactionTemplate(other.getBean(PlatformTransactionManager.class));
		Bakery.Outside outside = other.getBean(Bakery.Outside.class);
		JdbcClient otherJdbc = JdbcClient.create(other.getBean(DataSource.class));
		String reminder = tx.execute((status) -> outbox.scheduleAlarm("reminder:other-app", Duration.ofHours(1),
				EffectRequest.of("reminder.send", "other-app")));

		this.ductor.advance(Duration.ofHours(2));
		assertThat(Duration.between(OffsetDateTime.now(), this.ductor.now())).isGreaterThan(Duration.ofMinutes(110));
		assertThat(otherJdbc.sql("SELECT abs(extract(epoch FROM ductor_now() - clock_timestamp())) < 60")
			.query(Boolean.class)
			.single()).as("the other application's clock").isTrue();
		// something due at once in the other application: its drainer claims it with
		// whatever else is due by its clock, the reminder first if it were
		tx.executeWithoutResult((status) -> outbox.scheduleAlarm("marker:other-app", Duration.ZERO,
				EffectRequest.of("reminder.send", "marker")));
		await().atMost(Duration.ofSeconds(20)).until(() -> outside.reminded().contains("marker"));

		assertThat(outside.reminded()).containsExactly("marker");
		assertThat(otherJdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(reminder)
			.query(String.class)
			.single()).isEqualTo("pending");
		tx.executeWithoutResult((status) -> outbox.cancelAlarm("reminder:other-app"));
	}

}
