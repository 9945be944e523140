package io.ductor.messaging.internal;

import java.lang.reflect.Method;
import java.util.Map;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

import io.ductor.messaging.IdempotentListener;

/**
 * Checks every {@link IdempotentListener} declaration at start-up (the pool, the key
 * expression, the policy), so that a bad one fails start-up rather than its first
 * message.
 */
public class IdempotentListenerDeclarations implements SmartInitializingSingleton {

	private final ConfigurableListableBeanFactory beanFactory;

	public IdempotentListenerDeclarations(ConfigurableListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (String name : this.beanFactory.getBeanDefinitionNames()) {
			Class<?> type = this.beanFactory.getType(name, false);
			if (type == null) {
				continue;
			}
			Class<?> userClass = ClassUtils.getUserClass(type);
			Map<Method, IdempotentListener> methods = MethodIntrospector.selectMethods(userClass,
					(MethodIntrospector.MetadataLookup<IdempotentListener>) (method) -> AnnotatedElementUtils
						.findMergedAnnotation(method, IdempotentListener.class));
			for (Method method : methods.keySet()) {
				IdempotentListenerInterceptor.listener(AopUtils.getMostSpecificMethod(method, userClass));
			}
		}
	}

}
