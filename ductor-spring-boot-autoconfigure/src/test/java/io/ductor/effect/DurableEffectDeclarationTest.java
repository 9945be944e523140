package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.effect.internal.EffectWriter;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What can be detected about a @DurableEffect declaration fails start-up, naming the
 * method.
 */
class DurableEffectDeclarationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners.onDatabase(postgres,
			DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class);

	@Test
	void aWellDeclaredEffectStartsAndIsProxied() {
		this.runner.withBean(Good.class).run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(EffectOutbox.class)
				.hasSingleBean(EffectDrainer.class)
				.hasBean("ductorReconcilerWorker");
			assertThat(org.springframework.aop.support.AopUtils.isAopProxy(context.getBean(Good.class))).isTrue();
		});
	}

	@Test
	void aSubclassOverridingAnEffectMethodDeclaresTheEffectOnceAndRunsTheOverride() {
		this.runner.withBean(GoodOverride.class).run((context) -> {
			assertThat(context).hasNotFailed();
			GoodOverride bean = context.getBean(GoodOverride.class);
			new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
				.executeWithoutResult((status) -> bean.send("overridden"));
			await().atMost(Duration.ofSeconds(20)).until(() -> GoodOverride.RECEIVED.contains("overridden"));
			assertThat(JdbcClient.create(context.getBean(DataSource.class))
				.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = 'good'")
				.query(Long.class)
				.single()).isOne();
		});
	}

	@Test
	void nonVoidMethodsFailStartUp() {
		assertFails(ReturnsValue.class, "must return void");
	}

	@Test
	void nonPublicMethodsFailStartUp() {
		assertFails(NotPublic.class, "must be public");
	}

	@Test
	void finalMethodsFailStartUp() {
		assertFails(FinalMethod.class, "must not be final");
	}

	@Test
	void staticMethodsFailStartUp() {
		assertFails(StaticMethod.class, "must not be static");
	}

	@Test
	void duplicateNamesFailStartUp() {
		this.runner.withBean(Good.class).withBean(SameName.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains("@DurableEffect name 'good' of").contains("is already used by");
		});
	}

	@Test
	void invalidKeyExpressionsAndDelaysFailStartUp() {
		assertFails(BadKey.class, "key '#id +' is not a valid SpEL expression");
		assertFails(BadDelay.class, "delay 'ten minutes' is not an ISO-8601 duration");
	}

	@Test
	void keysNamingNoParameterFailStartUp() {
		assertFails(UnknownVariable.class,
				"key ''ship:' + #orderId' names #orderId, which is not a parameter of the method (its parameters: id)");
		assertFails(UnknownOrderingVariable.class, "orderingKey '#p1' names #p1, which is not a parameter");
		this.runner.withBean(Positional.class).run((context) -> assertThat(context).hasNotFailed());
	}

	/**
	 * Keys a valid application may write: none names a variable that is null in every
	 * call, so none may fail start-up.
	 */
	@Test
	void validKeysOfEveryShapeStart() {
		for (Class<?> bean : new Class<?>[] { Selection.class, Projection.class, Assigned.class, Varargs.class,
				GenericMethod.class, Overloaded.class }) {
			this.runner.withBean(bean).run((context) -> assertThat(context).as(bean.getSimpleName()).hasNotFailed());
		}
	}

	/**
	 * A key calling a function through a variable that is no parameter
	 * ({@code #hash(#id)}) fails every call ("function not defined"), as a variable
	 * naming no parameter is null in every call: start-up should say so, as the docs
	 * promise for a key that "names no parameter".
	 */
	@Test
	void keysCallingAFunctionThatIsNoParameterFailStartUp() {
		assertFails(UnknownFunction.class, "#hash");
	}

	/**
	 * Compiled without {@code -parameters}, a method's parameter names are unknown: a key
	 * by name would be {@code null} for every call, so start-up fails and says how to
	 * keep the names.
	 */
	@Test
	void keysByNameOfAClassCompiledWithoutParameterNamesFailStartUp(@TempDir Path classes) throws Exception {
		Class<?> compiled = compileWithoutParameterNames(classes, "billing.Charges", """
				package billing;

				public class Charges {
				    @io.ductor.effect.DurableEffect(name = "charges.charge", key = "'charge:' + #subscriptionId")
				    public void charge(String subscriptionId) {
				    }
				}
				""");
		assertThat(compiled.getMethod("charge", String.class).getParameters()[0].isNamePresent()).isFalse();
		this.runner.withClassLoader(compiled.getClassLoader()).withBean(compiled).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains("names #subscriptionId, which is not a parameter of the method")
				.contains("Compile with -parameters")
				.contains("#p0");
		});
	}

	private static Class<?> compileWithoutParameterNames(Path classes, String name, String source) throws Exception {
		Path file = classes.resolve(name.substring(name.lastIndexOf('.') + 1) + ".java");
		Files.writeString(file, source);
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		int status = compiler.run(null, null, null, "-proc:none", "-classpath", System.getProperty("java.class.path"),
				"-d", classes.toString(), file.toString());
		assertThat(status).as("javac's exit status").isZero();
		URLClassLoader loader = new URLClassLoader(new URL[] { classes.toUri().toURL() },
				DurableEffectDeclarationTest.class.getClassLoader());
		return loader.loadClass(name);
	}

	@Test
	void drainerAndReconcilerTurnOffByProperty() {
		this.runner.withBean(Good.class)
			.withPropertyValues("ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(EffectOutbox.class)
				.doesNotHaveBean(EffectDrainer.class)
				.doesNotHaveBean("ductorReconcilerWorker"));
	}

	@Test
	void ductorDisabledTurnsEffectsOff() {
		this.runner.withPropertyValues("ductor.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(EffectOutbox.class)
				.doesNotHaveBean(EffectWriter.class)
				.doesNotHaveBean(PeriodicWorker.class));
	}

	@Test
	void invalidEffectPropertiesFailStartUpNamingTheProperty() {
		assertPropertyFails("ductor.effects.drainer.concurrency=0",
				"ductor.effects.drainer.concurrency must be between 1 and 1000");
		assertPropertyFails("ductor.effects.drainer.lease=10ms", "ductor.effects.drainer.lease must be at least 1s");
		assertPropertyFails("ductor.effects.max-attempts=0", "ductor.effects.max-attempts must be at least 1");
		assertPropertyFails("ductor.effects.backoff.max=1ms", "ductor.effects.backoff.max must not be shorter");
		assertPropertyFails("ductor.effects.overrides.mailer.max-attempts=-1",
				"ductor.effects.overrides.mailer.max-attempts must be at least 1");
		assertPropertyFails("ductor.effects.max-payload-size=0B", "ductor.effects.max-payload-size must be between");
		assertPropertyFails("ductor.effects.reconciler.interval=0s",
				"ductor.effects.reconciler.interval must be positive");
	}

	private void assertFails(Class<?> bean, String problem) {
		this.runner.withBean(bean).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains(bean.getName()).contains(problem);
		});
	}

	private void assertPropertyFails(String property, String message) {
		this.runner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains(message);
		});
	}

	private static String messages(AssertableApplicationContext context) {
		StringBuilder messages = new StringBuilder();
		for (Throwable ex = context.getStartupFailure(); ex != null; ex = ex.getCause()) {
			messages.append(ex.getMessage()).append('\n');
		}
		return messages.toString();
	}

	public static class Good {

		@DurableEffect(name = "good")
		public void send(String message) {
		}

	}

	public static class GoodOverride extends Good {

		static final List<String> RECEIVED = new CopyOnWriteArrayList<>();

		@Override
		public void send(String message) {
			RECEIVED.add(message);
		}

	}

	public static class SameName {

		@DurableEffect(name = "good")
		public void other(String message) {
		}

	}

	public static class ReturnsValue {

		@DurableEffect
		public String send(String message) {
			return message;
		}

	}

	public static class NotPublic {

		@DurableEffect
		void send(String message) {
		}

	}

	public static class FinalMethod {

		@DurableEffect
		public final void send(String message) {
		}

	}

	public static class StaticMethod {

		@DurableEffect
		public static void send(String message) {
		}

	}

	public static class BadKey {

		@DurableEffect(key = "#id +")
		public void send(String id) {
		}

	}

	public static class UnknownVariable {

		@DurableEffect(key = "'ship:' + #orderId")
		public void send(String id) {
		}

	}

	public static class UnknownOrderingVariable {

		@DurableEffect(orderingKey = "#p1")
		public void send(String id) {
		}

	}

	public static class Positional {

		@DurableEffect(key = "#p0 + ':' + #a1 + ':' + #id", orderingKey = "#root == null ? #this : #id")
		public void send(String id, int amount) {
		}

	}

	public static class Selection {

		@DurableEffect(key = "#ids.?[#this > 1].size() + ':' + #ids.^[#this > 1]")
		public void send(java.util.List<Integer> ids) {
		}

	}

	public static class Projection {

		@DurableEffect(key = "#ids.![#this + 1].toString()")
		public void send(java.util.List<Integer> ids) {
		}

	}

	public static class Assigned {

		@DurableEffect(key = "(#k = 'a:' + #id) + ':' + #k")
		public void send(String id) {
		}

	}

	public static class Varargs {

		@DurableEffect(key = "#p0 + ':' + #parts.length + ':' + #a1[0]")
		public void send(String id, String... parts) {
		}

	}

	public static class GenericMethod {

		@DurableEffect(key = "'g:' + #item")
		public <T> void send(T item) {
		}

	}

	public static class Overloaded {

		@DurableEffect(name = "over.one", key = "#p0")
		public void send(String id) {
		}

		@DurableEffect(name = "over.two", key = "#p0 + #p1")
		public void send(String id, String other) {
		}

	}

	public static class UnknownFunction {

		@DurableEffect(key = "#hash(#id)")
		public void send(String id) {
		}

	}

	public static class BadDelay {

		@DurableEffect(delay = "ten minutes")
		public void send(String id) {
		}

	}

}
