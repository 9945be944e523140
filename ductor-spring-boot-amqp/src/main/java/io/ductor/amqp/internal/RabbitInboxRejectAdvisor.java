package io.ductor.amqp.internal;

import java.lang.reflect.Method;

import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;

import io.ductor.messaging.IdempotentListener;
import io.ductor.messaging.MissingIdempotencyKeyException;

/**
 * Around the inbox of a {@code @RabbitListener}: a message rejected for a missing key
 * ({@link MissingIdempotencyKeyException}) is rejected without requeue, so the broker
 * dead-letters it (when the queue has a dead-letter exchange) or drops it, instead of
 * delivering it again forever.
 */
public class RabbitInboxRejectAdvisor extends AbstractPointcutAdvisor {

	private final Pointcut pointcut = new AnnotationMatchingPointcut(null, IdempotentListener.class, true);

	private final Advice advice = (MethodInterceptor) (invocation) -> {
		try {
			return invocation.proceed();
		}
		catch (MissingIdempotencyKeyException ex) {
			Object target = invocation.getThis();
			Method method = (target != null) ? AopUtils.getMostSpecificMethod(invocation.getMethod(), target.getClass())
					: invocation.getMethod();
			if (AnnotatedElementUtils.hasAnnotation(method, RabbitListener.class)
					|| AnnotatedElementUtils.hasAnnotation(method.getDeclaringClass(), RabbitListener.class)) {
				throw new AmqpRejectAndDontRequeueException(ex.getMessage(), ex);
			}
			throw ex;
		}
	};

	public RabbitInboxRejectAdvisor() {
		// outside the inbox's own advice
		setOrder(Ordered.HIGHEST_PRECEDENCE);
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
