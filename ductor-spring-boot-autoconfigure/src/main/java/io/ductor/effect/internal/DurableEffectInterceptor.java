package io.ductor.effect.internal;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.BridgeMethodResolver;

/**
 * Turns a call to a {@link DurableEffect} method into a recorded intent, except when the
 * drainer itself is running the method for a dispatch.
 */
public class DurableEffectInterceptor implements MethodInterceptor {

	private static final ThreadLocal<EffectDefinition> dispatching = new ThreadLocal<>();

	private final EffectRegistry registry;

	private final EffectWriter writer;

	private final Compensations compensations;

	/**
	 * Per target class, the effect each intercepted method resolves to: resolved on its
	 * first call.
	 */
	private final ClassValue<Map<Method, EffectDefinition>> resolved = new ClassValue<>() {

		@Override
		protected Map<Method, EffectDefinition> computeValue(Class<?> type) {
			return new ConcurrentHashMap<>();
		}

	};

	public DurableEffectInterceptor(EffectRegistry registry, EffectWriter writer, Compensations compensations) {
		this.registry = registry;
		this.writer = writer;
		this.compensations = compensations;
	}

	@Override
	public Object invoke(MethodInvocation invocation) throws Throwable {
		EffectDefinition effect = effect(invocation);
		if (dispatching.get() == effect) {
			// the drainer is running this effect: let the call through, once
			dispatching.remove();
			return invocation.proceed();
		}
		String key = this.writer.record(effect, invocation.getArguments(), null, null, null, null);
		this.compensations.registerDeclared(effect, invocation.getArguments(), key);
		return null;
	}

	private EffectDefinition effect(MethodInvocation invocation) {
		Class<?> targetClass = (invocation.getThis() != null) ? AopUtils.getTargetClass(invocation.getThis()) : null;
		Map<Method, EffectDefinition> effects = this.resolved.get((targetClass != null) ? targetClass : Void.class);
		Method invoked = invocation.getMethod();
		EffectDefinition effect = effects.get(invoked);
		if (effect == null) {
			Method method = BridgeMethodResolver
				.findBridgedMethod(AopUtils.getMostSpecificMethod(invoked, targetClass));
			effect = this.registry.find(method);
			effects.put(invoked, effect);
		}
		return effect;
	}

	/**
	 * Lets the next intercepted call of {@code effect} on this thread run the real
	 * method.
	 */
	static void allowDispatch(EffectDefinition effect) {
		dispatching.set(effect);
	}

	static void endDispatch() {
		dispatching.remove();
	}

}
