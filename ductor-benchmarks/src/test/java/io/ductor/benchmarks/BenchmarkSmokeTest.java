package io.ductor.benchmarks;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The harness itself runs end to end with tiny figures: every system starts, every effect
 * is dispatched and recorded, and the report has its rows. It times nothing.
 */
class BenchmarkSmokeTest {

	@Test
	void aTinyRunProducesAReportWithEverySystemSideBySide() {
		Options options = Options.parse(
				"--scenarios=producer,outbox,footprint,insert-ladder,lag,backlog,ticks,idempotency,idempotency-modes,tracing,live-index",
				"--trials=1", "--effects=100", "--producers=4", "--ticks=64", "--producer-calls=100", "--backlog=300",
				"--big-backlog=0", "--lag-rate=200", "--lag-seconds=1");
		String report = BenchmarkMain.run(options);

		assertThat(report).contains("PostgreSQL settings: ", "fsync=");
		for (String system : List.of("| Ductor |", "| raw outbox |", "| raw outbox, no index |", "| Spring Modulith |",
				"| Ductor's schema by hand (diagnostic) |")) {
			assertThat(report).contains("| 1 end-to-end outbox " + system, "| 1f per effect " + system);
		}
		assertThat(report).contains("| 0 producer's path | Ductor, headline effect | bytes allocated per call",
				"| 0 producer's path | raw outbox, minimal effect | round trips per call",
				"Where the producer's path of the headline effect goes",
				"| 1 end-to-end outbox | Ductor producers alone |",
				"| 1f per effect | Ductor | write-ahead log bytes per effect (whole server)",
				"| 1f per effect | raw outbox | share of updates heap-only (HOT)", "Rows per effect, by table");
		for (String step : List.of("raw outbox", "raw outbox with a unique key",
				"Ductor's row by hand, primary and unique keys only",
				"Ductor's row by hand, with its generated columns", "Ductor's table as migrated, its insert by hand")) {
			assertThat(report).contains("| 1g the producer's insert, step by step | " + step + " producers alone |");
		}
		assertThat(report).contains("| 1g the producer's insert, step by step | Ductor producers alone |",
				"Scenario 1g, Ductor producers alone, the server's backends",
				"| 3 backlog drain | raw outbox with a lease (claim, then fenced completion) | intents/s",
				"Scenario 3, Ductor, the server's backends during the last trial's drain",
				"| 2 lag at 200/s | Ductor | garbage collections of the JVM (every system's) during the trial |");
		assertThat(report).contains("| 4 ticks | Ductor | ticks/s", "| 4 ticks | raw JDBC | ticks/s",
				"| 5 idempotency | Ductor | reserve + complete/s", "| 5 idempotency | raw JDBC |",
				"| 5 idempotency | raw JDBC + pg_notify |", "| 5 idempotency | Ductor | 200-way duplicate storm",
				"all 200 answers equal, action ran once", "| 7 idempotent handler | one transaction | requests/s",
				"| 7 idempotent handler | two-phase |", "| 1t end-to-end outbox, tracing | Ductor, tracing off |",
				"| 1t end-to-end outbox, tracing | Ductor, tracing on |",
				"| 1t end-to-end outbox, tracing | Ductor, tracing on, every recording observed |",
				"| 1t end-to-end outbox, tracing | Ductor, tracing off | JVM CPU per effect",
				"| 1i end-to-end outbox, live index | Ductor without eec_effect_intent_live_id_idx | write-ahead log per intent");
		assertThat(report).doesNotContain("skipped");
	}

	@Test
	void theModulithComparisonsRunEveryOneOfTheirSystems() {
		Options options = Options.parse("--scenarios=kafka,modulith", "--trials=1", "--effects=100", "--producers=4",
				"--lag-seconds=1");
		String report = BenchmarkMain.run(options);

		for (String system : List.of("Spring Modulith, JDBC registry, @Externalized to Kafka",
				"Ductor as Modulith's registry, @Externalized through the relay",
				"Ductor relay (DurableKafka), 64 record keys", "KafkaTemplate.send in the transaction")) {
			assertThat(report).contains("| 11 kafka | " + system);
		}
		assertThat(report).contains("| 13 modulith listener | Spring Modulith, JDBC registry | events/s end to end",
				"| 13 modulith listener | Ductor as Modulith's registry (ductor-spring-modulith) | events/s end to end",
				"| 13 modulith listener | Ductor as Modulith's registry (ductor-spring-modulith) | lag transaction start→listener done p99");
		assertThat(report).doesNotContain("skipped");
	}

	@Test
	void optionsRejectWhatTheyDoNotKnow() {
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> Options.parse("--scenarios=outbox,nope"))
			.withMessageContaining("nope");
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> Options.parse("--trials=0"))
			.withMessageContaining("--trials");
	}

}
