package io.ductor.autoconfigure.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.transaction.PlatformTransactionManager;

import io.ductor.jdbc.DuctorDataSource;
import io.ductor.jdbc.internal.DatabaseTransactions;
import io.ductor.jdbc.internal.DuctorDatabase;

/**
 * Chooses Ductor's database among the application's {@code DataSource} beans.
 */
public final class DuctorDataSources {

	private DuctorDataSources() {
	}

	/**
	 * Choose Ductor's database among the application's beans.
	 * @param beans the application's bean factory
	 * @return the chosen {@code DataSource} and its transaction manager
	 * @throws DuctorConfigurationException when the choice is ambiguous
	 */
	public static DuctorDatabase choose(ConfigurableListableBeanFactory beans) {
		DataSource dataSource = beans.getBean(dataSourceName(beans), DataSource.class);
		List<PlatformTransactionManager> managers = new ArrayList<>();
		beans.getBeanProvider(PlatformTransactionManager.class).ifUnique(managers::add);
		beans.getBeanProvider(PlatformTransactionManager.class).orderedStream().forEach(managers::add);
		return new DuctorDatabase(dataSource, DatabaseTransactions.managerOf(managers, dataSource));
	}

	/**
	 * The bean name of Ductor's {@code DataSource}: the one marked
	 * {@link DuctorDataSource}, else the only one that is a default candidate for
	 * injection, else the primary one.
	 * @param beans the application's bean factory
	 * @return the bean name
	 * @throws DuctorConfigurationException when several or no {@code DataSource} bean fit
	 */
	public static String dataSourceName(ConfigurableListableBeanFactory beans) {
		String[] all = beans.getBeanNamesForType(DataSource.class, true, false);
		List<String> marked = Arrays.stream(beans.getBeanNamesForAnnotation(DuctorDataSource.class))
			.filter((name) -> beans.isTypeMatch(name, DataSource.class))
			.toList();
		if (marked.size() == 1) {
			return marked.get(0);
		}
		if (marked.size() > 1) {
			throw new DuctorConfigurationException(
					"Several DataSource beans are marked @DuctorDataSource: " + String.join(", ", marked),
					"Mark the one DataSource that holds Ductor's tables with @DuctorDataSource.");
		}
		List<String> candidates = Arrays.stream(all).filter((name) -> isDefaultCandidate(beans, name)).toList();
		if (candidates.size() == 1) {
			return candidates.get(0);
		}
		List<String> primary = candidates.stream()
			.filter((name) -> beans.containsBeanDefinition(name) && beans.getMergedBeanDefinition(name).isPrimary())
			.toList();
		if (primary.size() == 1) {
			return primary.get(0);
		}
		throw new DuctorConfigurationException(
				"Ductor found " + all.length + " DataSource beans and cannot tell which one holds its tables: "
						+ String.join(", ", all),
				"Mark one DataSource bean with @io.ductor.jdbc.DuctorDataSource (or @Primary).");
	}

	private static boolean isDefaultCandidate(ConfigurableListableBeanFactory beans, String name) {
		if (!beans.containsBeanDefinition(name)) {
			return true;
		}
		BeanDefinition definition = beans.getMergedBeanDefinition(name);
		return definition.isAutowireCandidate() && (!(definition instanceof AbstractBeanDefinition abstractDefinition)
				|| abstractDefinition.isDefaultCandidate());
	}

}
