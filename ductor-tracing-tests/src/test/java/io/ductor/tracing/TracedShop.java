package io.ductor.tracing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import io.ductor.effect.DurableEffect;

/**
 * A shop with the tracing dependencies {@code docs/tracing.md} names and nothing else of
 * tracing: a request records an effect, and the effect's receiver notes the trace it runs
 * in.
 */
@SpringBootApplication
public class TracedShop {

	/** Takes orders; answers with the trace id the request runs in. */
	@RestController
	static class Orders {

		private final Confirmations confirmations;

		private final Tracer tracer;

		Orders(Confirmations confirmations, Tracer tracer) {
			this.confirmations = confirmations;
			this.tracer = tracer;
		}

		@PostMapping("/orders/{id}")
		@Transactional
		public String place(@PathVariable String id) {
			this.confirmations.confirm(id); // recorded with this request's trace context
			Span span = this.tracer.currentSpan();
			return (span != null) ? span.context().traceId() : "no span";
		}

	}

	/** The receiver: notes the trace id each attempt runs in. */
	@Component
	public static class Confirmations {

		private final List<String> traceIds = new CopyOnWriteArrayList<>();

		private final Tracer tracer;

		Confirmations(Tracer tracer) {
			this.tracer = tracer;
		}

		@DurableEffect(name = "order.confirm")
		public void confirm(String orderId) {
			Span span = this.tracer.currentSpan();
			this.traceIds.add((span != null) ? span.context().traceId() : "no span");
		}

		/**
		 * @return the trace id of each attempt so far
		 */
		public List<String> traceIds() {
			return List.copyOf(this.traceIds);
		}

	}

}
