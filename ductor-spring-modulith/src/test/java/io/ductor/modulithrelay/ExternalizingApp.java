package io.ductor.modulithrelay;

import java.util.Map;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.RoutingTarget;

/**
 * An application whose {@code @Externalized} events, and the events its externalization
 * configuration selects, leave through Ductor's Kafka relay.
 */
@SpringBootApplication
public class ExternalizingApp {

	/** An externalized event, keyed by its order. */
	@org.springframework.modulith.events.Externalized("orders.completed::#{orderId()}")
	public record OrderCompleted(String orderId, int seq) {
	}

	/**
	 * An event without the annotation, selected, mapped and routed by the configuration.
	 */
	public record InvoiceIssued(String invoiceId, String customerId, long cents) {
	}

	/** What leaves for an {@link InvoiceIssued}. */
	public record InvoiceMessage(String invoice, long amount) {
	}

	/**
	 * {@code @Externalized} events (but not the orders whose id starts with
	 * {@code internal-}), and invoices: mapped, routed by customer, with a header.
	 */
	@Bean
	EventExternalizationConfiguration eventExternalizationConfiguration() {
		return EventExternalizationConfiguration.externalizing()
			.select(EventExternalizationConfiguration.annotatedAsExternalized()
				.and((event) -> !(event instanceof OrderCompleted order && order.orderId().startsWith("internal-")))
				.or(InvoiceIssued.class::isInstance))
			.route(InvoiceIssued.class, (invoice) -> RoutingTarget.forTarget("invoices").andKey(invoice.customerId()))
			.mapping(InvoiceIssued.class, (invoice) -> new InvoiceMessage(invoice.invoiceId(), invoice.cents()))
			.headers(InvoiceMessage.class, (message) -> Map.of("invoice-schema", "v1"))
			.build();
	}

}
