package io.ductor.testing;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import io.ductor.testing.bakery.Bakery;

/**
 * {@link DuctorEmbeddedDatabase}: the bakery on an embedded PostgreSQL, with nothing else
 * configured.
 */
@SpringBootTest(classes = Bakery.class)
@AutoConfigureDuctorTester
@DuctorEmbeddedDatabase
class EmbeddedDatabaseTest {

	@Autowired
	Bakery.Orders orders;

	@Autowired
	DuctorTester ductor;

	@Test
	void runsOnAnEmbeddedPostgres() {
		this.orders.place("7", 700);
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("payment.charge").isCompleted();
		this.ductor.assertRun("7").isCompleted();
	}

}
