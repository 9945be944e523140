package io.ductor.testing;

import org.springframework.core.Ordered;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.TestExecutionListener;

/**
 * Resets the {@link DuctorTester} of a test annotated with
 * {@link AutoConfigureDuctorTester} before each test method (before its
 * {@code @BeforeEach} methods), so that a context cached between tests carries neither a
 * moved clock, nor an alarm schedule, nor a pending fault into the next test, and gives
 * the application the server's clock back after each, so that whatever it runs between
 * tests runs on the real time. Tests without the annotation are left alone, and their
 * contexts are never loaded by this listener.
 */
final class DuctorTesterResetListener implements TestExecutionListener, Ordered {

	@Override
	public void beforeTestMethod(TestContext testContext) {
		if (TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), AutoConfigureDuctorTester.class)) {
			testContext.getApplicationContext().getBeanProvider(DuctorTester.class).ifAvailable(DuctorTester::reset);
		}
	}

	@Override
	public void afterTestMethod(TestContext testContext) {
		if (TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), AutoConfigureDuctorTester.class)
				&& testContext.hasApplicationContext()) {
			testContext.getApplicationContext().getBeanProvider(DuctorTester.class).ifAvailable(DuctorTester::release);
		}
	}

	@Override
	public int getOrder() {
		// after the dependency-injection listener (2000), before transactional (4000) and
		// SQL script (5000) ones
		return 3000;
	}

}
