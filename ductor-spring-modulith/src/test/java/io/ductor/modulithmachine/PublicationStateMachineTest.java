package io.ductor.modulithmachine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.CompletedEventPublications;
import org.springframework.modulith.events.EventPublication;
import org.springframework.modulith.events.FailedEventPublications;
import org.springframework.modulith.events.IncompleteEventPublications;
import org.springframework.modulith.events.ResubmissionOptions;
import org.springframework.modulith.events.core.EventPublicationRegistry;

import io.ductor.effect.internal.EffectDrainer;
import io.ductor.modulithmachine.desk.Desk;
import io.ductor.modulithmachine.desk.Taken;
import io.ductor.modulithmachine.ledger.Ledger;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Ductor as Modulith's event publication registry against a model, on real PostgreSQL:
 * one Spring context (the drainer running, two attempts, quick backoff) driven through
 * random sequences of:
 * <ul>
 * <li>an order taken in a committed transaction (a row and a {@link Taken} event);</li>
 * <li>an order taken in a transaction that rolls back;</li>
 * <li>the ledger's listener failing its next N calls after booking (the publication waits
 * with backoff and, past its attempts, fails);</li>
 * <li>failed publications resubmitted through {@link FailedEventPublications} or
 * {@link IncompleteEventPublications#resubmitIncompletePublications};</li>
 * <li>completed publications deleted through
 * {@link CompletedEventPublications#deletePublications} or
 * {@link CompletedEventPublications#deletePublicationsOlderThan};</li>
 * <li>the drainer stopped and started ({@code SmartLifecycle});</li>
 * <li>settling: waiting until no publication waits or runs.</li>
 * </ul>
 * After every settling, and at the end of a sequence once every failed publication is
 * resubmitted and completed:
 * <ul>
 * <li>a completed publication booked exactly once, under its intent's idempotency key,
 * and its listener succeeded once (more calls only as failed ones); a failed one
 * succeeded never;</li>
 * <li>nothing of a rolled-back transaction: no row, no intent, no call, no booking;</li>
 * <li>Modulith's views agree with the table: the incomplete publications are the intents
 * not completed (failed ones {@code FAILED}), the completed ones are shown until deleted,
 * and only completed ones are deleted.</li>
 * </ul>
 */
class PublicationStateMachineTest {

	static final Duration SETTLE = Duration.ofSeconds(30);

	static final AtomicLong tries = new AtomicLong();

	static final Map<String, AtomicLong> seen = new ConcurrentSkipListMap<>();

	static TestDatabase database;

	static ConfigurableApplicationContext context;

	static Desk desk;

	static Ledger ledger;

	static EffectDrainer drainer;

	static JdbcClient jdbc;

	static EventPublicationRegistry registry;

	static IncompleteEventPublications incomplete;

	static FailedEventPublications failed;

	static CompletedEventPublications completed;

	@BeforeContainer
	static void start() {
		database = TestDatabases.create();
		List<String> properties = new ArrayList<>(List.of(database.springProperties()));
		properties.addAll(List.of("ductor.effects.drainer.poll-interval=50ms", "ductor.effects.backoff.initial=50ms",
				"ductor.effects.backoff.max=100ms", "ductor.effects.max-attempts=2", "logging.level.io.ductor=error",
				"logging.level.org.springframework.modulith=error"));
		context = new SpringApplicationBuilder(MachineApp.class).properties(properties.toArray(String[]::new)).run();
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
		jdbc.sql(MachineApp.SCHEMA).update();
		desk = context.getBean(Desk.class);
		ledger = context.getBean(Ledger.class);
		drainer = context.getBean(EffectDrainer.class);
		registry = context.getBean(EventPublicationRegistry.class);
		incomplete = context.getBean(IncompleteEventPublications.class);
		failed = context.getBean(FailedEventPublications.class);
		completed = context.getBean(CompletedEventPublications.class);
	}

	@AfterContainer
	static void stop() {
		System.out.println("Publication state machine: " + tries.get() + " sequence(s) passed; seen: " + seen);
		if (context != null) {
			context.close();
		}
		if (database != null) {
			TestDatabases.drop(database);
		}
	}

	@AfterTry
	void restore() {
		ledger.heal();
		if (!drainer.isRunning()) {
			drainer.start();
		}
	}

	/**
	 * Shrinking is off: a sequence runs the real drainer for seconds, and the failure
	 * names the steps that led to it.
	 */
	@Property(tries = 10, afterFailure = AfterFailureMode.SAMPLE_FIRST, shrinking = ShrinkingMode.OFF)
	void publicationsKeepTheirPromises(@ForAll("sequences") ActionChain<World> chain) {
		World end = chain.run();
		end.finish();
		tries.incrementAndGet();
	}

	@Provide
	Arbitrary<ActionChain<World>> sequences() {
		return ActionChain.<World>startWith(World::new)
			.withAction(6, action(Arbitraries.just(step("commit", World::commit)), (w) -> true))
			.withAction(2, action(Arbitraries.just(step("roll back", World::rollBack)), (w) -> true))
			.withAction(3, action(
					Arbitraries.integers().between(1, 4).map((n) -> step("fail next " + n, (w) -> w.failNext(n))),
					(w) -> true))
			.withAction(2,
					action(Arbitraries.of(Resubmit.values()).map((how) -> step("resubmit " + how, how)), (w) -> true))
			.withAction(2,
					action(Arbitraries.of(Delete.values()).map((how) -> step("delete " + how, how)), (w) -> true))
			.withAction(1, action(Arbitraries.just(step("stop drainer", World::stopDrainer)), (w) -> w.running))
			.withAction(2, action(Arbitraries.just(step("start drainer", World::startDrainer)), (w) -> !w.running))
			.withAction(3, action(Arbitraries.just(step("settle", World::settle)), (w) -> w.running))
			.withMaxTransformations(15);
	}

	record Step(String description, Consumer<World> body) {
	}

	static Step step(String description, Consumer<World> body) {
		return new Step(description, body);
	}

	static Action.Independent<World> action(Arbitrary<Step> step, Predicate<World> when) {
		return new Action.Independent<>() {

			@Override
			public boolean precondition(World state) {
				return when.test(state);
			}

			@Override
			public Arbitrary<Transformer<World>> transformer() {
				return step.map((chosen) -> Transformer.mutate(chosen.description(), (state) -> {
					see("step " + chosen.description().replaceAll(" \\d+$", ""));
					state.steps.add(chosen.description());
					chosen.body().accept(state);
				}));
			}

		};
	}

	/** Failed publications resubmitted, one way or the other. */
	enum Resubmit implements Consumer<World> {

		FAILED {
			@Override
			public void accept(World world) {
				failed.resubmit(ResubmissionOptions.defaults().withFilter(world::owns));
			}
		},

		INCOMPLETE {
			@Override
			public void accept(World world) {
				incomplete.resubmitIncompletePublications(world::owns);
			}
		}

	}

	/** Completed publications deleted, some by a filter or all that are completed. */
	enum Delete implements Consumer<World> {

		HALF {
			@Override
			public void accept(World world) {
				Set<String> chosen = world.committed.stream()
					.filter((id) -> id.hashCode() % 2 == 0)
					.collect(Collectors.toSet());
				world.deletable.addAll(chosen);
				completed.deletePublications((publication) -> chosen.contains(orderOf(publication)));
			}
		},

		OLDER_THAN_ZERO {
			@Override
			public void accept(World world) {
				world.deletable.addAll(world.committed);
				completed.deletePublicationsOlderThan(Duration.ZERO);
			}
		}

	}

	/**
	 * Counts what the sequences reached, for the report: a model that reaches nothing
	 * proves nothing.
	 */
	static void see(String what) {
		seen.computeIfAbsent(what, (key) -> new AtomicLong()).incrementAndGet();
	}

	static String orderOf(EventPublication publication) {
		return (publication.getEvent() instanceof Taken taken) ? taken.id() : null;
	}

	/** What one sequence did, and what must hold of it. */
	static class World {

		final String prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + "-";

		final List<String> steps = new ArrayList<>();

		final Set<String> committed = new HashSet<>();

		final Set<String> rolledBack = new HashSet<>();

		/** Orders a deletion named while they may have been completed. */
		final Set<String> deletable = new HashSet<>();

		boolean running = true;

		int orders;

		boolean owns(EventPublication publication) {
			String order = orderOf(publication);
			return order != null && order.startsWith(this.prefix);
		}

		void commit() {
			String id = this.prefix + this.orders++;
			desk.take(id);
			this.committed.add(id);
		}

		void rollBack() {
			String id = this.prefix + this.orders++;
			try {
				desk.takeThenFail(id);
				throw new AssertionError("the transaction of " + id + " did not roll back");
			}
			catch (IllegalStateException expected) {
				this.rolledBack.add(id);
			}
		}

		void failNext(int n) {
			ledger.failNext(n);
		}

		void stopDrainer() {
			drainer.stop();
			this.running = false;
		}

		void startDrainer() {
			drainer.start();
			this.running = true;
		}

		/** Waits until none of this sequence's publications waits or runs. */
		void settle() {
			await("publications settled after " + this.steps).atMost(SETTLE)
				.pollInterval(Duration.ofMillis(50))
				.until(() -> statuses().values().stream().allMatch((s) -> s.equals("completed") || s.equals("failed")));
			check();
		}

		/** Every failed publication resubmitted and completed, then the checks. */
		void finish() {
			ledger.heal();
			if (!this.running) {
				startDrainer();
			}
			await("every publication completed after " + this.steps).atMost(SETTLE)
				.pollInterval(Duration.ofMillis(100))
				.until(() -> {
					failed.resubmit(ResubmissionOptions.defaults().withFilter(this::owns));
					return statuses().values().stream().allMatch("completed"::equals);
				});
			check();
		}

		void check() {
			Map<String, String> statuses = statuses();
			Map<String, String> keys = keys();
			for (String id : this.committed) {
				String status = statuses.get(id);
				List<String> bookings = bookings(id);
				if (ledger.calls(id) > 1) {
					see("checked: called more than once");
				}
				if (!bookings.isEmpty() && ledger.failed(id) > 0) {
					see("checked: booked, then failed");
				}
				if (status == null) {
					see("checked: deleted");
					assertThat(this.deletable)
						.as("%s gone from the table though no deletion named it, after %s", id, this.steps)
						.contains(id);
					assertThat(bookings).as("bookings of deleted %s after %s", id, this.steps).hasSize(1);
					assertThat(ledger.succeeded(id)).as("successful calls of deleted %s after %s", id, this.steps)
						.isEqualTo(1);
				}
				else if (status.equals("completed")) {
					see("checked: completed");
					assertThat(bookings).as("bookings of completed %s after %s", id, this.steps)
						.containsExactly(keys.get(id));
					assertThat(ledger.succeeded(id)).as("successful calls of completed %s after %s", id, this.steps)
						.isEqualTo(1);
				}
				else {
					see("checked: failed");
					assertThat(status).as("status of %s after %s", id, this.steps).isEqualTo("failed");
					assertThat(ledger.succeeded(id)).as("successful calls of failed %s after %s", id, this.steps)
						.isZero();
					assertThat(bookings).as("bookings of failed %s after %s", id, this.steps)
						.allMatch((key) -> key.equals(keys.get(id)));
				}
				assertThat(ledger.calls(id)).as("calls of %s after %s", id, this.steps)
					.isEqualTo(ledger.failed(id) + ledger.succeeded(id));
			}
			for (String id : this.rolledBack) {
				see("checked: rolled back");
				assertThat(statuses).as("intents of rolled-back %s after %s", id, this.steps).doesNotContainKey(id);
				assertThat(bookings(id)).as("bookings of rolled-back %s after %s", id, this.steps).isEmpty();
				assertThat(ledger.calls(id)).as("calls of rolled-back %s after %s", id, this.steps).isZero();
				assertThat(jdbc.sql("SELECT count(*) FROM desk_order WHERE id = ?")
					.param(id)
					.query(Integer.class)
					.single()).as("row of rolled-back %s", id).isZero();
			}
			assertThat(statuses.keySet()).as("intents after %s", this.steps).isSubsetOf(this.committed);
			Map<String, String> incompleteView = new HashMap<>();
			for (EventPublication publication : registry.findIncompletePublications()) {
				if (owns(publication)) {
					incompleteView.put(orderOf(publication), publication.getStatus().name());
				}
			}
			Map<String, String> notCompleted = new HashMap<>();
			statuses.forEach((id, status) -> {
				if (!status.equals("completed")) {
					notCompleted.put(id, status.equals("failed") ? "FAILED" : "waiting");
				}
			});
			assertThat(incompleteView.keySet()).as("incomplete publications after %s", this.steps)
				.isEqualTo(notCompleted.keySet());
			notCompleted.forEach((id, status) -> {
				if (status.equals("FAILED")) {
					assertThat(incompleteView.get(id)).as("Modulith's status of failed %s", id).isEqualTo("FAILED");
				}
			});
			Set<String> completedView = completed.findAll()
				.stream()
				.filter(this::owns)
				.map(PublicationStateMachineTest::orderOf)
				.collect(Collectors.toSet());
			Set<String> completedInTable = statuses.entrySet()
				.stream()
				.filter((entry) -> entry.getValue().equals("completed"))
				.map(Map.Entry::getKey)
				.collect(Collectors.toSet());
			assertThat(completedView).as("completed publications after %s", this.steps).isEqualTo(completedInTable);
		}

		Map<String, String> statuses() {
			return column("status");
		}

		Map<String, String> keys() {
			return column("idempotency_key");
		}

		private Map<String, String> column(String column) {
			Map<String, String> values = new HashMap<>();
			jdbc.sql("SELECT payload->3->>'id' AS id, " + column + " AS v FROM eec_effect_intent"
					+ " WHERE effect_name = 'modulith.publication' AND payload->3->>'id' LIKE ?")
				.param(this.prefix + "%")
				.query((rs, n) -> values.put(rs.getString("id"), rs.getString("v")))
				.list();
			return values;
		}

		List<String> bookings(String id) {
			return jdbc.sql("SELECT booking_key FROM ledger_booking WHERE order_id = ?")
				.param(id)
				.query(String.class)
				.list();
		}

	}

}
