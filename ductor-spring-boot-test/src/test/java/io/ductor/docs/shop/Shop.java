package io.ductor.docs.shop;

import java.time.Duration;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.annotation.Transactional;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.effect.Receiver;
import io.ductor.run.TickService;

/**
 * The application the tests of {@code README.md} and {@code docs/testing.md} test, as the
 * pages describe it: placing an order starts its run, whose first tick records the charge
 * ({@code payment.charge}, key {@code charge:<id>}); the charge completes the run with
 * the tick {@code charged}, which records the receipt ({@code receipt.send}, a receiver
 * that cannot deduplicate); a reminder is a named alarm.
 */
@Configuration(proxyBeanMethods = false)
@Import({ Shop.Orders.class, Shop.Payments.class, Shop.Receipts.class, Shop.Reminders.class })
public class Shop {

	/** Places orders and reminds of them. */
	public static class Orders {

		private final TickService ticks;

		private final Payments payments;

		private final EffectOutbox outbox;

		Orders(TickService ticks, Payments payments, EffectOutbox outbox) {
			this.ticks = ticks;
			this.payments = payments;
			this.outbox = outbox;
		}

		public void place(String orderId, long amountCents) {
			this.ticks.start("order", orderId, "placed");
			this.ticks.tick(orderId, "placed", String.class, (state, tick) -> {
				this.payments.charge(orderId, amountCents);
				return "charging";
			});
		}

		@Transactional
		public void remindIn(String orderId, Duration delay) {
			this.outbox.scheduleAlarm("reminder:" + orderId, delay, EffectRequest.of("reminder.send", orderId));
		}

	}

	/** Charges at a gateway that deduplicates by key, and completes the order. */
	public static class Payments {

		private final TickService ticks;

		private final Receipts receipts;

		Payments(TickService ticks, Receipts receipts) {
			this.ticks = ticks;
			this.receipts = receipts;
		}

		@DurableEffect(name = "payment.charge", key = "'charge:' + #orderId")
		public void charge(String orderId, long amountCents) {
			this.ticks.tick(orderId, "charged", String.class, (state, tick) -> {
				this.receipts.send(orderId);
				tick.complete();
				return "paid";
			});
		}

	}

	/** Mails receipts through a mail server that cannot deduplicate. */
	public static class Receipts {

		@DurableEffect(name = "receipt.send", key = "'receipt:' + #orderId", receiver = Receiver.NOT_IDEMPOTENT)
		public void send(String orderId) {
		}

	}

	/** Sends reminders. */
	public static class Reminders {

		@DurableEffect(name = "reminder.send")
		public void send(String orderId) {
		}

	}

}
