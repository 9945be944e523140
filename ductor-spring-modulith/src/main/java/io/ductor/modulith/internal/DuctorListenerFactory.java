package io.ductor.modulith.internal;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.context.ApplicationListener;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.modulith.events.core.ConditionalEventListener;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;
import org.springframework.transaction.event.TransactionalEventListenerFactory;

/**
 * Creates the adapters of transactional listener methods that run after the commit (
 * {@code @ApplicationModuleListener}, {@code @TransactionalEventListener} in its default
 * phase): the listeners whose publications Modulith stores, and Ductor records and runs.
 * Ordered before Spring's factory and Modulith's externalization factory. Remembers every
 * adapter by listener id, for the drainer to find.
 */
public class DuctorListenerFactory extends TransactionalEventListenerFactory implements BeanFactoryAware {

	/** Before Modulith's externalization factory (25) and Spring's (50). */
	public static final int ORDER = 20;

	private final Map<String, DuctorListenerAdapter> adapters = new ConcurrentHashMap<>();

	/** The adapters whose plain listener id another bean also has, by that id. */
	private final Map<String, List<DuctorListenerAdapter>> shared = new ConcurrentHashMap<>();

	private @Nullable BeanFactory beanFactory;

	public DuctorListenerFactory() {
		setOrder(ORDER);
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public boolean supportsMethod(Method method) {
		TransactionalEventListener annotation = AnnotatedElementUtils.findMergedAnnotation(method,
				TransactionalEventListener.class);
		return annotation != null && annotation.phase() == TransactionPhase.AFTER_COMMIT;
	}

	@Override
	public ApplicationListener<?> createApplicationListener(String beanName, Class<?> type, Method method) {
		// Spring's checks of the method (its @Transactional must start a new transaction)
		super.createApplicationListener(beanName, type, method);
		BeanFactory factory = this.beanFactory;
		if (factory == null) {
			throw new IllegalStateException("DuctorListenerFactory was not given its bean factory");
		}
		DuctorListenerAdapter adapter = ConditionalEventListener.class.isAssignableFrom(type)
				? new DuctorListenerAdapter.Conditional(beanName, type, method, factory)
				: new DuctorListenerAdapter(beanName, type, method, factory);
		register(adapter);
		return adapter;
	}

	/**
	 * Remembers an adapter by its listener id. Two beans of one listener class have the
	 * same id; were one of them kept under it, the drainer would call that bean for the
	 * publications of both, and the other never: each then gets its bean's name appended.
	 */
	private synchronized void register(DuctorListenerAdapter adapter) {
		String id = adapter.getListenerId();
		List<DuctorListenerAdapter> sharing = this.shared.get(id);
		if (sharing == null) {
			DuctorListenerAdapter previous = this.adapters.putIfAbsent(id, adapter);
			if (previous == null || previous.beanName().equals(adapter.beanName())) {
				this.adapters.put(id, adapter);
				return;
			}
			this.adapters.remove(id);
			previous.qualifyWithBeanName();
			this.adapters.put(previous.getListenerId(), previous);
			sharing = new ArrayList<>(List.of(previous));
			this.shared.put(id, sharing);
		}
		sharing.add(adapter);
		adapter.qualifyWithBeanName();
		this.adapters.put(adapter.getListenerId(), adapter);
	}

	/**
	 * @param listenerId a listener id
	 * @return whether Ductor runs that listener
	 */
	boolean runs(String listenerId) {
		return this.adapters.containsKey(listenerId);
	}

	/**
	 * @param listenerId a listener id
	 * @return its adapter, or {@code null} when no listener of this application has it
	 */
	@Nullable DuctorListenerAdapter find(String listenerId) {
		return this.adapters.get(listenerId);
	}

}
