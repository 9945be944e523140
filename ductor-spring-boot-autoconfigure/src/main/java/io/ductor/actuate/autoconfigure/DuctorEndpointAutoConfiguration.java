package io.ductor.actuate.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.actuate.OperatorAccess;
import io.ductor.actuate.internal.DuctorEndpoint;
import io.ductor.actuate.internal.DuctorEndpointWebExtension;
import io.ductor.actuate.internal.DuctorInspector;
import io.ductor.actuate.internal.PayloadMask;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.RecurringAlarms;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.metrics.internal.DuctorBacklog;
import io.ductor.worker.internal.DuctorWorkers;

/**
 * The {@code ductor} actuator endpoint, its web extension that answers refused actions
 * with a 4xx and the reason, and the {@link DuctorInspector} behind its filters and
 * lookups. Like every actuator endpoint it is reachable over HTTP only when the
 * application exposes it ({@code management.endpoints.web.exposure.include}).
 */
@AutoConfiguration(after = { DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
		DuctorIdempotencyAutoConfiguration.class })
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean({ EffectOperations.class, RecurringAlarms.class, DuctorBacklog.class })
@ConditionalOnAvailableEndpoint(DuctorEndpoint.class)
public final class DuctorEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	DuctorEndpoint ductorEndpoint(EffectOperations operations, RecurringAlarms alarms, DuctorBacklog backlog,
			DuctorWorkers workers, DuctorInspector inspector, ObjectProvider<PayloadMask> mask,
			DuctorDatabase database) {
		return new DuctorEndpoint(operations, alarms, backlog, workers.statuses(), inspector,
				mask.getIfAvailable(() -> PayloadMask.NONE), new TransactionTemplate(database.transactionManager()));
	}

	@Bean
	@ConditionalOnMissingBean
	DuctorInspector ductorInspector(DuctorDatabase database) {
		return new DuctorInspector(database.dataSource());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(DuctorEndpoint.class)
	@ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
	DuctorEndpointWebExtension ductorEndpointWebExtension(DuctorEndpoint endpoint,
			ObjectProvider<OperatorAccess> access) {
		return new DuctorEndpointWebExtension(endpoint, access.getIfAvailable());
	}

}
