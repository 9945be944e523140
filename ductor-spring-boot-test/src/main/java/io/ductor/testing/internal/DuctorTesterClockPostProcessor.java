package io.ductor.testing.internal;

import javax.sql.DataSource;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * Wraps Ductor's {@code DataSource} (the application's only one, or its primary one, as
 * Ductor chooses it) in a {@link ClockedDataSource}, in the contexts of tests with
 * {@code @AutoConfigureDuctorTester} only, so that the tester's clock reaches every
 * connection of the application and nothing else.
 */
public final class DuctorTesterClockPostProcessor implements BeanPostProcessor, BeanFactoryAware {

	private ConfigurableListableBeanFactory beanFactory;

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
		String[] names = this.beanFactory.getBeanNamesForType(DataSource.class, true, false);
		if (names.length <= 1) {
			return true;
		}
		return this.beanFactory.containsBeanDefinition(beanName)
				&& this.beanFactory.getMergedBeanDefinition(beanName).isPrimary();
	}

}
