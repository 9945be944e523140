package io.ductor.testing;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application that has the test module on its classpath but does not use
 * {@link AutoConfigureDuctorTester} runs exactly as in production: no tester, its
 * workers, the server's clock.
 */
class NotActiveWithoutTheAnnotationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JacksonAutoConfiguration.class))
		.withConfiguration(AutoConfigurations.of(DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorIdempotencyAutoConfiguration.class))
		.withPropertyValues(postgres.springProperties());

	@Test
	void theTesterIsNotAmongTheApplicationsAutoConfigurations() {
		List<String> candidates = ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader())
			.getCandidates();
		assertThat(candidates)
			.contains(DuctorAutoConfiguration.class.getName(), DuctorEffectsAutoConfiguration.class.getName(),
					DuctorIdempotencyAutoConfiguration.class.getName())
			.noneMatch((candidate) -> candidate.startsWith("io.ductor.testing"));
		assertThat(ImportCandidates.load(AutoConfigureDuctorTester.class, getClass().getClassLoader()).getCandidates())
			.contains(DuctorTesterAutoConfiguration.class.getName());
	}

	@Test
	void withoutTheAnnotationTheApplicationHasItsWorkersAndNoTester() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(DuctorTester.class).hasSingleBean(EffectDrainer.class);
			assertThat(context.getBeansOfType(PeriodicWorker.class)).containsOnlyKeys("ductorAlarmSchedulerWorker",
					"ductorRetentionWorker", "ductorReconcilerWorker", "ductorSweeperWorker");
			assertThat(context.getBean(EffectDrainer.class).isRunning()).isTrue();
			assertThat(JdbcClient.create(postgres.dataSource())
				.sql("SELECT prosrc FROM pg_proc WHERE proname IN ('ductor_now', 'ductor_clock') ORDER BY proname")
				.query(String.class)
				.list()).allSatisfy((body) -> assertThat(body).contains("current_setting('ductor.clock', true)"));
		});
	}

	@Test
	void theTestContextCustomizersAndTheResetListenerIgnoreTestsWithoutTheAnnotation() throws Exception {
		assertThat(new DuctorTesterContextCustomizerFactory().createContextCustomizer(Plain.class, List.of())).isNull();
		assertThat(new EmbeddedDatabaseContextCustomizerFactory().createContextCustomizer(Plain.class, List.of()))
			.isNull();
		assertThat(new DuctorTesterContextCustomizerFactory().createContextCustomizer(Annotated.class, List.of()))
			.isNotNull();
		org.springframework.test.context.TestContext plain = org.mockito.Mockito
			.mock(org.springframework.test.context.TestContext.class);
		org.mockito.Mockito.<Class<?>>when(plain.getTestClass()).thenReturn(Plain.class);
		new DuctorTesterResetListener().beforeTestMethod(plain);
		org.mockito.Mockito.verify(plain, org.mockito.Mockito.never()).getApplicationContext();
	}

	@Test
	void theTesterAutoConfigurationTurnsNothingOffByItselfAndBacksOffWithoutDuctor() {
		this.runner.withConfiguration(AutoConfigurations.of(DuctorTesterAutoConfiguration.class))
			.withPropertyValues("ductor.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DuctorTester.class));
	}

	static class Plain {

	}

	@AutoConfigureDuctorTester
	static class Annotated {

	}

}
