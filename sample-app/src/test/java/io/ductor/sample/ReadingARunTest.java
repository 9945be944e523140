package io.ductor.sample;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectOperations;
import io.ductor.run.Run;
import io.ductor.run.RunTransition;
import io.ductor.run.TickService;
import io.ductor.sample.order.OrderFlow;
import io.ductor.sample.order.OrderState;
import io.ductor.sample.order.PlaceOrderRequest;
import io.ductor.test.PostgresExtension;
import io.ductor.test.docs.DocSnippets;
import io.ductor.testing.AutoConfigureDuctorTester;
import io.ductor.testing.DuctorTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The "Reading a run" snippet of {@code docs/runs.md}, run on an order of the shop: the
 * page's code is {@link #read(String)}, and what it reads is what the page says.
 */
@SpringBootTest(classes = SampleApplication.class,
		properties = { "sample.gateway.failure-rate=0", "sample.gateway.latency=0s", "sample.mailer.failure-rate=0",
				"sample.mailer.latency=0s" })
@AutoConfigureDuctorTester
class ReadingARunTest {

	private static final Path RUNS = Path.of("../docs/runs.md");

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", postgres::jdbcUrl);
		registry.add("spring.datasource.username", postgres::username);
		registry.add("spring.datasource.password", () -> (postgres.password() != null) ? postgres.password() : "");
		registry.add("spring.kafka.bootstrap-servers", SampleKafka::bootstrapServers);
	}

	@Autowired
	OrderFlow orders;

	@Autowired
	DuctorTester ductor;

	@Autowired
	TickService ticks;

	@Autowired
	EffectOperations operations;

	@Test
	void theSnippetOfTheRunsPageIsTheCodeThisTestRuns() {
		List<DocSnippets.Snippet> snippets = DocSnippets.between(RUNS, "reading-a-run");
		assertThat(snippets).extracting(DocSnippets.Snippet::language).containsExactly("java");
		DocSnippets.assertRuns(snippets.get(0), Path.of("src/test/java/io/ductor/sample/ReadingARunTest.java"));
	}

	@Test
	void readingACompletedOrderGivesWhatTheRunsPageShows() {
		String orderId = this.orders.place("reading-1", new PlaceOrderRequest("alice", "book-1", 1));
		this.ductor.drain();
		assertThat(read(orderId)).containsExactly("COMPLETED after 3 ticks, stage PAID", "1 place -> ACTIVE",
				"2 stock:reserve:" + orderId + " -> ACTIVE", "3 payment:charge:" + orderId + " -> COMPLETED",
				"stock.reserve COMPLETED after 1 attempt(s)", "payment.charge COMPLETED after 1 attempt(s)",
				"receipt.send COMPLETED after 1 attempt(s)");
	}

	/** The snippet of docs/runs.md, "Reading a run". */
	private List<String> read(String orderId) {
		TickService ticks = this.ticks;
		EffectOperations operations = this.operations;
		// tag::runs-reading-a-run[]
		Run<OrderState> run = ticks.find(orderId, OrderState.class) // empty for an
																	// unknown run
			.orElseThrow();
		List<String> lines = new ArrayList<>();
		lines.add(run.status() + " after " + run.lastTransitionSeq() + " ticks, stage " + run.state().stage());
		for (RunTransition transition : ticks.transitions(orderId)) { // oldest first: seq
																		// 1, 2, 3, …
			lines.add(transition.seq() + " " + transition.stamp() + " -> " + transition.runStatus());
		}
		for (EffectIntent intent : operations.findByRun(orderId)) { // the intents its
																	// ticks recorded
			lines.add(intent.effectName() + " " + intent.status() + " after " + intent.attempts() + " attempt(s)");
		}
		// end::runs-reading-a-run[]
		return lines;
	}

}
