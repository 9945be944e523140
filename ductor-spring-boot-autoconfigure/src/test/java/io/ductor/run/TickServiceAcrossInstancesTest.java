package io.ductor.run;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

import io.ductor.Concurrently;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application instances, each with its own connection pool, ticking the same runs.
 */
class TickServiceAcrossInstancesTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void twoInstancesTickingTheSameRunsKeepEveryInvariant() {
		ApplicationContextRunner instance = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					JacksonAutoConfiguration.class, DuctorAutoConfiguration.class))
			.withPropertyValues(postgres.springProperties())
			.withPropertyValues("spring.datasource.hikari.maximum-pool-size=8");
		instance.withPropertyValues("spring.datasource.hikari.pool-name=instance-a").run((a) -> {
			instance.withPropertyValues("spring.datasource.hikari.pool-name=instance-b").run((b) -> {
				assertThat(a.getBean(DataSource.class)).isNotSameAs(b.getBean(DataSource.class));
				List<TickService> services = List.of(a.getBean(TickService.class), b.getBean(TickService.class));
				List<String> runs = List.of("shared-1", "shared-2", "shared-3");
				for (String run : runs) {
					services.get(0).start("counter", run, new Counter(0));
					assertThat(services.get(1).start("counter", run, new Counter(0)))
						.isEqualTo(StartOutcome.ALREADY_STARTED);
				}
				AtomicInteger duplicates = new AtomicInteger();
				// 16 threads, 8 per instance; every stamp is delivered once by each
				// instance
				Concurrently.run(16, (thread) -> {
					TickService ticks = services.get(thread % 2);
					List<String> order = new ArrayList<>();
					for (int i = 0; i < 60; i++) {
						order.add(runs.get(i % runs.size()) + "|w" + (thread / 2) + "-" + i);
					}
					for (String item : order) {
						String[] parts = item.split("\\|");
						TickOutcome<Counter> outcome = ticks.tick(parts[0], parts[1], Counter.class,
								(state, tick) -> state.plus(1));
						if (outcome.result() == TickOutcome.Result.DUPLICATE) {
							duplicates.incrementAndGet();
						}
					}
					return null;
				});
				RunTables tables = new RunTables(a.getBean(DataSource.class));
				// 8 workers x 60 stamps = 480 distinct stamps, each delivered twice
				assertThat(duplicates).hasValue(480);
				for (String run : runs) {
					assertThat(services.get(1).find(run, Counter.class).orElseThrow().state().value()).isEqualTo(160);
					tables.assertContiguousHistory(run, 160);
				}
			});
		});
	}

}
