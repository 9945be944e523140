package io.ductor.testing.bakery;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectReconciler;
import io.ductor.effect.EffectRequest;
import io.ductor.effect.Receiver;
import io.ductor.effect.ReconcileOutcome;
import io.ductor.run.TickService;

/**
 * A tiny bakery that uses Ductor as a user would: an order is a run whose first tick
 * charges the customer; the charge, when it runs, completes the run. Its receivers count
 * their calls.
 */
@SpringBootApplication
public class Bakery {

	/** Places orders. */
	@Component
	public static class Orders {

		private final TickService ticks;

		private final Payments payments;

		private final EffectOutbox outbox;

		public Orders(TickService ticks, Payments payments, EffectOutbox outbox) {
			this.ticks = ticks;
			this.payments = payments;
			this.outbox = outbox;
		}

		public void place(String orderId, long cents) {
			this.ticks.start("order", orderId, "placed");
			this.ticks.tick(orderId, "placed", String.class, (state, tick) -> {
				this.payments.charge(orderId, cents);
				return "charging";
			});
		}

		public void remindIn(String orderId, Duration delay) {
			this.outbox.scheduleAlarm("reminder:" + orderId, delay, EffectRequest.of("reminder.send", orderId));
		}

	}

	/**
	 * A payment gateway that deduplicates by key; the charge completes the order's run.
	 */
	@Component
	public static class Payments {

		private final List<String> charged = new CopyOnWriteArrayList<>();

		public List<String> charged() {
			return this.charged;
		}

		private final TickService ticks;

		public Payments(TickService ticks) {
			this.ticks = ticks;
		}

		@DurableEffect(name = "payment.charge", key = "'charge:' + #orderId", maxAttempts = 3)
		public void charge(String orderId, long cents) {
			this.charged.add(orderId);
			this.ticks.tick(orderId, "charged", String.class, (state, tick) -> {
				tick.complete();
				return "paid";
			});
		}

	}

	/**
	 * A mailer that cannot deduplicate, and a shipper that can be asked whether a parcel
	 * left.
	 */
	@Component
	public static class Outside {

		private final List<String> mailed = new CopyOnWriteArrayList<>();

		public List<String> mailed() {
			return this.mailed;
		}

		private final List<String> shipped = new CopyOnWriteArrayList<>();

		public List<String> shipped() {
			return this.shipped;
		}

		private final List<String> reminded = new CopyOnWriteArrayList<>();

		public List<String> reminded() {
			return this.reminded;
		}

		private final List<String> audited = new CopyOnWriteArrayList<>();

		public List<String> audited() {
			return this.audited;
		}

		private final TransactionTemplate transactions;

		private final Audit audit;

		public Outside(TransactionTemplate transactions, Audit audit) {
			this.transactions = transactions;
			this.audit = audit;
		}

		@DurableEffect(name = "mail.send", key = "'mail:' + #to", receiver = Receiver.NOT_IDEMPOTENT)
		public void mail(String to) {
			this.mailed.add(to);
		}

		@DurableEffect(name = "parcel.ship", key = "'ship:' + #parcel", receiver = Receiver.NOT_IDEMPOTENT)
		public void ship(String parcel) {
			this.shipped.add(parcel);
		}

		@EffectReconciler("parcel.ship")
		public ReconcileOutcome parcelLeft(String key) {
			return ReconcileOutcome.APPLIED;
		}

		@DurableEffect(name = "reminder.send")
		public void remind(String orderId) {
			this.reminded.add(orderId);
		}

		/** An effect that records another effect when it runs. */
		@DurableEffect(name = "ledger.write", key = "'ledger:' + #entry")
		public void ledger(String entry) {
			this.transactions.executeWithoutResult((status) -> this.audit.log(entry));
		}

		public void clear() {
			this.mailed.clear();
			this.shipped.clear();
			this.reminded.clear();
			this.audited.clear();
		}

	}

	/** Audits ledger entries. */
	@Component
	public static class Audit {

		private final List<String> logged = new CopyOnWriteArrayList<>();

		public List<String> logged() {
			return this.logged;
		}

		@DurableEffect(name = "audit.log", key = "'audit:' + #entry")
		public void log(String entry) {
			this.logged.add(entry);
		}

	}

}
