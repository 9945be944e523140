package io.ductor.run;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.BeanCurrentlyInCreationException;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Component;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.run.answer.OrderEffects;
import io.ductor.run.answer.OrderFlow;
import io.ductor.run.answer.OrderState;
import io.ductor.run.answer.PaymentGateway;
import io.ductor.test.PostgresExtension;
import io.ductor.test.docs.DocSnippets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The flow records effects and the effects answer the flow: the pattern of
 * {@code docs/runs.md} ("Effects that answer the run") starts with Spring Boot's
 * defaults, which refuse circular references, and an order goes from its placing tick
 * through the charge to the answering tick. The beans of {@code io.ductor.run.answer} are
 * the page's code.
 */
class EffectsAnsweringTheRunTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void theSnippetsOfTheRunsPageAreTheBeansThisTestStarts() {
		List<DocSnippets.Snippet> snippets = DocSnippets.between(Path.of("../docs/runs.md"), "effects-answer-the-run");
		assertThat(snippets).hasSize(2);
		Path answer = Path.of("src/test/java/io/ductor/run/answer");
		DocSnippets.assertRuns(snippets.get(0), answer.resolve("OrderFlow.java"));
		DocSnippets.assertRuns(snippets.get(1), answer.resolve("OrderEffects.java"));
	}

	@Test
	void theFlowAndItsEffectsStartWithSpringBootsDefaultsAndTheEffectAnswersTheRun() {
		try (ConfigurableApplicationContext context = start(Documented.class)) {
			context.getBean(OrderFlow.class).place("order-1", 4200);
			TickService ticks = context.getBean(TickService.class);
			await().atMost(Duration.ofSeconds(30))
				.until(() -> ticks.find("order-1", OrderState.class).orElseThrow().status() == RunStatus.COMPLETED);
			assertThat(ticks.find("order-1", OrderState.class).orElseThrow().state())
				.isEqualTo(new OrderState("paid", "ch-order-1-4200"));
			assertThat(ticks.transitions("order-1")).extracting(RunTransition::stamp)
				.containsExactly("place", "payment:charge:order-1");
			assertThat(context.getBean(PaymentGateway.class).charges()).isOne();
		}
	}

	@Test
	void injectingTheFlowIntoItsEffectsIsACycleSpringBootRefuses() {
		assertThatException().isThrownBy(() -> start(Cyclic.class).close())
			.withRootCauseInstanceOf(BeanCurrentlyInCreationException.class);
	}

	private static ConfigurableApplicationContext start(Class<?> application) {
		String[] arguments = java.util.Arrays.stream(postgres.springProperties())
			.map((property) -> "--" + property)
			.toArray(String[]::new);
		return new SpringApplicationBuilder(application).web(WebApplicationType.NONE)
			.properties("spring.datasource.hikari.maximum-pool-size=4")
			.run(arguments);
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
			DuctorEffectsAutoConfiguration.class })
	@Import({ OrderFlow.class, OrderEffects.class, PaymentGateway.class })
	static class Documented {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
			DuctorEffectsAutoConfiguration.class })
	@Import({ CyclicFlow.class, CyclicEffects.class })
	static class Cyclic {

	}

	@Component
	static class CyclicFlow {

		CyclicFlow(TickService ticks, CyclicEffects effects) {
		}

	}

	@Component
	public static class CyclicEffects {

		CyclicEffects(CyclicFlow flow) {
		}

		@DurableEffect(name = "cyclic.charge")
		public void charge(String orderId) {
		}

	}

}
