package io.ductor.reliability.modulith;

import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Component;

/** Stands for a call to another system: only its calls are recorded. */
@Component
class Mailer {

	private final CallLog calls;

	Mailer(CallLog calls) {
		this.calls = calls;
	}

	@ApplicationModuleListener
	public void on(OrderPlaced event) throws InterruptedException {
		this.calls.record("mailer", event);
		Thread.sleep(10 + event.seq() % 20);
	}

}
