package io.ductor.effect.internal;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import tools.jackson.databind.JavaType;
import tools.jackson.databind.type.TypeFactory;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.DurableEffectException;
import io.ductor.effect.internal.EffectMethods.EffectMethod;
import io.ductor.effect.internal.EffectMethods.ReconcilerMethod;

/**
 * Resolves effect names and intercepted methods to their {@link EffectDefinition}, and
 * checks at start-up that every effect can be intercepted and is well declared.
 */
public class EffectRegistry implements SmartInitializingSingleton {

	private static final SpelExpressionParser parser = new SpelExpressionParser();

	private static final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final EffectMethods methods;

	private final BeanFactory beanFactory;

	private final TypeFactory typeFactory;

	private final EffectRetrySettings retry;

	private final Map<String, EffectDefinition> definitions = new ConcurrentHashMap<>();

	public EffectRegistry(EffectMethods methods, BeanFactory beanFactory, TypeFactory typeFactory,
			EffectRetrySettings retry) {
		this.methods = methods;
		this.beanFactory = beanFactory;
		this.typeFactory = typeFactory;
		this.retry = retry;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (EffectMethod effect : this.methods.all()) {
			checkCompensation(definition(effect));
			if (this.beanFactory.isSingleton(effect.beanName())) {
				checkIntercepted(effect, this.beanFactory.getBean(effect.beanName()));
			}
		}
		for (ReconcilerMethod reconciler : this.methods.reconcilers()) {
			checkReconciler(reconciler);
		}
	}

	/**
	 * @return the names of the effects declared so far (every one, once all singletons
	 * are instantiated)
	 */
	public java.util.Set<String> names() {
		return java.util.Set.copyOf(this.methods.namesSoFar());
	}

	/**
	 * @param effectName an effect name
	 * @return its reconciler, or {@code null} when it has none
	 */
	ReconcilerMethod reconciler(String effectName) {
		return this.methods.findReconciler(effectName);
	}

	/**
	 * @return the bean (its proxy) that has the reconciler
	 */
	Object reconcilerBean(ReconcilerMethod reconciler) {
		return this.beanFactory.getBean(reconciler.beanName());
	}

	/**
	 * @return the names of the effects that have a reconciler
	 */
	java.util.Set<String> reconciledEffects() {
		java.util.Set<String> names = new java.util.TreeSet<>();
		this.methods.reconcilers().forEach((reconciler) -> names.add(reconciler.effectName()));
		return names;
	}

	/**
	 * @param reconciler a reconciler
	 * @return whether it takes the effect's arguments after the key or context
	 */
	static boolean takesArguments(ReconcilerMethod reconciler) {
		return reconciler.method().getParameterCount() > 1;
	}

	private void checkReconciler(ReconcilerMethod reconciler) {
		Method method = reconciler.method();
		EffectMethod effect = this.methods.find(reconciler.effectName());
		String described = "@EffectReconciler(\"" + reconciler.effectName() + "\") " + EffectMethods.describe(method)
				+ " of bean '" + reconciler.beanName() + "'";
		if (effect == null) {
			throw new DurableEffectException(described + " names an effect that does not exist: no @DurableEffect "
					+ "method has the name '" + reconciler.effectName() + "'");
		}
		Class<?>[] arguments = effect.method().getParameterTypes();
		Class<?>[] parameters = method.getParameterTypes();
		boolean matches = parameters.length == 1 || parameters.length == arguments.length + 1;
		for (int i = 1; matches && i < parameters.length; i++) {
			matches = parameters[i].isAssignableFrom(arguments[i - 1]);
		}
		if (!matches) {
			throw new DurableEffectException(described + " must take the key (String) or the EffectContext, "
					+ "optionally followed by exactly the parameters of " + EffectMethods.describe(effect.method()));
		}
	}

	/**
	 * @param name an effect name
	 * @return its definition, or {@code null} when no bean declares it
	 */
	public EffectDefinition find(String name) {
		EffectMethod effect = this.methods.find(name);
		return (effect != null) ? definition(effect) : null;
	}

	/**
	 * @param method the user-class method an intercepted call resolved to
	 * @return its definition
	 */
	public EffectDefinition find(Method method) {
		EffectMethod effect = this.methods.find(method);
		if (effect == null) {
			throw new DurableEffectException("No @DurableEffect registered for " + EffectMethods.describe(method)
					+ "; effects must be declared on Spring beans");
		}
		return definition(effect);
	}

	/**
	 * @return the bean (its proxy) that runs the effect
	 */
	Object bean(EffectDefinition definition) {
		return this.beanFactory.getBean(definition.beanName());
	}

	private EffectDefinition definition(EffectMethod effect) {
		return this.definitions.computeIfAbsent(effect.name(), (name) -> resolve(effect));
	}

	private EffectDefinition resolve(EffectMethod effect) {
		DurableEffect annotation = effect.annotation();
		Method method = effect.method();
		List<JavaType> types = new ArrayList<>();
		for (java.lang.reflect.Type type : method.getGenericParameterTypes()) {
			types.add(this.typeFactory.constructType(type));
		}
		if (annotation.maxAttempts() < 0) {
			throw invalid(effect, "maxAttempts must not be negative but was " + annotation.maxAttempts());
		}
		if (annotation.maxConcurrency() < 0) {
			throw invalid(effect, "maxConcurrency must not be negative but was " + annotation.maxConcurrency());
		}
		String[] names = parameterNames(method);
		return new EffectDefinition(effect.name(), effect.beanName(), method, List.copyOf(types),
				expression(effect, "key", annotation.key(), names),
				expression(effect, "orderingKey", annotation.orderingKey(), names), delay(effect, annotation.delay()),
				annotation.receiver(), this.retry.maxAttemptsFor(effect.name(), annotation.maxAttempts()),
				this.retry.backoffFor(effect.name()), List.of(annotation.noRetryFor()),
				annotation.compensation().isBlank() ? null : annotation.compensation(),
				this.retry.maxConcurrencyFor(effect.name(), annotation.maxConcurrency()));
	}

