package io.ductor.effect.internal;

import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;

import io.ductor.effect.DurableEffect;

/**
 * Proxies every bean with a {@link DurableEffect} method. The feature behind it is looked
 * up on the first call, so declaring the advisor pulls no other bean into early creation.
 */
public class DurableEffectAdvisor extends AbstractPointcutAdvisor {

	private final Pointcut pointcut = new AnnotationMatchingPointcut(null, DurableEffect.class, true);

	private final MethodInterceptor advice;

	private volatile MethodInterceptor interceptor;

	public DurableEffectAdvisor(ObjectProvider<DurableEffectInterceptor> interceptors) {
		this.advice = (invocation) -> {
			MethodInterceptor interceptor = this.interceptor;
			if (interceptor == null) {
				// resolved once, on the first call: every later call skips the bean
				// factory
				interceptor = interceptors.getObject();
				this.interceptor = interceptor;
			}
			return interceptor.invoke(invocation);
		};
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.advice;
	}

}
