package io.ductor.modulith.internal;

import java.lang.reflect.Method;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.interceptor.AsyncExecutionInterceptor;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.modulith.events.core.ConditionalEventListener;
import org.springframework.modulith.events.support.CompletionRegisteringAdvisor;
import org.springframework.modulith.events.support.DelegatingEventExternalizer;
import org.springframework.transaction.event.TransactionalApplicationListenerMethodAdapter;

/**
 * The adapter of one transactional listener method whose publications Ductor records and
 * runs.
 * <p>
 * When the registry recorded its publication of the event being multicast, it stands
 * down: no synchronization of the publishing transaction runs it after the commit;
 * Ductor's drainer does. Otherwise (no transaction, so nothing recorded) it behaves as
 * Spring's adapter.
 * <p>
 * When the drainer runs a publication ({@link #deliver}), the method is called on the
 * drainer's thread, in the transaction its own annotations ask for, but without the
 * {@code @Async} hop of {@code @ApplicationModuleListener} (the attempt's outcome must be
 * the method's) and without Modulith's completion advice (Ductor records the outcome). A
 * returned {@link CompletionStage} is awaited, so that its failure fails the attempt.
 */
class DuctorListenerAdapter extends TransactionalApplicationListenerMethodAdapter {

	private static final ThreadLocal<Boolean> DELIVERING = new ThreadLocal<>();

	private final String beanName;

	private final BeanFactory beanFactory;

	private volatile @Nullable Object directBean;

	private volatile @Nullable String qualifiedId;

	DuctorListenerAdapter(String beanName, Class<?> targetClass, Method method, BeanFactory beanFactory) {
		super(beanName, targetClass, method);
		this.beanName = beanName;
		this.beanFactory = beanFactory;
	}

	/**
	 * The listener id, with the bean's name appended when another bean has the same
	 * listener (two beans of one class): publications are keyed and run by listener id.
	 */
	@Override
	public String getListenerId() {
		String qualified = this.qualifiedId;
		return (qualified != null) ? qualified : super.getListenerId();
	}

	/** Appends the bean's name to the listener id. */
	void qualifyWithBeanName() {
		this.qualifiedId = super.getListenerId() + "@" + this.beanName;
	}

	String beanName() {
		return this.beanName;
	}

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		if (RecordedPublications.consume(payloadOf(event), getListenerId())) {
			return;
		}
		super.onApplicationEvent(event);
	}

	/**
	 * Runs the listener for one publication on the calling thread; whatever it throws is
	 * thrown.
	 * @param event the event as it was published
	 */
	void deliver(ApplicationEvent event) {
		DELIVERING.set(Boolean.TRUE);
		try {
			processEvent(event);
		}
		finally {
			DELIVERING.remove();
		}
	}

	@Override
	protected Object getTargetBean() {
		Object bean = super.getTargetBean();
		if (DELIVERING.get() == null) {
			return bean;
		}
		Object direct = this.directBean;
		if (direct != null) {
			return direct;
		}
		direct = withoutAsync(bean);
		if (isSingleton()) {
			this.directBean = direct;
		}
		return direct;
	}

	@Override
	protected void handleResult(Object result) {
		if (DELIVERING.get() != null && result instanceof CompletionStage<?> stage) {
			Object value;
			try {
				value = stage.toCompletableFuture().join();
			}
			catch (CompletionException ex) {
				Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
				if (cause instanceof RuntimeException runtime) {
					throw runtime;
				}
				if (cause instanceof Error error) {
					throw error;
				}
				throw ex;
			}
			if (value != null) {
				super.handleResult(value);
			}
			return;
		}
		super.handleResult(result);
	}

	private boolean isSingleton() {
		try {
			return this.beanFactory.isSingleton(this.beanName);
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/**
	 * The bean's proxy without its {@code @Async} advice and Modulith's completion
	 * advice, or the bean itself when it has neither.
	 */
	static Object withoutAsync(Object bean) {
		if (!(bean instanceof Advised advised)) {
			return bean;
		}
		boolean found = false;
		for (Advisor advisor : advised.getAdvisors()) {
			found |= skipped(advisor);
		}
		if (!found) {
			return bean;
		}
		ProxyFactory factory = new ProxyFactory();
		factory.setProxyTargetClass(advised.isProxyTargetClass());
		factory.setExposeProxy(advised.isExposeProxy());
		factory.setTargetSource(advised.getTargetSource());
		factory.setInterfaces(advised.getProxiedInterfaces());
		for (Advisor advisor : advised.getAdvisors()) {
			if (!skipped(advisor)) {
				factory.addAdvisor(advisor);
			}
		}
		return factory.getProxy(bean.getClass().getClassLoader());
	}

	private static boolean skipped(Advisor advisor) {
		return advisor.getAdvice() instanceof AsyncExecutionInterceptor
				|| advisor instanceof CompletionRegisteringAdvisor;
	}

	static Object payloadOf(ApplicationEvent event) {
		return (event instanceof PayloadApplicationEvent<?> payload) ? payload.getPayload() : event;
	}

	/**
	 * The adapter of a listener on a {@link ConditionalEventListener} bean (Modulith's
	 * externalizers): the multicaster asks the bean whether it takes an event, so no
	 * publication is recorded for events it would ignore.
	 */
	static final class Conditional extends DuctorListenerAdapter implements ConditionalEventListener {

		Conditional(String beanName, Class<?> targetClass, Method method, BeanFactory beanFactory) {
			super(beanName, targetClass, method, beanFactory);
		}

		private volatile @Nullable Boolean relayed;

		@Override
		public boolean supports(Object event) {
			Object bean = beanForCondition();
			if (bean instanceof DelegatingEventExternalizer && relayed()) {
				// Ductor's relays externalize in the publishing transaction: Modulith's
				// broker externalizers (spring-modulith-events-kafka, -amqp) stand down
				return false;
			}
			return ((ConditionalEventListener) bean).supports(event);
		}

		private boolean relayed() {
			Boolean relayed = this.relayed;
			if (relayed == null) {
				relayed = beanFactory().getBeanProvider(RelayEventExternalizer.class).getIfAvailable() != null;
				this.relayed = relayed;
			}
			return relayed;
		}

	}

	BeanFactory beanFactory() {
		return this.beanFactory;
	}

	/** The bean itself, whatever thread asks. */
	Object beanForCondition() {
		return super.getTargetBean();
	}

}
