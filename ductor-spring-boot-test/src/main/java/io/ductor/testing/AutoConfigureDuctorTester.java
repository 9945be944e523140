package io.ductor.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Gives a test a {@link DuctorTester}, on a {@code @SpringBootTest} or beside a test
 * slice.
 * <p>
 * With it, Ductor's background workers do not start
 * ({@code ductor.effects.drainer.enabled}, {@code ductor.effects.reconciler.enabled},
 * {@code ductor.idempotency.sweeper.enabled}, {@code ductor.retention.enabled} and
 * {@code ductor.effects.alarm-scheduler.enabled} are {@code false}): effects run when the
 * test calls {@link DuctorTester#drain()}, on the test's thread. Ductor's clock stands
 * still from the start of every test until
 * {@link DuctorTester#advance(java.time.Duration)} moves it, on the connections of this
 * application only: Ductor's {@code DataSource} is wrapped so that every connection taken
 * from it carries the test's clock, and another application on the database keeps the
 * server's time. Before every test method the clock is set to the server's time again,
 * recurring alarms start again from it, injected faults are cleared, and the assertions
 * start seeing effects afresh, so that tests sharing a cached context do not see each
 * other's faults, time, alarm schedules or effects.
 * <p>
 * On a slice, which imports only its own auto-configurations, this annotation also
 * imports Ductor's (the application still needs a {@code DataSource}).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureDuctorTester {

}
