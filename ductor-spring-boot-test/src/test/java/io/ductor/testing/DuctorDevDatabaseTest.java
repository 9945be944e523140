package io.ductor.testing;

import java.nio.file.Path;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.test.docs.DocSnippets;
import io.ductor.testing.devshop.ShopApplication;
import io.ductor.testing.devshop.TestShopApplication;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DuctorDevDatabase} runs an application's own main on an embedded PostgreSQL, the
 * way {@code spring-boot:test-run} starts {@link TestShopApplication}: whatever
 * {@code spring.datasource.url} says, Ductor migrates its tables there, the data is kept
 * across restarts, and a stop logs no error.
 */
@ExtendWith(OutputCaptureExtension.class)
class DuctorDevDatabaseTest {

	@Test
	void theTestingPageShowsTheMainThisTestRuns() {
		List<DocSnippets.Snippet> snippets = DocSnippets.between(Path.of("../docs/testing.md"), "dev-database");
		assertThat(snippets).extracting(DocSnippets.Snippet::language).contains("java");
		DocSnippets.assertRuns(snippets.get(0),
				Path.of("src/test/java/io/ductor/testing/devshop/TestShopApplication.java"));
	}

	@Test
	void theApplicationsMainRunsOnTheDevelopmentDatabaseAndKeepsItsDataAcrossRestarts(@TempDir Path directory,
			CapturedOutput output) {
		// the application's own configuration names a server that is not there
		String[] args = { "--spring.datasource.url=jdbc:postgresql://127.0.0.1:1/shop",
				"--" + DuctorDevDatabase.DIRECTORY_PROPERTY + "=" + directory,
				"--spring.main.web-application-type=none" };
		try (ConfigurableApplicationContext context = run(args)) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			assertThat(jdbc.sql("SELECT count(*) FROM ductor_schema_history WHERE success").query(Long.class).single())
				.isPositive();
			new TransactionTemplate(context.getBean(org.springframework.transaction.PlatformTransactionManager.class))
				.executeWithoutResult((status) -> context.getBean(EffectOutbox.class)
					.schedule(EffectRequest.of("receipt.send", "order-1").withKey("receipt:order-1")));
		}
		try (ConfigurableApplicationContext context = run(args)) {
			assertThat(context.getBean(EffectOperations.class).findByKey("receipt:order-1")).isPresent();
		}
		assertThat(output.getAll()).contains("Development database: jdbc:postgresql://localhost:")
			.contains("data in " + directory)
			.doesNotContain(" ERROR ");
	}

	/** What {@link TestShopApplication#main} runs, keeping the context to close it. */
	private static ConfigurableApplicationContext run(String[] args) {
		return SpringApplication.from(ShopApplication::main)
			.with(DuctorDevDatabase.class)
			.run(args)
			.getApplicationContext();
	}

}
