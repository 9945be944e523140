package io.ductor.messaging.internal;

import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;

import io.ductor.messaging.IdempotentListener;

/**
 * Proxies every bean with an {@link IdempotentListener} method. The interceptor is looked
 * up on the first call, so declaring the advisor pulls no other bean into early creation.
 */
public class IdempotentListenerAdvisor extends AbstractPointcutAdvisor {

	private final Pointcut pointcut = new AnnotationMatchingPointcut(null, IdempotentListener.class, true);

	private final Advice advice;

	private volatile MethodInterceptor interceptor;

	public IdempotentListenerAdvisor(ObjectProvider<IdempotentListenerInterceptor> interceptor) {
		this.advice = (MethodInterceptor) (invocation) -> {
			MethodInterceptor resolved = this.interceptor;
			if (resolved == null) {
				resolved = interceptor.getObject();
				this.interceptor = resolved;
			}
			return resolved.invoke(invocation);
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
