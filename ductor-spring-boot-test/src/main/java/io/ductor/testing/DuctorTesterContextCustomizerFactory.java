package io.ductor.testing;

import java.util.List;
import java.util.Map;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * Turns Ductor's background workers off in the contexts of tests annotated with
 * {@link AutoConfigureDuctorTester}, ahead of every other property source: the drainer
 * would race with {@link DuctorTester#drain()}, and the reconciler, sweeper and retention
 * with the test's assertions.
 */
final class DuctorTesterContextCustomizerFactory implements ContextCustomizerFactory {

	static final Map<String, Object> WORKERS_OFF = Map.of("ductor.effects.drainer.enabled", "false",
			"ductor.effects.reconciler.enabled", "false", "ductor.idempotency.sweeper.enabled", "false",
			"ductor.retention.enabled", "false", "ductor.effects.alarm-scheduler.enabled", "false");

	@Override
	public ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		return TestContextAnnotationUtils.hasAnnotation(testClass, AutoConfigureDuctorTester.class) ? new WorkersOff()
				: null;
	}

	private static final class WorkersOff implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
			context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("ductorTester", WORKERS_OFF));
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof WorkersOff;
		}

		@Override
		public int hashCode() {
			return WorkersOff.class.hashCode();
		}

	}

}
