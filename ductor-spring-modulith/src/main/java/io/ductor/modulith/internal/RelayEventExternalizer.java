package io.ductor.modulith.internal;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.expression.EvaluationContext;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.RoutingTarget;
import org.springframework.modulith.events.support.BrokerRouting;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Externalizes the events that Modulith's {@link EventExternalizationConfiguration}
 * selects through Ductor's message relays, in the publishing transaction: the event is
 * mapped and routed as the configuration says, and each relay records one message (an
 * effect intent) beside the transaction's own writes. A rolled-back transaction leaves no
 * message; after the commit the relay sends it, in commit order per routing key.
 * <p>
 * Runs synchronously on the publishing thread, as any plain application listener. An
 * event published without a transaction is not externalized, as Modulith's after-commit
 * externalizers skip it.
 */
public class RelayEventExternalizer implements ApplicationListener<PayloadApplicationEvent<?>> {

	private static final Logger logger = LoggerFactory.getLogger(RelayEventExternalizer.class);

	private final EventExternalizationConfiguration configuration;

	private final List<EventRelay> relays;

	private final EvaluationContext context;

	private final Set<Class<?>> warned = ConcurrentHashMap.newKeySet();

	public RelayEventExternalizer(EventExternalizationConfiguration configuration, List<EventRelay> relays,
			EvaluationContext context) {
		this.configuration = configuration;
		this.relays = List.copyOf(relays);
		this.context = context;
	}

	@Override
	public void onApplicationEvent(PayloadApplicationEvent<?> event) {
		Object payload = event.getPayload();
		if (!this.configuration.supports(payload)) {
			return;
		}
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			if (this.warned.add(payload.getClass())) {
				logger.warn(
						"An event {} was published without a transaction and is not externalized (logged once "
								+ "per type); publish externalized events inside a transaction",
						payload.getClass().getName());
			}
			return;
		}
		RoutingTarget target = this.configuration.determineTarget(payload);
		Object mapped = this.configuration.map(payload);
		Map<String, String> headers = new LinkedHashMap<>();
		this.configuration.getHeadersFor(mapped).forEach((name, value) -> {
			if (value != null) {
				headers.put(name, value.toString());
			}
		});
		// as Modulith's broker externalizers do: the routing reads the mapped event
		BrokerRouting routing = BrokerRouting.of(target, this.context);
		String destination = routing.getTarget(mapped);
		@Nullable String key = routing.getKey(mapped);
		for (EventRelay relay : this.relays) {
			String idempotencyKey = relay.record(destination, key, mapped, headers);
			logger.debug("Recorded {} for {} with key {} as message {}", payload.getClass().getName(), destination, key,
					idempotencyKey);
		}
	}

}
