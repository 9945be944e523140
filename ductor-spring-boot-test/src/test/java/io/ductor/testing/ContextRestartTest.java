package io.ductor.testing;

import java.time.Duration;
import java.time.OffsetDateTime;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.test.PostgresExtension;
import io.ductor.testing.bakery.Bakery;
import io.ductor.testing.bakery.BakeryDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A context started again between tests, on the same database, starts from the real time
 * and no faults.
 */
@SpringBootTest(classes = Bakery.class)
@AutoConfigureDuctorTester
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ContextRestartTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		BakeryDatabase.register(postgres.database(), registry);
	}

	@Autowired
	DuctorTester ductor;

	@Autowired
	Bakery.Orders orders;

	@Test
	@Order(1)
	void movesTheClockAndQueuesAFault() {
		this.ductor.advance(Duration.ofDays(30));
		this.ductor.failNext("payment.charge", 3, new IllegalStateException("left behind"));
	}

	@Test
	@Order(2)
	void theNextContextStartsOnTheRealTimeWithoutFaults() {
		OffsetDateTime server = JdbcClient.create(postgres.dataSource())
			.sql("SELECT clock_timestamp()")
			.query(OffsetDateTime.class)
			.single();
		assertThat(Duration.between(this.ductor.now(), server).abs()).isLessThan(Duration.ofMinutes(1));
		this.orders.place("r-1", 100);
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("payment.charge").isCompleted().hasAttempts(1);
	}

}
