package io.ductor.jdbc.internal;

import javax.sql.DataSource;

import org.springframework.transaction.PlatformTransactionManager;

/**
 * The database Ductor keeps its tables in, and the one transaction manager its own
 * transactions run on.
 *
 * @param dataSource the {@code DataSource} marked {@code @DuctorDataSource}, or the
 * application's only or primary one
 * @param transactionManager the application's transaction manager of that
 * {@code DataSource}, or one of Ductor's own when the application has none
 */
public record DuctorDatabase(DataSource dataSource, PlatformTransactionManager transactionManager) {

}
