package io.ductor.reliability;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;
import io.ductor.reliability.workload.TickLoop.Counter;
import io.ductor.reliability.workload.WorkloadApplication;
import io.ductor.reliability.workload.WorkloadSchema;
import io.ductor.run.StartOutcome;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Hostile inputs that found something (see RELIABILITY.md, "Findings"): each test states
 * the promise that was broken before the fix.
 */
class LibraryFindingsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext app;

	@BeforeAll
	static void start() {
		WorkloadSchema.create(postgres.dataSource());
		app = new SpringApplicationBuilder(WorkloadApplication.class).web(WebApplicationType.NONE)
			.properties(properties())
			.run();
	}

	static String[] properties() {
		return new String[] { "spring.datasource.url=" + postgres.jdbcUrl(),
				"spring.datasource.username=" + postgres.username(),
				"spring.datasource.password=" + ((postgres.password() != null) ? postgres.password() : ""),
				"workload.ticking=false", "logging.level.root=warn" };
	}

	@AfterAll
	static void stop() {
		if (app != null) {
			app.close();
		}
	}

	/**
	 * Run ids differing only in an unpaired UTF-16 surrogate are two runs, or are
	 * refused.
	 */
	@Test
	void runIdsThatDifferOnlyInAnUnpairedSurrogateNeverShareARun() {
		TickService ticks = app.getBean(TickService.class);
		String first = "lone-\uD800";
		String second = "lone-\uDBFF";
		StartOutcome outcome;
		try {
			outcome = ticks.start("workload", first, new Counter(0, null));
		}
		catch (IllegalArgumentException refused) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> ticks.start("workload", second, new Counter(0, null)));
			return;
		}
		assertThat(outcome).isEqualTo(StartOutcome.CREATED);
		assertThat(ticks.start("workload", second, new Counter(0, null))).as("a different run id")
			.isEqualTo(StartOutcome.CREATED);
	}

	/**
	 * Tenant scopes differing only in an unpaired surrogate never see each other's
	 * decisions.
	 */
	@Test
	void tenantScopesThatDifferOnlyInAnUnpairedSurrogateNeverShareADecision() {
		IdempotencyService service = app.getBean(IdempotencyService.class);
		IdempotentRequest alice;
		try {
			alice = new IdempotentRequest("tenant-\uD800", "payments", "k-1", "f");
		}
		catch (IllegalArgumentException refused) {
			return;
		}
		service.execute(alice, String.class, () -> "alice's secret");
		IdempotentResult<String> bob = service.execute(new IdempotentRequest("tenant-\uDBFF", "payments", "k-1", "f"),
				String.class, () -> "bob's answer");
		assertThat(bob.value()).as("another tenant's stored answer must never be replayed").isEqualTo("bob's answer");
	}

	/**
	 * An application that does not use Flyway itself, on a database that already has
	 * tables, still starts once it adds the starter (Ductor migrates with a private
	 * Flyway instance).
	 */
	@Test
	void anApplicationWithoutFlywayMigrationsStartsOnADatabaseThatAlreadyHasTables() {
		// a command-line argument, so that it wins over the workload's
		// application.properties
		assertThatCode(() -> new SpringApplicationBuilder(WorkloadApplication.class).web(WebApplicationType.NONE)
			.properties(properties())
			.run("--spring.flyway.enabled=true")
			.close()).doesNotThrowAnyException();
	}

}
