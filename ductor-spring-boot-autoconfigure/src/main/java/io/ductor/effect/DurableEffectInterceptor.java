package io.ductor.effect;

import java.lang.reflect.Method;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.BridgeMethodResolver;

/**
 * Turns a call to a {@link DurableEffect} method into a recorded intent, except when the drainer
 * itself is running the method for a dispatch.
 */
class DurableEffectInterceptor implements MethodInterceptor {

	private static final ThreadLocal<EffectDefinition> dispatching = new ThreadLocal<>();

	private final EffectRegistry registry;

	private final EffectWriter writer;

	private final Compensations compensations;

	DurableEffectInterceptor(EffectRegistry registry, EffectWriter writer, Compensations compensations) {
		this.registry = registry;
		this.writer = writer;
		this.compensations = compensations;
	}

	@Override
	public Object invoke(MethodInvocation invocation) throws Throwable {
		Class<?> targetClass = (invocation.getThis() != null) ? AopUtils.getTargetClass(invocation.getThis()) : null;
		Method method = BridgeMethodResolver
			.findBridgedMethod(AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass));
		EffectDefinition effect = this.registry.find(method);
		if (dispatching.get() == effect) {
			// the drainer is running this effect: let the call through, once
			dispatching.remove();
			return invocation.proceed();
		}
		String key = this.writer.record(effect, invocation.getArguments(), null, null, null, null);
		this.compensations.registerDeclared(effect, invocation.getArguments(), key);
		return null;
	}

	/** Lets the next intercepted call of {@code effect} on this thread run the real method. */
	static void allowDispatch(EffectDefinition effect) {
		dispatching.set(effect);
	}

	static void endDispatch() {
		dispatching.remove();
	}

}
