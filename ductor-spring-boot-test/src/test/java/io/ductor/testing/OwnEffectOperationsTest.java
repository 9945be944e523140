package io.ductor.testing;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectStatus;
import io.ductor.test.PostgresExtension;
import io.ductor.testing.bakery.Bakery;
import io.ductor.testing.bakery.BakeryDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/effects.md: {@code EffectOperations} is the operator's service, "replaced by a
 * bean of its own type; {@code @DurableEffect} methods, the drainer and the alarms of the
 * configuration do not go through them, so they keep working beside your own". An
 * application that guards its operator service (here: one that refuses every call, as
 * method security would without an operator signed in) still tests its effects with
 * {@link DuctorTester}, which runs as the drainer does.
 */
@SpringBootTest(classes = { Bakery.class, OwnEffectOperationsTest.GuardedOperations.class })
@AutoConfigureDuctorTester
class OwnEffectOperationsTest {

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

	@Autowired
	Bakery.Payments payments;

	@Autowired
	EffectOperations operations;

	@Test
	void theTesterDrainsAndAssertsBesideTheApplicationsOwnOperations() {
		assertThat(this.operations).isSameAs(GuardedOperations.GUARDED);
		this.orders.place("o-guarded", 100);
		this.ductor.assertEffects().hasOne("payment.charge").hasStatus(EffectStatus.PENDING);
		List<EffectIntent> ran = this.ductor.drain();
		assertThat(ran).extracting(EffectIntent::effectName).containsExactly("payment.charge");
		assertThat(this.payments.charged()).hasSize(1);
	}

	@Configuration(proxyBeanMethods = false)
	static class GuardedOperations {

		static final EffectOperations GUARDED = (EffectOperations) java.lang.reflect.Proxy.newProxyInstance(
				EffectOperations.class.getClassLoader(), new Class<?>[] { EffectOperations.class },
				(proxy, method, args) -> switch (method.getName()) {
					case "toString" -> "the application's guarded EffectOperations";
					case "hashCode" -> 0;
					case "equals" -> proxy == args[0];
					default -> throw new SecurityException("no operator signed in: " + method.getName());
				});

		@Bean
		EffectOperations guardedOperations() {
			return GUARDED;
		}

	}

}
