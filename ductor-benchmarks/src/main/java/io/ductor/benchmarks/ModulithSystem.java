package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.event.TransactionalEventListener;

/**
 * Spring Modulith's JDBC event publication registry with its defaults: the producer's
 * {@code @Transactional} method publishes one event (the registry writes an
 * {@code event_publication} row), an {@code @Async @TransactionalEventListener} no-op
 * runs after commit on Boot's task executor, and the registry marks the publication
 * completed.
 */
final class ModulithSystem implements OutboxSystem {

	private final ConfigurableApplicationContext context;

	private final Publisher publisher;

	private final JdbcClient jdbc;

	ModulithSystem(Shape shape, Db db, Probe probe) {
		List<String> properties = new ArrayList<>(List.of(db.datasourceProperties(DuctorSystem.POOL_SIZE)));
		properties.add("spring.main.banner-mode=off");
		properties.add("spring.main.log-startup-info=false");
		properties.add("spring.modulith.events.jdbc.schema-initialization.enabled=true");
		this.context = new SpringApplicationBuilder(Infrastructure.class).web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.initializers((context) -> {
				context.getBeanFactory().registerSingleton("benchmarkProbe", probe);
				context.getBeanFactory().registerSingleton("benchmarkShape", shape);
			})
			.run();
		this.publisher = this.context.getBean(Publisher.class);
		this.jdbc = JdbcClient.create(this.context.getBean(DataSource.class));
	}

	static OutboxSystem.Kind kind(Shape shape) {
		return new OutboxSystem.Kind("Spring Modulith", (db, probe) -> new ModulithSystem(shape, db, probe));
	}

	@Override
	public void produce(int seq) {
		this.publisher.publish(seq);
	}

	@Override
	public long completedInDatabase() {
		return this.jdbc.sql("SELECT count(*) FROM event_publication WHERE completion_date IS NOT NULL")
			.query(Long.class)
			.single();
	}

	/**
	 * Start and completion are the registry's {@code publication_date} (stamped by the
	 * JVM when the event is published in the producer's transaction) and
	 * {@code completion_date} (stamped by the JVM when the listener returned).
	 */
	@Override
	public String lagSql() {
		return "SELECT (serialized_event::jsonb->>'seq')::int, "
				+ "extract(epoch FROM completion_date - publication_date) * 1000 FROM event_publication";
	}

	@Override
	public void close() {
		this.context.close();
	}

	/** The event: one per effect. */
	public record BenchEvent(long seq) {
	}

	/** The headline event: the same three fields as the headline effect's arguments. */
	public record HandleEvent(long seq, String kind, String body) {
	}

	/** The application's service: publishes the event in its own transaction. */
	public static class Publisher {

		private final ApplicationEventPublisher events;

		private final Probe probe;

		private final Shape shape;

		Publisher(ApplicationEventPublisher events, Probe probe, Shape shape) {
			this.events = events;
			this.probe = probe;
			this.shape = shape;
		}

		@Transactional
		public void publish(int seq) {
			this.probe.producing(seq);
			this.events.publishEvent((this.shape == Shape.HEADLINE) ? new HandleEvent(seq, Shape.KIND, Shape.body(seq))
					: new BenchEvent(seq));
		}

	}

	/** The no-op listener. */
	public static class NoOpListener {

		private final Probe probe;

		NoOpListener(Probe probe) {
			this.probe = probe;
		}

		@Async
		@TransactionalEventListener
		public void on(BenchEvent event) {
			this.probe.dispatched(event.seq());
		}

		@Async
		@TransactionalEventListener
		public void on(HandleEvent event) {
			this.probe.dispatched(event.seq());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportModulithEvents
	@EnableAsync
	static class Infrastructure {

		@Bean
		NoOpListener noOpListener(Probe benchmarkProbe) {
			return new NoOpListener(benchmarkProbe);
		}

		@Bean
		Publisher publisher(ApplicationEventPublisher events, Probe benchmarkProbe, Shape benchmarkShape) {
			return new Publisher(events, benchmarkProbe, benchmarkShape);
		}

	}

}
