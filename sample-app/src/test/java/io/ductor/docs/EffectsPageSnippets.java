package io.ductor.docs;

import java.time.ZoneId;

import org.springframework.stereotype.Component;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectRequest;
import io.ductor.effect.EffectResolution;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.MissedOccurrences;
import io.ductor.effect.RecurringAlarms;

/**
 * The Java blocks of {@code docs/effects.md}, compiled against Ductor's API. The page's
 * classes are inner classes here, so that the collaborators the page leaves out are
 * fields of this one.
 */
class EffectsPageSnippets {

	PaymentClient client;

	Orders orders;

	PaymentGateway gateway;

	EffectOperations operations;

	RecurringAlarms alarms;

	// tag::effects-durable-effect[]
	@Component
	public class PaymentGateway {

		@DurableEffect(key = "'charge:' + #orderId", maxAttempts = 8)
		public void charge(String orderId, Money amount) {
			EffectContext attempt = EffectContext.current();
			client.charge(amount, attempt.idempotencyKey());
		}

	}

	@Service
	class Checkout {

		@Transactional
		public void pay(Order order) {
			orders.markPaying(order);
			gateway.charge(order.id(), order.total());
		}

	}
	// end::effects-durable-effect[]

	void decide(long intentId, String key, long afterId) {
		// tag::effects-decisions[]
		this.operations.resolve(intentId, EffectResolution.RETRY);
		this.operations.resolve(intentId, EffectResolution.MARK_DONE);
		this.operations.resolve(intentId, EffectResolution.MARK_FAILED);
		this.operations.retry(intentId);
		this.operations.cancel(intentId);
		this.operations.find(intentId);
		this.operations.findByKey(key);
		this.operations.list(EffectStatus.FAILED, afterId, 100);
		// end::effects-decisions[]
	}

	void recurring(String tenant, String name) {
		// tag::effects-recurring-alarms[]
		this.alarms.scheduleRecurring("report:" + tenant,
				AlarmSchedule.cron("0 0 9 * * MON-FRI", ZoneId.of("Europe/Paris")).withMissed(MissedOccurrences.SKIP),
				EffectRequest.of("Reports.send", tenant));
		this.alarms.pauseRecurring(name);
		this.alarms.resumeRecurring(name);
		this.alarms.cancelRecurring(name);
		this.alarms.recurringAlarms();
		// end::effects-recurring-alarms[]
	}

	/** "Concurrency limits". */
	static class Legacy {

		// tag::effects-concurrency-limits[]
		@DurableEffect(name = "Legacy.submit", maxConcurrency = 5)
		public void submit(String orderId) {
		}
		// end::effects-concurrency-limits[]

	}

	interface PaymentClient {

		void charge(Money amount, String idempotencyKey);

	}

	interface Orders {

		void markPaying(Order order);

	}

	record Money(long cents, String currency) {
	}

	record Order(String id, Money total) {
	}

}