	/**
	 * The concurrency limits of this application's effects.
	 * @return the limit of every effect that has one, by effect name
	 */
	public java.util.Map<String, Integer> concurrencyLimits() {
		java.util.Map<String, Integer> limits = new java.util.TreeMap<>();
		for (EffectMethod effect : this.methods.all()) {
			EffectDefinition definition = definition(effect);
			if (definition.isLimited()) {
				limits.put(definition.name(), definition.maxConcurrency());
			}
		}
		return limits;
	}

	/**
	 * A declared compensation must exist and take the same parameters as the effect it
	 * undoes.
	 */
	private void checkCompensation(EffectDefinition effect) {
		if (effect.compensation() == null) {
			return;
		}
		EffectMethod compensation = this.methods.find(effect.compensation());
		String declared = "@DurableEffect '" + effect.name() + "' (" + EffectMethods.describe(effect.method())
				+ ") declares compensation '" + effect.compensation() + "'";
		if (compensation == null) {
			throw new DurableEffectException(declared + ", but no @DurableEffect has that name");
		}
		if (compensation.name().equals(effect.name())) {
			throw new DurableEffectException(declared + ": an effect cannot compensate itself");
		}
		if (!java.util.Arrays.equals(compensation.method().getGenericParameterTypes(),
				effect.method().getGenericParameterTypes())) {
			throw new DurableEffectException(declared + ", but " + EffectMethods.describe(compensation.method())
					+ " does not take the same parameters; it is called with the same arguments. Pass a compensation"
					+ " with other arguments at the call: EffectRequest.withCompensation(EffectRequest.of(...))");
		}
	}

	/**
	 * The names expressions know the parameters by, found once; an element is
	 * {@code null} when unknown.
	 */
	private static String[] parameterNames(Method method) {
		String[] names = parameterNames.getParameterNames(method);
		return (names != null) ? names : new String[method.getParameterCount()];
	}

	private static EffectExpression expression(EffectMethod effect, String attribute, String text, String[] names) {
		if (text.isBlank()) {
			return null;
		}
		EffectExpression expression;
		try {
			expression = new EffectExpression(parser.parseExpression(text), attribute, effect.name(), names);
		}
		catch (ParseException ex) {
			throw invalid(effect, attribute + " '" + text + "' is not a valid SpEL expression: " + ex.getMessage());
		}
		List<String> unknown = expression.unknownVariables();
		if (!unknown.isEmpty()) {
			String variables = String.join(", ", unknown.stream().map((name) -> "#" + name).toList());
			boolean namesKnown = java.util.Arrays.stream(names).allMatch(java.util.Objects::nonNull);
			throw invalid(effect, attribute + " '" + text + "' names " + variables + ", which "
					+ ((unknown.size() == 1) ? "is" : "are") + " not a parameter of the method"
					+ (namesKnown ? " (its parameters: " + String.join(", ", names) + ")"
							: ": its parameter names are not in the compiled class. Compile with -parameters "
									+ "(Spring Boot's parent POM and Gradle plugin do; with Maven alone, "
									+ "<parameters>true</parameters> in maven-compiler-plugin's configuration), "
									+ "or name the parameters by position: #p0, #p1, ...")
					+ "; each would be null in every call");
		}
		return expression;
	}

	private static Duration delay(EffectMethod effect, String text) {
		if (text.isBlank()) {
			return Duration.ZERO;
		}
		try {
			Duration delay = Duration.parse(text);
			if (delay.isNegative()) {
				throw invalid(effect, "delay must not be negative but was '" + text + "'");
			}
			return delay;
		}
		catch (DateTimeParseException ex) {
			throw invalid(effect, "delay '" + text + "' is not an ISO-8601 duration such as PT10M");
		}
	}

	private static void checkIntercepted(EffectMethod effect, Object bean) {
		if (!AopUtils.isAopProxy(bean)) {
			throw invalid(effect, "is on bean '" + effect.beanName()
					+ "', which is not proxied, so calls would run the method directly instead of recording an intent");
		}
		if (Proxy.isProxyClass(bean.getClass()) && !declaredOnInterface(effect.method(), bean.getClass())) {
			throw invalid(effect,
					"is not declared on an interface of bean '" + effect.beanName()
							+ "', which is a JDK interface proxy; declare it on the interface or use class proxies"
							+ " (spring.aop.proxy-target-class=true)");
		}
	}

	private static boolean declaredOnInterface(Method method, Class<?> proxyClass) {
		for (Class<?> type : proxyClass.getInterfaces()) {
			try {
				type.getMethod(method.getName(), method.getParameterTypes());
				return true;
			}
			catch (NoSuchMethodException ex) {
				// try the next interface
			}
		}
		return false;
	}

	private static DurableEffectException invalid(EffectMethod effect, String problem) {
		return new DurableEffectException(
				"@DurableEffect '" + effect.name() + "' (" + EffectMethods.describe(effect.method()) + ") " + problem);
	}

}
