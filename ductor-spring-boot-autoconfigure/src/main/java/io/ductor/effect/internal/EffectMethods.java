package io.ductor.effect.internal;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.DurableEffectException;
import io.ductor.effect.EffectContext;
import io.ductor.effect.EffectReconciler;
import io.ductor.effect.ReconcileOutcome;

/**
 * Finds the {@link DurableEffect} and {@link EffectReconciler} methods of every bean as
 * it is created, and fails the bean's creation when one of them cannot be intercepted or
 * called, or its name is taken.
 */
public class EffectMethods implements BeanPostProcessor {

	private final Map<String, EffectMethod> byName = new ConcurrentHashMap<>();

	private final Map<Method, EffectMethod> byMethod = new ConcurrentHashMap<>();

	private final Map<String, ReconcilerMethod> reconcilers = new ConcurrentHashMap<>();

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		Class<?> userClass = ClassUtils.getUserClass(AopUtils.getTargetClass(bean));
		ReflectionUtils.doWithMethods(userClass, (method) -> register(beanName, userClass, method),
				(method) -> declaredBy(userClass, method)
						&& AnnotatedElementUtils.hasAnnotation(method, DurableEffect.class));
		ReflectionUtils.doWithMethods(userClass, (method) -> registerReconciler(beanName, method),
				(method) -> declaredBy(userClass, method)
						&& AnnotatedElementUtils.hasAnnotation(method, EffectReconciler.class));
		return bean;
	}

	/**
	 * Whether {@code method} is the one {@code userClass} runs: not a bridge, and not a
	 * superclass's method that the class overrides (whose override, the annotation
	 * inherited, is the effect).
	 */
	private static boolean declaredBy(Class<?> userClass, Method method) {
		return !method.isBridge() && !method.isSynthetic()
				&& ClassUtils.getMostSpecificMethod(method, userClass).equals(method);
	}

	private void registerReconciler(String beanName, Method method) {
		String problem = reconcilerProblemWith(method);
		if (problem != null) {
			throw new DurableEffectException(
					"@EffectReconciler method " + describe(method) + " of bean '" + beanName + "' " + problem);
		}
		EffectReconciler annotation = AnnotatedElementUtils.findMergedAnnotation(method, EffectReconciler.class);
		String name = annotation.value();
		if (name.isBlank()) {
			throw new DurableEffectException("@EffectReconciler method " + describe(method) + " of bean '" + beanName
					+ "' must name the effect it reconciles");
		}
		ReconcilerMethod reconciler = new ReconcilerMethod(name, beanName, method);
		ReconcilerMethod existing = this.reconcilers.putIfAbsent(name, reconciler);
		if (existing != null && !existing.method().equals(method)) {
			throw new DurableEffectException("Effect '" + name + "' has two @EffectReconciler methods: "
					+ describe(method) + " in bean '" + beanName + "' and " + describe(existing.method()) + " in bean '"
					+ existing.beanName() + "'; an effect has at most one reconciler");
		}
	}

	private static String reconcilerProblemWith(Method method) {
		int modifiers = method.getModifiers();
		if (!Modifier.isPublic(modifiers)) {
			return "must be public";
		}
		if (Modifier.isStatic(modifiers)) {
			return "must not be static";
		}
		if (method.getReturnType() != ReconcileOutcome.class) {
			return "must return ReconcileOutcome (APPLIED, NOT_APPLIED or UNKNOWN)";
		}
		Class<?>[] parameters = method.getParameterTypes();
		if (parameters.length == 0 || (parameters[0] != String.class && parameters[0] != EffectContext.class)) {
			return "must take the idempotency key (String) or the EffectContext first";
		}
		return null;
	}

	private void register(String beanName, Class<?> userClass, Method method) {
		String problem = problemWith(userClass, method);
		if (problem != null) {
			throw new DurableEffectException(
					"@DurableEffect method " + describe(method) + " of bean '" + beanName + "' " + problem);
		}
		DurableEffect annotation = AnnotatedElementUtils.findMergedAnnotation(method, DurableEffect.class);
		String name = annotation.name().isEmpty() ? userClass.getSimpleName() + "." + method.getName()
				: annotation.name();
		EffectMethod effect = new EffectMethod(name, beanName, userClass, method, annotation);
		EffectMethod existing = this.byName.putIfAbsent(name, effect);
		if (existing != null && !existing.method().equals(method)) {
			throw new DurableEffectException("@DurableEffect name '" + name + "' of " + describe(method) + " in bean '"
					+ beanName + "' is already used by " + describe(existing.method()) + " in bean '"
					+ existing.beanName() + "'; give one of them another name()");
		}
		this.byMethod.putIfAbsent(method, effect);
	}

	private static String problemWith(Class<?> userClass, Method method) {
		int modifiers = method.getModifiers();
		if (!Modifier.isPublic(modifiers)) {
			return "must be public: Spring's proxy cannot intercept it";
		}
		if (Modifier.isStatic(modifiers)) {
			return "must not be static: Spring's proxy cannot intercept it";
		}
		if (Modifier.isFinal(modifiers)) {
			return "must not be final: Spring's proxy cannot intercept it";
		}
		if (Modifier.isFinal(userClass.getModifiers())) {
			return "is declared in a final class: Spring's proxy cannot subclass it";
		}
		if (method.getReturnType() != void.class) {
			return "must return void: the call only records an intent, the method runs later";
		}
		return null;
	}

	static String describe(Method method) {
		return method.getDeclaringClass().getName() + "." + method.getName() + "(" + String.join(", ",
				java.util.Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).toList()) + ")";
	}

	/**
	 * @param name an effect name
	 * @return the method, or {@code null}
	 */
	EffectMethod find(String name) {
		return this.byName.get(name);
	}

	/**
	 * @param method the user-class method a call was intercepted on
	 * @return the effect, or {@code null}
	 */
	EffectMethod find(Method method) {
		return this.byMethod.get(method);
	}

	java.util.Set<String> namesSoFar() {
		return this.byName.keySet();
	}

	Iterable<EffectMethod> all() {
		return this.byName.values();
	}

	Iterable<ReconcilerMethod> reconcilers() {
		return this.reconcilers.values();
	}

	/**
	 * @param name an effect name
	 * @return its reconciler, or {@code null}
	 */
	ReconcilerMethod findReconciler(String name) {
		return this.reconcilers.get(name);
	}

	/** One {@link DurableEffect} method of one bean. */
	record EffectMethod(String name, String beanName, Class<?> userClass, Method method, DurableEffect annotation) {
	}

	/** One {@link EffectReconciler} method of one bean. */
	record ReconcilerMethod(String effectName, String beanName, Method method) {
	}

}
