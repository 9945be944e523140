package io.ductor.testing.internal;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

import io.ductor.autoconfigure.internal.DuctorDataSources;

/**
 * Wraps Ductor's {@code DataSource} (the application's only one, its primary one, or the
 * one marked {@code @DuctorDataSource}, as Ductor chooses it) in a
 * {@link ClockedDataSource}, in the contexts of tests with
 * {@code @AutoConfigureDuctorTester} only, so that the tester's clock reaches every
 * connection of the application and nothing else.
 */
public final class DuctorTesterClockPostProcessor implements BeanPostProcessor, BeanFactoryAware {

	private @Nullable ConfigurableListableBeanFactory beanFactory;

	private @Nullable String ductorsName;

	@Override
	public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
		this.beanFactory = (beanFactory instanceof ConfigurableListableBeanFactory listable) ? listable : null;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
		if (bean instanceof DataSource dataSource && !(bean instanceof ClockedDataSource) && isDuctors(beanName)) {
			return new ClockedDataSource(dataSource);
		}
		return bean;
	}

	private boolean isDuctors(String beanName) {
		if (this.beanFactory == null) {
			return true;
		}
		if (this.ductorsName == null) {
			this.ductorsName = DuctorDataSources.dataSourceName(this.beanFactory);
		}
		return this.ductorsName.equals(beanName);
	}

}
